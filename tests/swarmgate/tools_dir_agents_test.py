"""The commands swarmgate hands a Codex CLI or Gemini CLI agent name its tools so that they run pasted
(issue 22): those clients have no env file to put the tools' directory on the agents' PATH, so a tool
that does not resolve on the hook's PATH (the client's, which the agent's commands get) is named by
its absolute path (swarmgate/tools_dir.py: agent_command, for_agents). Claude Code's text is left as
it is. Through the real entry point (`swarmgate hook --client NAME EVENT`), a PATH without the tools."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from swarmgate import tools_dir
from tests.swarmgate.clients_dialects_test import codex_payload, gemini_payload
from tests.swarmgate.conftest import payload as claude_payload
from tests.swarmgate.conftest import run_hook

BIN = str(Path(sys.executable).parent)
NO_TOOLS = "/usr/bin:/bin"
HEAVY = "cargo test --workspace"


def _reason(client: str, repo, command: str, path: str = NO_TOOLS) -> str:
    """The refusal the agent reads for ``command`` ('' when the call is let through)."""
    if client == "codex":
        args, text = ["--client", "codex", "PreToolUse"], codex_payload(repo, tool_input={"command": command})
    elif client == "gemini":
        args, text = ["--client", "gemini", "BeforeTool"], gemini_payload(repo, tool_input={"command": command})
    else:
        args, text = ["PreToolUse"], claude_payload(repo, command=command)
    proc = run_hook(args, text, env={"PATH": path})
    assert proc.returncode == 0, proc.stderr
    ans = json.loads(proc.stdout)
    if client == "gemini":
        return ans.get("reason", "") if ans.get("decision") == "deny" else ""
    hso = ans.get("hookSpecificOutput") or {}
    return hso.get("permissionDecisionReason", "") if hso.get("permissionDecision") == "deny" else ""


def _way_out(reason: str) -> str:
    """B01's way-out as the agent pastes it: the code span of its `Way out:`, every <...> filled in."""
    m = re.search(r"\[B01\][^\n]*?Way out: [^`]*`([^`]+)`", reason)
    assert m, reason
    return re.sub(r"<[^>]*>", "the whole workspace suite", m.group(1))


def test_a_codex_agent_gets_the_runner_by_absolute_path_and_its_paste_is_let_through(repo):
    reason = _reason("codex", repo, HEAVY)
    pasted = _way_out(reason)
    program = shlex.split(pasted)[2]
    assert program == f"{BIN}/run-with-memory-cap", pasted
    assert Path(program).is_file() and shlex.split(pasted)[-3:] == ["cargo", "test", "--workspace"]
    assert _reason("codex", repo, pasted) == "", pasted   # the paste is not refused (B01, B02, B10)


def test_a_gemini_agent_gets_the_runner_by_absolute_path_and_its_paste_is_let_through(repo):
    reason = _reason("gemini", repo, HEAVY)
    pasted = _way_out(reason)
    assert shlex.split(pasted)[2] == f"{BIN}/run-with-memory-cap", pasted
    assert _reason("gemini", repo, pasted) == "", pasted


def test_claude_codes_text_is_unchanged(repo):
    reason = _reason("claude", repo, HEAVY)
    assert shlex.split(_way_out(reason))[2] == "run-with-memory-cap", reason
    assert BIN not in reason, reason


def test_a_tool_on_the_agents_path_stays_bare(repo):
    reason = _reason("codex", repo, HEAVY, path=f"{BIN}:{NO_TOOLS}")
    assert shlex.split(_way_out(reason))[2] == "run-with-memory-cap" and BIN not in reason, reason


def test_t01s_remind_goes_through_the_same_rule(repo):
    reason = _reason("codex", repo, "sleep 600; echo 'check the build'")
    assert f"`{BIN}/remind 600s 'check the build'`" in reason, reason
    bare = _reason("gemini", repo, "sleep 600; echo 'check the build'", path=f"{BIN}:{NO_TOOLS}")
    assert "`remind 600s 'check the build'`" in bare, bare


def test_only_commands_are_renamed_not_prose_paths_or_longer_names():
    text = ("swarmgate refused this: Timers go through the reminder command (remind). Remind yourself.\n"
            "see hooks/run-with-memory-cap.py, /opt/x/run-with-memory-cap, `swarmgate-tools`, the swarmgate hook.\n"
            "Way out: run `SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; reason=x y' run-with-memory-cap 8G "
            "-- make`; `swarmgate records verify t1`; remind list && work-dir-owner release /tmp/w")
    out = tools_dir.for_agents(text, NO_TOOLS)
    assert out.splitlines()[:2] == text.splitlines()[:2], out
    assert out.splitlines()[2] == (
        f"Way out: run `SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; reason=x y' {BIN}/run-with-memory-cap "
        f"8G -- make`; `{BIN}/swarmgate records verify t1`; {BIN}/remind list && {BIN}/work-dir-owner release /tmp/w")
    assert tools_dir.for_agents(out, NO_TOOLS) == out   # named once: an absolute path is left alone
    assert tools_dir.for_agents(text, f"{BIN}:{NO_TOOLS}") == text


def test_the_rules_a_codex_subagent_gets_at_its_start_name_the_tools_by_absolute_path(repo, tmp_path):
    subprocess.run([f"{BIN}/swarmgate", "install", str(repo), "--client", "codex"], check=True, capture_output=True,
                   env={"PATH": NO_TOOLS, "HOME": str(tmp_path / "home"), "SWARMGATE_STATE_DIR": str(tmp_path / "st")})
    start = codex_payload(repo, event="SubagentStart", agent_id="a1", agent_type="default")
    proc = run_hook(["--client", "codex", "SubagentStart"], start, env={"PATH": NO_TOOLS})
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"`{BIN}/run-with-memory-cap auto -- " in context and f"`{BIN}/work-dir-owner claim " in context, context
    assert not re.search(r"(?<![\w/.-])(run-with-memory-cap|work-dir-owner|remind) ", context), context


def test_remind_says_how_to_cancel_in_a_form_that_runs_on_the_agents_path(tmp_path):
    def cancel_line(path: str) -> str:
        out = subprocess.run([f"{BIN}/remind", "10m", "check the build", "--session", "names-test"], text=True,
                             capture_output=True, env={"PATH": path, "SWARMGATE_STATE_DIR": str(tmp_path)}).stdout
        return re.search(r"Cancel: `([^`]*) cancel ", out).group(1)

    assert cancel_line(NO_TOOLS) == f"{BIN}/remind"
    assert cancel_line(f"{BIN}:{NO_TOOLS}") == "remind"
