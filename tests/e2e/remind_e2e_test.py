"""`remind` and the wake waiter through the real client.

A session with streaming input kept open (`claude -p --input-format stream-json`, stdin open)
stands in for an interactive one: there Claude Code runs the Stop hook's asyncRewake waiter in
the background, and its exit 2 starts a new turn. The bars:

- `remind 3s '…'` wakes an idle main agent: a new model request carries the message;
- T01's way out, pasted verbatim, is that very command, and it works;
- a swarm-watch alert for the session wakes the idle main agent the same way;
- in plain `claude -p`, remind says plainly that nothing can wake the session, and nothing waits.
"""
from __future__ import annotations

import json
import re
import time

import pytest

from messages_api import Conversation, Request, bash, dispatch, done

from swarmgate.agents.swarm_watch import running_instance
from swarmgate.alerts import write_alert

pytestmark = pytest.mark.e2e

HEAVY_LINE = "heavy test: do not run"


def _woken(conversation: str, needle: str):
    """until(): a request of ``conversation`` whose last user message carries ``needle``."""
    def check(api) -> bool:
        return any(r.conversation == conversation and r.user_texts() and needle in r.user_texts()[-1]
                   and "swarmgate woke you" in r.user_texts()[-1] for r in api.requests)
    return check


def _wake_request(run, conversation: str, needle: str) -> Request:
    hits = [r for r in run.conversation(conversation) if r.user_texts() and needle in r.user_texts()[-1]
            and "swarmgate woke you" in r.user_texts()[-1]]
    assert hits, run.describe()
    return hits[0]


def test_remind_wakes_an_idle_main_agent(claude_repo):
    remind = claude_repo.tool_path("remind")
    run = claude_repo.run_streaming("script:rem go", [
        Conversation("script:rem", [bash(f"{remind} 3s 'check the build now'"),
                                    done("I will wait for the reminder"),       # the turn ends: idle
                                    done("woken: checking the build")]),
    ], until=_woken("script:rem", "check the build now"), timeout=60)
    why = run.describe()
    (res,) = run.results_of("Bash", "script:rem")
    assert not res.is_error and "set for" in res.text, why
    assert "while that input stays open, an idle main agent is woken" in res.text, why
    wake = _wake_request(run, "script:rem", "check the build now")
    text = wake.user_texts()[-1]
    assert "swarmgate woke you" in text and "reminder r" in text, text
    # delivered once, by the waiter
    listed = claude_repo.tool("remind", "list", "--all")
    assert "delivered (woke the idle main agent (asyncRewake))" in listed.stdout, listed.stdout


def test_t01s_way_out_pasted_verbatim_sets_a_reminder_that_comes_back(claude_repo):
    claude_repo.config_set("timers", "min_sleep_s", 2)
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "short timers count")

    def paste_the_way_out(req: Request):
        refusal = req.last_tool_results()[0].text
        m = re.search(r"Way out: run `([^`]+)`", refusal)
        return bash(m.group(1) if m else "echo no-way-out-found")

    run = claude_repo.run_streaming("script:t01 go", [
        Conversation("script:t01", [bash("sleep 3; echo 'look at the CI run'"),   # refused by T01
                                    paste_the_way_out,                             # its way out, verbatim
                                    done("waiting"),
                                    done("woken")]),
    ], until=_woken("script:t01", "look at the CI run"), timeout=60)
    why = run.describe()
    refused, pasted = run.results_of("Bash", "script:t01")
    assert refused.is_error and "[T01]" in refused.text, why
    assert not pasted.is_error and "set for" in pasted.text, why
    wake = _wake_request(run, "script:t01", "look at the CI run")
    assert "swarmgate woke you" in wake.user_texts()[-1], why


def test_a_swarm_watch_alert_wakes_the_idle_main_agent(claude_repo):
    claude_repo.add_agent("e2e-worker")
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "agent")
    state = {"sent": False}

    def until(api) -> bool:
        # once the main agent is idle (its second request answered) and the watchdog runs, a report arrives
        mains = [r for r in api.requests if r.conversation == "script:watch"]
        if len(mains) >= 2 and not state["sent"]:
            session = _session(claude_repo)
            if session and running_instance(session):
                write_alert("watch:tool-call-running", "Bash `cargo build` has run for 9 min", source="swarm-watch",
                            session=session, key="tool-call:x")
                state["sent"] = True
        return _woken("script:watch", "cargo build")(api)

    run = claude_repo.run_streaming("script:watch go", [
        Conversation("script:watch", [dispatch("e2e-worker", f"script:watch-sub\n{HEAVY_LINE}"),
                                      done("dispatched; idle now"),
                                      done("woken by the watchdog")]),
        Conversation("script:watch-sub", [done("sub done")]),
    ], until=until, timeout=75)
    why = run.describe()
    assert state["sent"], "the watchdog was not running for the session: " + why
    wake = _wake_request(run, "script:watch", "cargo build")
    assert "swarm-watch (tool-call-running)" in wake.user_texts()[-1], why


def test_in_plain_print_mode_remind_says_nothing_can_wake_and_nothing_waits(claude_repo):
    remind = claude_repo.tool_path("remind")
    t0 = time.monotonic()
    run = claude_repo.run("script:rem-p", [
        Conversation("script:rem-p", [bash(f"{remind} 30s 'check the build'"), done("set")])])
    took = time.monotonic() - t0
    why = run.describe()
    (res,) = run.results_of("Bash", "script:rem-p")
    assert not res.is_error and "NOTHING CAN WAKE THIS SESSION" in res.text, why
    assert run.returncode == 0 and took < 25, f"{took:.0f}s: something waited for the reminder\n{why}"


def _session(claude_repo) -> str:
    log = claude_repo.repo / ".swarmgate" / "log" / "decisions.jsonl"
    if not log.exists():
        return ""
    for line in log.read_text().splitlines():
        s = json.loads(line).get("session")
        if s:
            return s
    return ""


def test_c05_a_due_reminder_comes_with_the_next_tool_result_of_an_agent_at_work(claude_repo):
    remind = claude_repo.tool_path("remind")
    run = claude_repo.run("script:c05", [
        Conversation("script:c05", [bash(f"{remind} 1s 'rebase on main'"), bash("sleep 2"), done("seen")])])
    why = run.describe()
    first, after_remind, after_sleep = run.conversation("script:c05")[:3]
    assert not any("rebase on main" in t for t in after_remind.hook_texts("PostToolUse:Bash hook additional context:"))
    told = after_sleep.hook_texts("PostToolUse:Bash hook additional context:")
    assert any("a reminder you set is due" in t and "rebase on main" in t for t in told), why
    listed = claude_repo.tool("remind", "list", "--all").stdout
    assert "delivered (shown at a tool call)" in listed, listed
