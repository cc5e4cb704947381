"""C01 SessionStart report and P01 command history."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

from swarmgate.alerts import write_alert
from swarmgate.config import load_config
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks.command_history import _SHA_3_PASSED, entry, exit_code_of
from swarmgate.hooks.session_context import build, mark_alerts_read
from swarmgate.state_paths import command_history_path
from swarmgate.statefile import read_jsonl
from tests import builders
from tests.hooks.conftest import FIXTURES, answer, context, dispatch, git, hook

RECORD = ("# Round r3\n\ngoal: wire the hooks\nexit: e2e passes\n\n## Tasks\n\n"
          "| id | description | deps | inputs ready | batch | verdict |\n"
          "|----|-------------|------|--------------|-------|---------|\n"
          "| t1 | parser | - | yes | 1 | close |\n"
          "| t2 | hook entry | t1 | yes | 2 | |\n")


def test_session_start_after_compact_says_what_was_going_on(committed, tmp_path):
    repo = committed

    (repo / "records").mkdir()
    (repo / "records" / "r3.md").write_text(RECORD)
    git(repo, "add", "records/r3.md")
    git(repo, "commit", "-qm", "record")
    (repo / "README.md").write_text("changed\n")
    (repo / "notes.txt").write_text("new\n")
    answer("PreToolUse", dispatch(name="parser"), repo)
    answer("SubagentStart", {"agent_id": "a1", "agent_type": "implementer"}, repo)
    answer("SubagentStart", {"agent_id": "a2", "agent_type": "researcher"}, repo)
    answer("SubagentStop", {"agent_id": "a2", "agent_type": "researcher", "last_assistant_message": "x",
                            "stop_hook_active": False, "agent_transcript_path": ""}, repo)
    write_alert("runner", "run 12 hit its own cap 8G (exit 250)", source="run-with-memory-cap")
    write_alert("transcript-audit", "another session's alert", source="H02", session="other")

    ev = HookEvent("SessionStart", {"session_id": "s1", "cwd": str(repo), "source": "compact"}, str(repo))
    kernel = (FIXTURES / "journalctl_k_iso.txt").read_text()
    now = datetime(2026, 11, 29, 4, 0, 0, tzinfo=UTC).timestamp()
    with mock.patch.object(time, "time", return_value=now):
        text = build(ev, load_config(str(repo)), kernel_text=kernel, kernel_source="journalctl -k")
    print(text)
    sections = dict(part.split("\n", 1) for part in text.split("\n\n## ")[1:])
    running = sections["Subagents of this session still running"]
    assert "a1 implementer \"parser\"" in running and "a2" not in running
    git_s = sections["Uncommitted changes in the worktree"]
    assert "M README.md" in git_s and "?? notes.txt" in git_s
    rec = sections["Scheduling record of the current round"]
    assert "records/r3.md (round r3)" in rec and "t2 hook entry" in rec and "t1 parser" not in rec
    alerts = sections["Alerts since you last looked"]
    assert "run 12 hit its own cap" in alerts and "another session" not in alerts
    oom = sections["Processes the kernel killed for memory in the last 12 h"]
    assert "whole machine ran out of memory 1 time(s)" in oom and "cgroup limit" in oom
    assert "Upstream rules copy" not in sections  # no copy in this repo
    # judging marks nothing read; the act (the session start has happened) marks what it showed
    with mock.patch.object(time, "time", return_value=now):
        unmarked = build(HookEvent("SessionStart", dict(ev.payload), str(repo)), load_config(str(repo)),
                         kernel_text="", kernel_source="dmesg")
    assert "run 12 hit its own cap" in unmarked
    mark_alerts_read(ev, load_config(str(repo)))
    with mock.patch.object(time, "time", return_value=now):
        again = build(HookEvent("SessionStart", dict(ev.payload), str(repo)), load_config(str(repo)),
                      kernel_text="", kernel_source="dmesg")
    assert "## Alerts since you last looked\nnone" in again


def test_session_start_red_line_when_rules_stamp_differs(committed):
    repo = committed
    (repo / ".claude" / "sop").mkdir()
    (repo / ".claude" / "sop" / "VERSION").write_text("1.4.0\n")
    (repo / ".claude" / "sop-version").write_text("1.3.2\n")
    text = context(answer("SessionStart", {"source": "startup"}, repo))
    assert "## Upstream rules copy\nRED: rules changed: read them before you run" in text
    (repo / ".claude" / "sop-version").write_text("1.4.0\n")
    text = context(answer("SessionStart", {"source": "resume"}, repo))
    assert "stamp matches" in text and "RED: rules changed" not in text


def test_session_start_through_the_real_entry_point(committed):
    ans = hook("SessionStart", {"source": "compact"}, committed)
    text = ans["hookSpecificOutput"]["additionalContext"]
    for head in ("Subagents of this session still running\nnone", "Uncommitted changes in the worktree",
                 "Scheduling record of the current round\nnone in records/",
                 "Alerts since you last looked", "Processes the kernel killed for memory in the last 12 h"):
        assert "## " + head in text, head


def test_session_start_outside_git(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    text = context(answer("SessionStart", {"source": "clear"}, d))
    assert "(not a git worktree" in text


# --- P01 ---------------------------------------------------------------------------

def bash_post(cmd, stdout, agent=False, duration=900):
    p = {"tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t", "duration_ms": duration,
         "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False}}
    if agent:
        p.update(agent_id="a1", agent_type="implementer")
    return p


def test_p01_history_records_and_third_identical_run_is_flagged(repo):
    for _ in range(2):
        assert "P01" not in context(answer("PostToolUse", bash_post("pytest  -q  tests", "3 passed"), repo))
    text = context(answer("PostToolUse", bash_post("pytest -q tests", "3 passed"), repo))
    assert "[P01]" in text and "3 times in a row" in text
    recs = list(read_jsonl(command_history_path()))
    assert len(recs) == 3
    r = recs[-1]
    assert r["command"] == "pytest -q tests" and r["duration_ms"] == 900 and r["output_bytes"] == 8
    assert r["session"] == "s1" and r["exit_code"] == 0 and len(r["output_sha"]) == 16
    # not at the 4th and 5th again, but at the 6th
    assert "P01" not in context(answer("PostToolUse", bash_post("pytest -q tests", "3 passed"), repo))
    assert "P01" not in context(answer("PostToolUse", bash_post("pytest -q tests", "3 passed"), repo))
    assert "6 times" in context(answer("PostToolUse", bash_post("pytest -q tests", "3 passed"), repo))
    # a changed output resets the count; another session's runs never count
    assert "P01" not in context(answer("PostToolUse", bash_post("pytest -q tests", "2 passed"), repo))
    for _ in range(2):
        assert "P01" not in context(answer("PostToolUse", bash_post("make", "ok"), repo, session="s2"))
    assert "P01" not in context(answer("PostToolUse", bash_post("make", "ok"), repo))


def test_p01_subagent_and_monitor(repo):
    for _ in range(3):
        ans = answer("PostToolUse", bash_post("cat status", "waiting", agent=True), repo)
    assert "[P01]" in context(ans)
    mon = {"tool_name": "Monitor", "tool_input": {"command": "tail -f log", "timeout_ms": 1000},
           "tool_response": "line", "duration_ms": 5}
    answer("PostToolUse", mon, repo)
    assert list(read_jsonl(command_history_path()))[-1]["tool"] == "Monitor"


def test_p01_exit_code_when_claude_code_gives_one():
    assert exit_code_of({"stdout": "", "exitCode": 3}) == 3
    assert exit_code_of({"stdout": "", "stderr": "Exit code 2\nboom"}) == 2
    assert exit_code_of({"stdout": "fine", "stderr": ""}) is None


def test_p01_case_digest_matches_entry(repo):
    ev = HookEvent("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "x"},
                                   "tool_response": {"stdout": "3 passed\n", "stderr": ""}}, str(repo))
    assert entry(ev, 0.0)["output_sha"] == _SHA_3_PASSED


def test_p01_failed_runs_come_as_post_tool_use_failure(repo):
    fail = {"tool_name": "Bash", "tool_input": {"command": "make check"}, "tool_use_id": "t", "duration_ms": 40,
            "error": "Exit code 2\nmake: *** [check] Error 1", "is_interrupt": False}
    for _ in range(2):
        assert "P01" not in context(answer("PostToolUseFailure", fail, repo))
    text = context(answer("PostToolUseFailure", fail, repo))
    assert "[P01]" in text and "`make check` has now run 3 times" in text
    r = list(read_jsonl(command_history_path()))[-1]
    assert r["failed"] is True and r["exit_code"] == 2 and r["duration_ms"] == 40


MAIN_RULES_LINE = "Every task enters here. You schedule and judge: you talk to people, write"


def _plugin_session_start(repo, env: dict) -> str:
    """SessionStart through the plugin's own launcher (plugin/bin/swarmgate-hook), this checkout's
    swarmgate first on PATH: the additionalContext the main agent gets."""
    launcher = Path(__file__).resolve().parents[2] / "plugin" / "bin" / "swarmgate-hook"
    payload = builders.payload("SessionStart", repo=repo, session="s1", source="startup")
    p = subprocess.run([str(launcher), "SessionStart"], input=json.dumps(payload), capture_output=True, text=True,
                       cwd=repo, timeout=60, env={**os.environ, **env,
                                                  "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    return context(json.loads(p.stdout))


def test_the_plugin_gives_the_main_agent_its_rules_at_session_start(repo):
    """A plugin cannot edit CLAUDE.md: its SessionStart context carries the plugin's main-agent.md."""
    text = _plugin_session_start(repo, {"CLAUDE_PROJECT_DIR": str(repo)})
    assert MAIN_RULES_LINE in text, text[:2000]
    assert text.index(MAIN_RULES_LINE) < text.index("swarmgate session start")


def test_the_plugin_leaves_the_rules_to_claude_md_when_it_imports_them(repo):
    (repo / "CLAUDE.md").write_text("# project\n\n@.claude/main-agent.md\n")
    text = _plugin_session_start(repo, {"CLAUDE_PROJECT_DIR": str(repo)})
    assert "swarmgate session start" in text and MAIN_RULES_LINE not in text


def test_the_settings_hook_gives_no_plugin_rules(repo):
    assert MAIN_RULES_LINE not in context(hook("SessionStart", {"source": "startup"}, repo))
