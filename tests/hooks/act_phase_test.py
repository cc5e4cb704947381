"""The act phase (swarmgate/guard.py) on the real guards: side effects happen only when the
combined decision lets the call go ahead, and an act that re-checks under its lock refuses late
when the world changed between judge and act.

A refusal by a guard outside the dispatch family (here a test guard added to the real
registry) must leave no trace: D07 records no dispatch, D16 takes no lock, P01 appends no
history line, C04 marks no alert read. A parallel hook process is played by a test guard whose
check runs after the dispatch guards' checks and before their act: it takes the directory or
the last slot, exactly what a second `swarmgate hook` process could do in that window.
"""
from __future__ import annotations

import json
import os

from swarmgate import guard as G
from swarmgate.agents.swarm_watch import instance_path
from swarmgate.alerts import unread, write_alert
from swarmgate.hook_engine import answer as engine_answer
from swarmgate.hooks import registry, scratch_locks
from swarmgate.hooks import session_state as S
from swarmgate.state_paths import command_history_path
from tests.hooks.conftest import GOOD, denied, dispatch


def _guard(code: str, events: tuple, tools: tuple, check) -> G.Guard:
    return G.Guard(code=code, summary=f"test guard {code}", events=events, tools=tools, check=check,
                   doc=G.GuardDoc("why", "example", "instead"), breaks={})


def _refuser(events=("PreToolUse",), tools=("Agent", "Task")) -> G.Guard:
    return _guard("X99", events, tools, lambda e, c: G.Finding("X99", "refused by a test guard", "none"))


def _answer(event: str, payload: dict, repo, extra: list, session: str = "s1") -> dict:
    """The engine's answer with the real registry plus ``extra`` guards (after the real ones)."""
    full = {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": event}
    full.update(payload)
    out, code = engine_answer(event, json.dumps(full), registry=[*registry.guards(), *extra])
    assert code == 0
    return json.loads(out)


def _dispatches(session: str = "s1") -> list:
    return [d["id"] for d in S.load(session)["dispatches"]]


def _locks() -> list:
    return [(r["session"], r["dispatch"]) for r in scratch_locks.held()]


# --- a refusal by another guard leaves nothing behind ---------------------------------------

def test_dispatch_refused_by_another_guard_records_nothing_and_locks_nothing(repo, tmp_path):
    prompt = GOOD + f"scratch: {tmp_path / 'build'}\n"
    reason = denied(_answer("PreToolUse", dispatch(prompt, tool_use_id="t1"), repo, [_refuser()]))
    assert "[X99]" in reason and "[D07]" not in reason and "[D16]" not in reason
    assert _dispatches() == [] and _locks() == []
    # the same dispatch without the refusing guard: recorded and locked (the act does run)
    assert denied(_answer("PreToolUse", dispatch(prompt, tool_use_id="t2"), repo, [])) == ""
    assert _dispatches() == ["t2"] and _locks() == [("s1", "t2")]


def test_refused_dispatches_never_count_against_d07(repo):
    for i in range(8):
        assert denied(_answer("PreToolUse", dispatch(tool_use_id=f"r{i}"), repo, [_refuser()]))
    assert _dispatches() == []
    assert denied(_answer("PreToolUse", dispatch(tool_use_id="ok"), repo, [])) == ""


def _bash_post(command: str = "pytest -q tests/unit") -> dict:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_p",
            "duration_ms": 10, "tool_response": {"stdout": "3 passed\n", "stderr": "", "interrupted": False}}


def _history() -> list:
    p = command_history_path()
    return [json.loads(x) for x in open(p).read().splitlines()] if os.path.exists(p) else []


def test_p01_writes_no_history_when_the_call_is_refused(repo):
    ans = _answer("PostToolUse", _bash_post(), repo, [_refuser(("PostToolUse",), ("Bash",))])
    assert ans.get("decision") == "block"
    assert _history() == []
    _answer("PostToolUse", _bash_post(), repo, [])
    assert [h["command"] for h in _history()] == ["pytest -q tests/unit"]


def test_c04_marks_nothing_read_when_the_call_is_refused(repo):
    write_alert("runner", "run 7 hit its cap", source="run-with-memory-cap", session="s1")
    refused = _answer("PostToolUse", _bash_post("ls"), repo, [_refuser(("PostToolUse",), ("Bash",))])
    assert "run 7 hit its cap" in refused["hookSpecificOutput"]["additionalContext"]
    assert [a["message"] for a in unread("main:s1", mark=False)] == ["run 7 hit its cap"]
    shown = _answer("PostToolUse", _bash_post("ls"), repo, [])
    assert "run 7 hit its cap" in shown["hookSpecificOutput"]["additionalContext"]
    assert unread("main:s1", mark=False) == []
    again = _answer("PostToolUse", _bash_post("ls"), repo, [])
    assert "run 7" not in json.dumps(again)


def test_a01_starts_no_watchdog_when_the_call_is_refused(repo):
    post = {"tool_name": "Agent", "tool_input": {"subagent_type": "clerk", "prompt": "x"},
            "tool_response": {"status": "completed"}}
    ans = _answer("PostToolUse", post, repo, [_refuser(("PostToolUse",), ("Agent",))])
    assert ans.get("decision") == "block"
    assert "[A01] no swarm-watch runs" in ans["hookSpecificOutput"]["additionalContext"]
    assert not os.path.exists(instance_path("s1"))


# --- late refusals: the world changed between judge and act ----------------------------------

def test_d16_late_refusal_when_another_dispatch_took_the_directory(repo, tmp_path):
    scratch = str(tmp_path / "build")

    def parallel_dispatch(event, config):
        # a second hook process, between this call's judgement and its act
        owner = {"session": "s2", "dispatch": "toolu_other", "name": "other", "type": "implementer",
                 **{k: v for k, v in S.session_process().items() if k in ("pid", "start")}}
        scratch_locks.acquire([scratch], owner, "/", 600.0)
        return None

    racer = _guard("X98", ("PreToolUse",), ("Agent",), parallel_dispatch)
    reason = denied(_answer("PreToolUse", dispatch(GOOD + f"scratch: {scratch}\n", tool_use_id="mine"), repo,
                            [racer]))
    assert "[D16]" in reason and "session s2" in reason
    assert _locks() == [("s2", "toolu_other")]     # the winner's lock stands, none of ours
    assert _dispatches() == []                      # a late refusal records nothing


def test_d07_late_refusal_when_parallel_dispatches_took_the_last_slot(repo):
    def five_parallel_dispatches(event, config):
        def step(st):
            proc = S.session_process()
            for i in range(5):
                S.record_dispatch(st, tool_use_id=f"par{i}", agent_type="implementer", name=None, proc=proc,
                                  now=__import__("time").time(), background=True, scratch=[], prompt_digest="")
        if not S.load("s1")["dispatches"]:
            S.update("s1", step)
        return None

    racer = _guard("X98", ("PreToolUse",), ("Agent",), five_parallel_dispatches)
    reason = denied(_answer("PreToolUse", dispatch(tool_use_id="mine"), repo, [racer]))
    assert "[D07]" in reason and "5 subagents are already running" in reason
    assert _dispatches() == [f"par{i}" for i in range(5)]


def test_d07_warn_mode_records_even_when_the_slot_was_taken(repo):
    """A late D07 finding in warn mode does not refuse: the dispatch is recorded and told."""
    (repo / ".claude" / "swarmgate.toml").write_text('[guards]\nD07 = "warn"\n')

    def five(event, config):
        if not S.load("s1")["dispatches"]:
            S.update("s1", lambda st: [S.record_dispatch(
                st, tool_use_id=f"par{i}", agent_type="implementer", name=None, proc=S.session_process(),
                now=__import__("time").time(), background=True, scratch=[], prompt_digest="") for i in range(5)])
        return None

    ans = _answer("PreToolUse", dispatch(tool_use_id="mine"), repo, [_guard("X98", ("PreToolUse",), ("Agent",), five)])
    assert denied(ans) == ""
    assert "(warn only)" in ans["hookSpecificOutput"]["additionalContext"]
    assert "mine" in _dispatches()


def test_h01_refused_hand_back_records_no_stop_and_keeps_the_locks(repo, tmp_path):
    scratch = tmp_path / "left"
    assert denied(_answer("PreToolUse", dispatch(GOOD + f"scratch: {scratch}\n", tool_use_id="d1"), repo, [])) == ""
    _answer("SubagentStart", {"agent_id": "ag1", "agent_type": "implementer"}, repo, [])
    scratch.mkdir()
    stop = {"agent_id": "ag1", "agent_type": "implementer", "last_assistant_message": "done",
            "stop_hook_active": False, "agent_transcript_path": ""}
    ans = _answer("SubagentStop", stop, repo, [])
    assert ans.get("decision") == "block" and "[H01]" in ans["reason"]
    assert S.load("s1")["agents"]["ag1"]["stopped"] is None and _locks() == [("s1", "d1")]
    # a stop hook continued it: the stop goes through, is recorded, the lock released
    ans = _answer("SubagentStop", dict(stop, stop_hook_active=True), repo, [])
    assert "decision" not in ans and "scratch locks released" in ans["systemMessage"]
    assert S.load("s1")["agents"]["ag1"]["stopped"] and _locks() == []
