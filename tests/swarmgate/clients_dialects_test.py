"""Codex CLI and Gemini CLI dialects: their hook input judged as swarmgate's event, the answer in
their own shape, through the real entry point (`swarmgate hook --client NAME EVENT`).

Both clients let a call through on a crash, non-JSON output and a timeout, so besides the
decisions these check the shape each client honours: Codex accepts only the fields its parser
knows (anything else makes the answer invalid, and the call proceeds); Gemini honours only
`{"decision": "deny", "reason"}` or exit 2 with the reason on stderr and nothing on stdout.
The real binaries honour these answers in tests/e2e/client_contract_test.py.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from swarmgate import clients, codex_protocol, gemini_protocol
from swarmgate import guard as G
from swarmgate.hook_engine import answer as engine_answer

# the fields Codex 0.169.0's parser accepts per event (deny_unknown_fields in its output wire types)
CODEX_TOP = {"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason",
             "hookSpecificOutput"}
CODEX_HSO = {"PreToolUse": {"hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput",
                            "additionalContext"},
             "PostToolUse": {"hookEventName", "additionalContext", "updatedMCPToolOutput"},
             "SessionStart": {"hookEventName", "additionalContext"},
             "SubagentStart": {"hookEventName", "additionalContext"}}


def codex_payload(repo, tool="Bash", tool_input=None, event="PreToolUse", **extra) -> str:
    p = {"session_id": "codex-sess", "turn_id": "t1", "transcript_path": "/home/x/.codex/sessions/r.jsonl",
         "cwd": str(repo), "hook_event_name": event, "model": "m", "permission_mode": "bypassPermissions",
         "tool_name": tool, "tool_input": tool_input or {"command": "ls"}, "tool_use_id": "call_1", **extra}
    return json.dumps(p)


def gemini_payload(repo, tool="run_shell_command", tool_input=None, event="BeforeTool", **extra) -> str:
    p = {"session_id": "gem-sess", "transcript_path": "/home/x/.gemini/tmp/r/chats/s.jsonl", "cwd": str(repo),
         "hook_event_name": event, "timestamp": "2026-11-30T00:00:00Z", "tool_name": tool,
         "tool_input": tool_input or {"command": "ls"}, **extra}
    return json.dumps(p)


def codex_answer(proc) -> dict:
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    ans = json.loads(out)
    assert set(ans) <= CODEX_TOP, ans
    hso = ans.get("hookSpecificOutput")
    if hso is not None:
        assert set(hso) <= CODEX_HSO[hso["hookEventName"]], hso
    if hso and hso.get("permissionDecision"):
        assert hso["permissionDecision"] == "deny" and hso["permissionDecisionReason"].strip()
    return ans


def codex_deny(ans: dict) -> str:
    hso = ans["hookSpecificOutput"]
    assert hso["permissionDecision"] == "deny", ans
    return hso["permissionDecisionReason"]


def gemini_answer(proc) -> dict:
    assert proc.returncode == 0, proc.stderr
    ans = json.loads(proc.stdout.decode())
    assert "hookSpecificOutput" not in ans or "permissionDecision" not in ans["hookSpecificOutput"]
    return ans


def decisions(repo) -> list[dict]:
    path = repo / ".swarmgate" / "log" / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- Codex ---

def test_codex_subagent_heavy_command_is_refused_in_codexs_shape(hook, repo):
    proc = hook(["--client", "codex", "PreToolUse"],
                codex_payload(repo, tool_input={"command": "cargo test --workspace"}, agent_id="a1",
                              agent_type="default"), cwd=repo)
    reason = codex_deny(codex_answer(proc))
    assert "[B01]" in reason and "subagent `default`" in reason
    rec = decisions(repo)[-1]
    assert rec["client"] == "codex" and rec["agent_type"] == "default" and "B01" in rec["codes"]


def test_codex_benign_command_is_an_empty_answer(hook, repo):
    assert codex_answer(hook(["--client", "codex", "PreToolUse"], codex_payload(repo), cwd=repo)) == {}


def test_codex_apply_patch_is_judged_on_every_path_it_writes(hook, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text('[write]\ndefault = ["src/**"]\n')
    patch = ("*** Begin Patch\n*** Add File: src/ok.py\n+x = 1\n*** Update File: src/a.py\n*** Move to: docs/a.md\n"
             "@@\n-a\n+b\n*** End Patch\n")
    proc = hook(["--client", "codex", "PreToolUse"],
                codex_payload(repo, "apply_patch", {"command": patch}, agent_id="a1", agent_type="default"), cwd=repo)
    reason = codex_deny(codex_answer(proc))
    assert "[W01] apply_patch writes docs/a.md" in reason and "src/ok.py" not in reason
    rec = decisions(repo)[-1]
    assert rec["tool"] == "Edit" and rec["client_tool"] == "apply_patch"


def test_codex_apply_patch_inside_the_repo_is_allowed(hook, repo):
    patch = "*** Begin Patch\n*** Add File: src/ok.py\n+x = 1\n*** End Patch\n"
    assert codex_answer(hook(["--client", "codex", "PreToolUse"],
                             codex_payload(repo, "apply_patch", {"command": patch}), cwd=repo)) == {}


@pytest.mark.parametrize("target", [".codex/hooks.json", ".codex/config.toml", ".claude/swarmgate.toml"])
def test_codex_apply_patch_to_what_guards_it_is_g01(hook, repo, target):
    patch = f"*** Begin Patch\n*** Add File: {target}\n+{{}}\n*** End Patch\n"
    reason = codex_deny(codex_answer(hook(["--client", "codex", "PreToolUse"],
                                          codex_payload(repo, "apply_patch", {"command": patch}), cwd=repo)))
    assert "[G01] apply_patch to " + target in reason


def test_codex_user_config_is_protected(hook, repo, tmp_path):
    home = tmp_path / "codexhome"
    proc = hook(["--client", "codex", "PreToolUse"],
                codex_payload(repo, tool_input={"command": f"echo 'trust_level = 0' >> {home}/config.toml"}),
                cwd=repo, env={"CODEX_HOME": str(home)})
    assert "Codex CLI's user settings" in codex_deny(codex_answer(proc))


def test_codex_write_stdin_is_judged_as_a_command(hook, repo):
    proc = hook(["--client", "codex", "PreToolUse"],
                codex_payload(repo, "write_stdin", {"session_id": 3, "chars": "cargo test --workspace\n"},
                              agent_id="a1", agent_type="default"), cwd=repo)
    assert "[B01]" in codex_deny(codex_answer(proc))


@pytest.mark.parametrize("command, refused", [
    ("bash", True), ("bash -i", True), ("python3", True), ("env FOO=1 bash", True), ("xargs -n1 echo", True),
    ("python3 -i run.py", True), ("node", True),
    ("bash -lc 'ls'", False), ("bash ./x.sh", False), ("python3 x.py", False), ("python3 -m http.server", False),
    ("echo ls | bash", False), ("cat list | xargs -n1 echo", False), ("bash <<'EOF'\nls\nEOF", False), ("ls", False),
])
def test_codex_a_command_waiting_for_typed_input_is_refused(hook, repo, command, refused):
    """Codex's write_stdin (typing into a running command) reaches no hook: a shell or interpreter that
    waits for input is where a refused command would be typed next, so it is refused before it starts."""
    ans = codex_answer(hook(["--client", "codex", "PreToolUse"], codex_payload(repo, tool_input={"command": command}),
                            cwd=repo))
    if refused:
        reason = codex_deny(ans)
        assert "[B01]" in reason and "waits for input" in reason and "write_stdin" in reason
    else:
        assert "permissionDecision" not in json.dumps(ans), ans


def test_the_same_shell_passes_where_no_one_can_type_into_it(hook, answer, repo, make_payload):
    """Claude Code's and Gemini's shell tools give a command no stdin: a bare `bash` reads nothing there."""
    assert answer(hook(["PreToolUse"], make_payload(repo, command="bash"), cwd=repo)) == {}
    bare = gemini_payload(repo, tool_input={"command": "bash"})
    assert gemini_answer(hook(["--client", "gemini", "BeforeTool"], bare, cwd=repo)) == {}


def test_codex_ask_becomes_a_deny(repo):
    asking = G.Guard("Z99", "asks", ("PreToolUse",), ("Bash",), lambda e, c: G.Finding("Z99", "sure?", "", G.ASK),
                     G.GuardDoc("w", "e", "i"), {})
    assert "Z99" not in clients.COVERAGE["codex"]
    clients.COVERAGE["codex"]["Z99"] = (clients.FULL, "")
    try:
        out, code = engine_answer("PreToolUse", codex_payload(repo), registry=[asking], client="codex")
    finally:
        del clients.COVERAGE["codex"]["Z99"]
    reason = codex_deny(json.loads(out))
    assert code == 0 and "sure?" in reason and "cannot ask" in reason


def test_codex_sessionstart_context_and_stop_block(hook, repo):
    ans = codex_answer(hook(["--client", "codex", "SessionStart"],
                            json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart",
                                        "source": "startup", "transcript_path": None}), cwd=repo))
    assert ans["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "swarmgate" in ans["hookSpecificOutput"]["additionalContext"]
    ans = codex_answer(hook(["--client", "codex", "Stop"],
                            json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "Stop",
                                        "stop_hook_active": False}), cwd=repo))
    assert "decision" not in ans  # nothing to block here; Stop answers stay within Stop's fields


@pytest.mark.parametrize("stdin", ["{not json", "", "[]"])
def test_codex_bad_input_refuses_with_exit_2(hook, repo, stdin):
    proc = hook(["--client", "codex", "PreToolUse"], stdin, cwd=repo)
    assert proc.returncode == 2 and proc.stdout == b""
    assert "could not read the hook input" in proc.stderr.decode()


@pytest.mark.parametrize("client, event", [("codex", "PreToolUse"), ("gemini", "BeforeTool")])
def test_a_bad_config_refuses_with_exit_2_and_is_logged(hook, repo, client, event):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = 'many'\n")
    payload = codex_payload(repo) if client == "codex" else gemini_payload(repo)
    proc = hook(["--client", client, event], payload, cwd=repo)
    assert proc.returncode == 2 and proc.stdout == b""
    assert "swarmgate config error" in proc.stderr.decode() and "heavy_default" in proc.stderr.decode()
    rec = decisions(repo)[-1]
    assert rec["client"] == client and rec["decision"] == "deny"


def test_codex_transcript_is_not_taken_for_a_claude_transcript(repo):
    ev = codex_protocol.parse_payload("SubagentStop", json.dumps(
        {"session_id": "s", "cwd": str(repo), "transcript_path": "/r.jsonl", "agent_transcript_path": "/a.jsonl",
         "agent_id": "a", "agent_type": "default"}), str(repo))
    assert ev.transcript_path == "" and ev.payload["agent_transcript_path"] == ""
    assert ev.payload["client_transcript_path"] == "/r.jsonl" and ev.client == "codex"


def test_patch_paths_is_as_lenient_as_codex():
    text = ("<<'EOF'\n*** Begin Patch\n  *** Add File: a b.txt  \n+x\n*** Delete File: /abs/c\n"
            "*** Update File: d\n*** Move to: e\n@@\n-x\n+y\n*** Update File: d\n*** End Patch\nEOF\n")
    assert codex_protocol.patch_paths(text) == ["a b.txt", "/abs/c", "d", "e"]
    assert codex_protocol.patch_paths("no patch here") == []


# --- Gemini ---

def test_gemini_deny_is_decision_deny_never_claude_shaped(hook, repo):
    proc = hook(["--client", "gemini", "BeforeTool"],
                gemini_payload(repo, tool_input={"command": "cargo test --workspace"}), cwd=repo)
    ans = gemini_answer(proc)
    assert ans["decision"] == "deny" and "[B01]" in ans["reason"] and "not prefixed" in ans["reason"]
    rec = decisions(repo)[-1]
    assert rec["client"] == "gemini" and rec["client_tool"] == "run_shell_command" and rec["agent_type"] is None
    assert any(x.startswith("B01 in part: Gemini CLI sends no agent identity") for x in rec["limits"])


def test_gemini_write_file_and_replace_are_file_tools(hook, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text('[write]\nmain = ["src/**"]\n')
    ans = gemini_answer(hook(["--client", "gemini", "BeforeTool"],
                             gemini_payload(repo, "write_file", {"file_path": "docs/x.md", "content": "x"}), cwd=repo))
    assert ans["decision"] == "deny" and "[W01] write_file writes docs/x.md" in ans["reason"]
    ans = gemini_answer(hook(["--client", "gemini", "BeforeTool"],
                             gemini_payload(repo, "replace", {"file_path": ".gemini/settings.json", "old_string": "a",
                                                              "new_string": "b"}), cwd=repo))
    assert "[G01] replace to .gemini/settings.json" in ans["reason"]
    assert gemini_answer(hook(["--client", "gemini", "BeforeTool"],
                              gemini_payload(repo, "write_file", {"file_path": "src/x.py", "content": "x"}),
                              cwd=repo)) == {}


def test_gemini_dir_path_places_relative_writes(hook, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text('[write]\nmain = ["src/**"]\n')
    (repo / "src").mkdir()
    ok = gemini_payload(repo, tool_input={"command": "echo x > out.txt", "dir_path": "src"})
    assert gemini_answer(hook(["--client", "gemini", "BeforeTool"], ok, cwd=repo)) == {}
    bad = gemini_payload(repo, tool_input={"command": "echo x > out.txt"})
    assert "[W01]" in gemini_answer(hook(["--client", "gemini", "BeforeTool"], bad, cwd=repo))["reason"]


def test_gemini_host_report_goes_to_the_person(hook, repo):
    ans = gemini_answer(hook(["--client", "gemini", "BeforeTool"], gemini_payload(
        repo, tool_input={"command": "SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; target=all; "
                                     "range=all; reason=commit gate run now' run-with-memory-cap 2G -- "
                                     "cargo test --workspace"}), cwd=repo))
    assert "decision" not in ans and "[R01]" not in ans.get("reason", "")
    assert "host resources" in ans["systemMessage"]


@pytest.mark.parametrize("stdin", ["{not json", ""])
def test_gemini_bad_input_refuses_with_exit_2_and_nothing_on_stdout(hook, repo, stdin):
    proc = hook(["--client", "gemini", "BeforeTool"], stdin, cwd=repo)
    assert proc.returncode == 2 and proc.stdout == b""
    assert "could not read the hook input" in proc.stderr.decode()


def test_gemini_sessionstart_and_aftertool_context(hook, repo):
    ans = gemini_answer(hook(["--client", "gemini", "SessionStart"],
                             json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart",
                                         "source": "startup"}), cwd=repo))
    assert "swarmgate" in ans["hookSpecificOutput"]["additionalContext"]
    ans = gemini_answer(hook(["--client", "gemini", "AfterTool"], gemini_payload(
        repo, event="AfterTool", tool_response={"llmContent": "Output: hi\nExit Code: 0", "returnDisplay": "hi"}),
        cwd=repo))
    assert "decision" not in ans


def test_gemini_unknown_event_is_a_message(hook, repo):
    proc = hook(["--client", "gemini", "BeforeModel"], gemini_payload(repo, event="BeforeModel"), cwd=repo)
    ans = gemini_answer(proc)
    assert "unknown hook event 'BeforeModel' for gemini" in ans["systemMessage"]


def test_gemini_translate_keeps_no_claude_transcript(repo):
    ev = gemini_protocol.parse_payload("PreToolUse", gemini_payload(repo), str(repo))
    assert ev.transcript_path == "" and ev.client == "gemini" and not ev.is_subagent


# --- the entry point itself cannot judge ---

@pytest.mark.parametrize("client, event, code", [("codex", "PreToolUse", 2), ("gemini", "BeforeTool", 2),
                                                  ("claude", "PreToolUse", 0), ("codex", "Stop", 0)])
def test_hook_engine_that_cannot_load_refuses_in_the_clients_shape(tmp_path, repo, client, event, code):
    script = ("import sys, builtins\nreal = builtins.__import__\n"
              "def imp(name, *a, **k):\n"
              "    if name == 'swarmgate.hook_engine': raise ImportError('broken checkout')\n"
              "    return real(name, *a, **k)\n"
              "builtins.__import__ = imp\nfrom swarmgate.cli import main\n"
              f"sys.exit(main(['hook', '--client', '{client}', '{event}']))\n")
    proc = subprocess.run([sys.executable, "-c", script], input=b"{}", capture_output=True, cwd=repo, timeout=60)
    assert proc.returncode == code, proc
    assert "cannot be loaded" in proc.stderr.decode()
    if code == 2:
        assert proc.stdout == b""
    elif event == "PreToolUse":
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_unknown_client_refuses(hook, repo):
    proc = hook(["--client", "copilot", "PreToolUse"], "{}", cwd=repo)
    assert proc.returncode == 0 and "expected exactly one EVENT" in proc.stderr.decode()
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_gemini_read_file_and_grep_search_are_judged_as_read_and_grep(hook, repo):
    """K01 under Gemini: read_file and grep_search map onto Read and Grep; the main agent's ask
    becomes a refusal there (Gemini cannot ask a person from a hook)."""
    (repo / ".env").write_text("TOKEN=x\n")
    ans = gemini_answer(hook(["--client", "gemini", "BeforeTool"],
                             gemini_payload(repo, "read_file", {"file_path": str(repo / ".env")}), cwd=repo))
    assert ans["decision"] == "deny" and "[K01]" in ans["reason"] and "cannot ask a person" in ans["reason"]
    ans = gemini_answer(hook(["--client", "gemini", "BeforeTool"],
                             gemini_payload(repo, "grep_search", {"pattern": "TOKEN", "dir_path": str(repo),
                                                                  "include_pattern": ".env"}), cwd=repo))
    assert ans["decision"] == "deny" and "[K01]" in ans["reason"]
    (repo / "README.md").write_text("x\n")
    assert gemini_answer(hook(["--client", "gemini", "BeforeTool"],
                              gemini_payload(repo, "read_file", {"file_path": str(repo / "README.md")}),
                              cwd=repo)) == {}
