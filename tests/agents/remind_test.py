"""`remind` (the one timer), its delivery at a tool call (C05) and the wake waiter's choices, with
real processes standing for the Claude Code process (its command line tells the session's mode)."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from swarmgate.agents import reminders as R
from swarmgate.agents import remind, wake
from swarmgate.alerts import unread, write_alert
from swarmgate.hook_engine import answer as engine_answer


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CLAUDE_PROJECT_DIR", "SWARMGATE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def client(monkeypatch):
    """A process standing for the Claude Code process of a session, started with ``argv``."""
    procs = []

    def start(*argv: str):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *argv])
        procs.append(p)
        deadline = time.monotonic() + 10
        while not R._cmdline(p.pid) and time.monotonic() < deadline:   # just started: its exec may not show yet
            time.sleep(0.01)
        monkeypatch.setenv("CLAUDE_PID", str(p.pid))
        return p
    yield start
    for p in procs:
        p.kill()
        p.wait()
        assert p.returncode is not None


@pytest.mark.parametrize("text, delay", [("90", 90), ("30s", 30), ("10m", 600), ("1h30m", 5400), ("2d", 172800)])
def test_when_delays(text, delay):
    assert R.parse_when(text, now=1000.0) == 1000.0 + delay


@pytest.mark.parametrize("text", ["", "10x", "5m3", "0s", "8d", "25:00", "abc"])
def test_when_refuses_what_it_cannot_read(text):
    with pytest.raises(R.ReminderError):
        R.parse_when(text)


def test_a_clock_time_is_today_or_tomorrow():
    now = time.mktime((2026, 12, 1, 10, 0, 0, 0, 0, -1))
    assert R.parse_when("14:30", now) - now == 4.5 * 3600
    assert R.parse_when("09:00", now) - now == 23 * 3600


def test_usage_errors_are_251_with_one_line(capsys, monkeypatch):
    assert remind.main(["10m", "x"]) == 251   # no session
    assert "no agent session" in capsys.readouterr().err
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s1")
    for argv in (["10x", "msg"], ["10m"], ["cancel", "rnope"], ["cancel"]):
        assert remind.main(argv) == 251, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("remind"), err


def test_set_list_cancel(capsys, monkeypatch, client):
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s1")
    client("-p", "--input-format", "stream-json")
    assert remind.main(["10m", "check", "the", "build"]) == 0
    out = capsys.readouterr().out
    rid = out.split()[1]
    assert "'check the build'" in out and "while that input stays open" in out and f"remind cancel {rid}" in out
    assert remind.main(["list"]) == 0 and rid in capsys.readouterr().out
    assert remind.main(["cancel", rid]) == 0 and "cancelled" in capsys.readouterr().out
    (rec,) = R.load("s1")
    assert rec["state"] == "cancelled"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s2")
    assert remind.main(["list", "--json"]) == 0 and json.loads(capsys.readouterr().out) == []
    assert remind.main(["list", "--all", "--json"]) == 0 and len(json.loads(capsys.readouterr().out)) == 1


def test_modes_are_read_from_the_client_process(client):
    assert R.wake_mode(None) == "unknown"
    client("-p", "go")
    assert R.wake_mode() == "print"
    client("-p", "--input-format", "stream-json", "--verbose")
    assert R.wake_mode() == "stream"
    client("--model", "opus")
    assert R.wake_mode() == "interactive"


def test_the_waiter_never_waits_in_print_mode_and_wakes_on_a_due_reminder(client, capsys):
    R.add("s1", "check the build", time.time() + 0.5)
    client("-p", "go")
    t0 = time.monotonic()
    assert wake.main(json.dumps({"session_id": "s1", "hook_event_name": "Stop"})) == 0
    assert time.monotonic() - t0 < 2
    client("-p", "--input-format", "stream-json")
    assert wake.main(json.dumps({"session_id": "s1", "hook_event_name": "Stop"})) == 2
    assert "swarmgate woke you" in capsys.readouterr().err
    assert R.load("s1")[0]["state"] == "delivered"
    # nothing pending, no watchdog: it does not wait (a closed stream-json session would wait for it)
    t0 = time.monotonic()
    assert wake.main(json.dumps({"session_id": "s1", "hook_event_name": "Stop"})) == 0
    assert time.monotonic() - t0 < 2


def _answer(event, payload, repo, session="s1"):
    full = {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": event, **payload}
    out, code = engine_answer(event, json.dumps(full))
    assert code == 0
    return json.loads(out)


def test_c05_delivers_at_the_next_tool_call_and_a_subagents_reminder_is_its_own(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    call = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}}
    R.add("s1", "main's reminder", time.time() - 1)
    sub = {"agent_id": "ag1", "agent_type": "implementer"}
    _answer("SubagentStart", sub, repo)   # running: its reminders are its own
    R.add("s1", "sub's reminder", time.time() + 0.5)
    # the subagent's `remind` call: its PostToolUse makes the reminder it just set its own
    _answer("PostToolUse", {**sub, "tool_name": "Bash", "tool_input": {"command": "remind 1s \"sub's reminder\""},
                            "tool_response": {"stdout": "set"}, "duration_ms": 300}, repo)
    assert {r["message"]: r["agent"] for r in R.load("s1")} == {"main's reminder": None, "sub's reminder": "ag1"}
    time.sleep(0.6)
    ctx = _answer("PostToolUse", call, repo)["hookSpecificOutput"]["additionalContext"]
    assert "main's reminder" in ctx and "sub's reminder" not in ctx
    ctx = _answer("PostToolUse", {**call, **sub}, repo)["hookSpecificOutput"]["additionalContext"]
    assert "sub's reminder" in ctx
    assert [r["state"] for r in R.load("s1")] == ["delivered", "delivered"]
    again = _answer("PostToolUse", call, repo).get("hookSpecificOutput", {}).get("additionalContext", "")
    assert "reminder" not in again   # once
    # a subagent's reminder due after it handed back goes to the main agent
    R.add("s1", "late one", time.time() + 0.3, agent="ag1")
    _answer("SubagentStop", {**sub, "last_assistant_message": "done", "stop_hook_active": False,
                             "agent_transcript_path": ""}, repo)
    time.sleep(0.4)
    assert "late one" in _answer("PostToolUse", call, repo)["hookSpecificOutput"]["additionalContext"]


def test_a_watchdog_report_wakes_and_older_alerts_ride_along(capsys):
    write_alert("gate:note", "an older alert C04 has not shown", source="gate", session="s1", key="a")
    write_alert("gate:note", "another session's", source="gate", session="s2", key="b")
    assert wake.pending_text("s1", time.time())[0] == ""   # no watchdog report: nothing wakes
    write_alert("watch:tool-call-running", "Bash `cargo build` has run for 9 min", source="swarm-watch",
                session="s1", key="c")
    assert wake.wait("s1", None, time.time() + 2) == 2
    said = capsys.readouterr().err
    assert "swarm-watch (tool-call-running): Bash `cargo build`" in said and "an older alert" in said, said
    assert "another session's" not in said
    assert [a for a in unread("main:s1", mark=False) if a.get("session") == "s1"] == []   # read: C04 stays quiet
