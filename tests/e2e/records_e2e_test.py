"""Records through the real client: D30 refuses a dispatch whose task's dependency is open, naming it;
after the main agent verifies and closes the dependency, the same dispatch goes through."""
from __future__ import annotations

import pytest

from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"
HEAVY_LINE = "heavy test: do not run"


def test_d30_refuses_a_dispatch_whose_dependency_is_open_then_lets_it_through(claude_repo):
    claude_repo.add_agent(WORKER)
    for args in (("new", "r1", "--goal", "parser then wiring", "--exit", "both verified"),
                 ("add-task", "r1", "t1", "-d", "write the parser", "--inputs-ready", "yes",
                  "--verify", "test -f README.md"),
                 ("add-task", "r1", "t2", "-d", "wire it in", "--deps", "t1")):
        p = claude_repo.tool("swarmgate", "records", *args)
        assert p.returncode == 0, p.stdout + p.stderr
    swarmgate = claude_repo.tool_path("swarmgate")
    prompt = f"script:d30-sub\ntask: t2 wire it in\n{HEAVY_LINE}"
    run = claude_repo.run("script:d30", [
        Conversation("script:d30", [
            dispatch(WORKER, prompt),                                          # refused: t1 is open
            bash(f"{swarmgate} records verify t1 && {swarmgate} records verdict r1 t1 close"),
            dispatch(WORKER, prompt),                                          # goes through
            done("t2 dispatched in order"),
        ]),
        Conversation("script:d30-sub", [done("wired")]),
    ])
    assert run.returncode == 0, run.describe()
    first, second = run.results_of("Agent", "script:d30")
    assert first.is_error and "[D30]" in first.text, run.describe()
    assert "task t2 of round r1 depends on t1 (open)" in first.text, first.text
    assert "swarmgate records verdict r1 t1 close" in first.text, first.text
    assert not second.is_error and "wired" in second.text, run.describe()
    dispatches = run.decisions(event="PreToolUse", tool="Agent")
    assert [d["decision"] for d in dispatches] == ["deny", "allow"], run.describe()
    assert dispatches[0]["findings"] == {"D30": "deny"}, dispatches[0]
    (verified,) = run.results_of("Bash", "script:d30")
    assert not verified.is_error, verified.text
    assert len(run.decisions(event="SubagentStart")) == 1  # only the dispatch let through started an agent
