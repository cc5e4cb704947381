"""D07 across sessions through the real client: two `claude -p` sessions on one repository, each
dispatching three background subagents that keep running; with [dispatch] max_concurrent_repo = 5
the sixth is refused, naming the other session's agents. Then `swarmgate status` marks what is
whose."""
from __future__ import annotations

import json
import threading
import time

import pytest

from messages_api import Conversation, Request, done, tools

pytestmark = pytest.mark.e2e

HEAVY_LINE = "heavy test: do not run"


def _agent(marker: str) -> tuple[str, dict]:
    return ("Agent", {"description": "a long task", "prompt": f"{marker}\n{HEAVY_LINE}", "subagent_type": "implementer",
                      "run_in_background": True})


def _holding(release: threading.Event):
    """A subagent's first turn: keep it running (its request unanswered) until the test releases it."""
    def turn(req: Request):
        release.wait(75)
        return done("finished the long task")
    return turn


def test_the_sixth_subagent_across_two_sessions_is_refused(claude_repo):
    claude_repo.add_agent("implementer")
    claude_repo.config_set("dispatch", "max_concurrent_repo", 5)
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "repo cap 5")
    release = threading.Event()
    runs: dict = {}

    def session(name: str) -> None:
        runs[name] = claude_repo.run(f"script:{name}", [
            Conversation(f"script:{name}", [tools(*[_agent(f"script:{name}-sub {i}") for i in range(3)]),
                                            done(f"{name} dispatched")]),
            Conversation(f"script:{name}-sub", [_holding(release)]),
        ], timeout=120)

    def started(n: int) -> bool:
        log = claude_repo.repo / ".swarmgate" / "log" / "decisions.jsonl"
        if not log.exists():
            return False
        recs = [json.loads(x) for x in log.read_text().splitlines()]
        return sum(1 for r in recs if r.get("event") == "SubagentStart") >= n

    a = threading.Thread(target=session, args=("sa",))
    a.start()
    deadline = time.monotonic() + 60
    while not started(3) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert started(3), "session A's three subagents did not start"
    b = threading.Thread(target=session, args=("sb",))
    b.start()
    deadline = time.monotonic() + 60
    while not started(5) and time.monotonic() < deadline:
        time.sleep(0.2)
    # both sessions' agents run now: what does status say, from session A's side?
    status = claude_repo.tool("swarmgate", "status", "--json", "--session", _session_of(claude_repo, 0))
    release.set()
    a.join(150)
    b.join(150)
    ra, rb = runs["sa"], runs["sb"]
    why = ra.describe() + "\n---\n" + rb.describe()
    assert ra.returncode == 0 and rb.returncode == 0, why
    assert [r.is_error for r in ra.results_of("Agent", "script:sa")] == [False, False, False], why
    results_b = rb.results_of("Agent", "script:sb")
    # the client judges the three calls of one message at once: which one is refused is a race
    assert sorted(r.is_error for r in results_b) == [False, False, True], why
    (refusal,) = [r.text for r in results_b if r.is_error]
    assert "[D07]" in refusal and "max_concurrent_repo" in refusal and "5 agents" in refusal, refusal
    assert f"session {ra.session_id[:8]}: 3 running" in refusal, refusal
    # status: both sessions live, session A's marked yours
    assert status.returncode == 0, status.stderr
    rep = json.loads(status.stdout)
    mine = {s["session"]: s["yours"] for s in rep["sessions"]}
    assert mine.get(ra.session_id) is True and mine.get(rb.session_id) is False, rep["sessions"]


def _session_of(claude_repo, index: int) -> str:
    log = claude_repo.repo / ".swarmgate" / "log" / "decisions.jsonl"
    sessions = list(dict.fromkeys(json.loads(x)["session"] for x in log.read_text().splitlines()))
    return sessions[index]
