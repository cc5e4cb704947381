"""D30: a dispatch naming a task whose dependencies are not closed is refused, naming them; the
workarounds a refused agent tries next (close the dependency by hand, mistype the id, drop the line)."""
from __future__ import annotations

import pytest

from swarmgate.agents import records as R
from swarmgate.hooks.task_order import task_refs
from tests.builders import THREADS
from tests.hooks.conftest import answer, denied, hook

PLAN = ("# Round r1\n\ngoal: ship the parser\nexit: its tests pass\n\n## Tasks\n\n"
        "| id | description | deps | inputs ready | batch | verdict |\n"
        "|----|-------------|------|--------------|-------|---------|\n"
        "| t1 | write the parser | - | yes | 1 | |\n"
        "| t2 | write the lexer | - | yes | 1 | |\n"
        "| t3 | wire it in | t1, t2 | no | 2 | |\n")


def _dispatch(task_line: str, **extra) -> dict:
    prompt = f"{task_line}\nexit criterion: wired\nheavy test: do not run\nthread cap: {THREADS}\n"
    return {"tool_name": "Agent", "tool_use_id": "toolu_d30",
            "tool_input": {"description": "wire it", "prompt": prompt, "subagent_type": "implementer"}, **extra}


@pytest.fixture
def plan(repo):
    (repo / "records").mkdir()
    path = repo / "records" / "r1.md"
    path.write_text(PLAN)
    return path


def records(repo, *args) -> int:
    return R.main(["--repo", str(repo), *args])


def test_task_refs_reads_the_first_word_of_each_task_line():
    prompt = "task: t3\n- Task：r1/t4 — the lexer\ntask: add the parser\ntask: `t5`\ntasks: t6\ntask:\n"
    assert task_refs(prompt, "task") == [("t3", True), ("r1/t4", False), ("add", False), ("t5", True)]


@pytest.mark.parametrize("extra", [{}, {"agent_id": "a1", "agent_type": "implementer"}], ids=["main", "subagent"])
def test_refused_while_a_dependency_is_open_naming_each(repo, plan, extra):
    reason = denied(answer("PreToolUse", _dispatch("task: t3", **extra), repo))
    assert "[D30]" in reason and "task t3 of round r1 depends on t1 (open), t2 (open)" in reason, reason
    assert "swarmgate records verdict r1 t1 close" in reason and "--deps" in reason
    assert records(repo, "verdict", "r1", "t1", "close") == 0
    reason = denied(answer("PreToolUse", _dispatch("task: t3", **extra), repo))
    assert "depends on t2 (open)" in reason and "t1 (" not in reason
    assert records(repo, "verdict", "r1", "t2", "next-round") == 0
    assert "depends on t2 (next-round)" in denied(answer("PreToolUse", _dispatch("task: t3", **extra), repo))
    assert records(repo, "verdict", "r1", "t2", "close") == 0
    ans = answer("PreToolUse", _dispatch("task: t3", **extra), repo)
    assert "D30" not in str(ans), ans


def test_closing_a_dependency_by_hand_does_not_open_the_way(repo, plan):
    """Workaround 1: give the dependency a verdict without its verify passing."""
    assert records(repo, "update", "r1", "t1", "--verify", "test -d .claude") == 0
    assert records(repo, "verdict", "r1", "t1", "close") == 0
    assert records(repo, "verdict", "r1", "t2", "close") == 0
    reason = denied(answer("PreToolUse", _dispatch("task: t3"), repo))
    assert "t1 (closed, but its verify `test -d .claude` has not run)" in reason, reason
    assert records(repo, "verify", "t1") == 0
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: t3"), repo))


def test_a_mistyped_task_id_is_refused_and_free_text_is_not_judged(repo, plan):
    """Workaround 2: name a task that does not exist (or no task at all)."""
    reason = denied(answer("PreToolUse", _dispatch("task: t33"), repo))
    assert "names t33, which is no task of any scheduling record" in reason
    assert "open tasks of round r1: t1, t2, t3" in reason
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: wire everything in at once"), repo))
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: refactor", tool_use_id="toolu_w"), repo))
    assert "names r1/t9" in denied(answer("PreToolUse", _dispatch("task: r1/t9", tool_use_id="toolu_r"), repo))


def test_require_task_makes_dropping_the_line_a_refusal(repo, plan):
    """Workaround 3: drop the task line. Off by default (free-text task lines are common); on, it refuses."""
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: wire everything in"), repo))
    (repo / ".claude" / "swarmgate.toml").write_text("[dispatch]\nrequire_task = true\n")
    reason = denied(answer("PreToolUse", _dispatch("task: wire everything in"), repo))
    assert "names no task of round r1" in reason and "`task: ID`" in reason and "t1, t2, t3" in reason
    # once every task has a verdict there is nothing to name
    for t in ("t1", "t2", "t3"):
        assert records(repo, "verdict", "r1", t, "drop") == 0
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: clean up"), repo))


def test_another_rounds_task_by_round_and_id(repo, plan):
    (repo / "records" / "r0.md").write_text(PLAN.replace("Round r1", "Round r0").replace("| 1 | |", "| 1 | close |"))
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: r0/t3"), repo))
    assert "task t3 of round r1" in denied(answer("PreToolUse", _dispatch("task: r1/t3"), repo))


def test_no_records_no_judgement(repo):
    assert "D30" not in str(answer("PreToolUse", _dispatch("task: t3"), repo))


def test_through_the_real_entry_point(repo, plan):
    reason = denied(hook("PreToolUse", _dispatch("task: t3"), repo))
    assert "[D30]" in reason and "t1 (open)" in reason


def test_a_dispatch_d30_refuses_does_not_count_against_d07(repo, plan):
    """Refused dispatches record nothing (the act phase runs only when the call goes ahead)."""
    (repo / ".claude" / "swarmgate.toml").write_text("[dispatch]\nmax_concurrent = 1\n")
    for i in range(3):
        assert "[D30]" in denied(answer("PreToolUse", _dispatch("task: t3", tool_use_id=f"toolu_r{i}"), repo))
    ans = answer("PreToolUse", _dispatch("task: t1", tool_use_id="toolu_ok"), repo)
    assert not denied(ans), ans
    assert "[D07]" in denied(answer("PreToolUse", _dispatch("task: t2", tool_use_id="toolu_next"), repo))
