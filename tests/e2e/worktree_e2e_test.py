"""Worktree subagents through the real client (Agent with isolation "worktree"): the subagent's
paths are judged in its own worktree (W01), its worktree's copy of the settings is protected
(G01), and it hands back only with its worktree clean or a `<path> not deleted: <reason>` line
(H01). Before this, W01 judged its `src/a.py` as `.claude/worktrees/<w>/src/a.py` and refused it
(measured with 2.1.332)."""
from __future__ import annotations

import re
import subprocess

import pytest

from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

HEAVY_LINE = "heavy test: do not run"


def _keep_line(req) -> object:
    """The subagent's answer to H01's refusal: the exact line it asked for, filled in."""
    feedback = req.user_texts()[-1]
    m = re.search(r"`(\S*\.claude/worktrees/agent-\w+) not deleted: <reason>`", feedback)
    path = m.group(1) if m else "?"
    return done(f"src/a.py written.\n{path} not deleted: holds src/a.py on its branch for the main agent to merge")


def test_a_worktree_subagent_writes_its_own_src_and_hands_back_its_worktree(claude_repo):
    claude_repo.add_agent("implementer")
    claude_repo.config_set("write", "implementer", ["src/**"])
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "implementer row")
    run = claude_repo.run("script:wt", [
        Conversation("script:wt", [
            dispatch("implementer", f"script:wt-sub\nWrite src/a.py.\n{HEAVY_LINE}", isolation="worktree"),
            done("got the report"),
        ]),
        Conversation("script:wt-sub", [
            bash("mkdir -p src && echo 'x = 1' > src/a.py && pwd"),
            bash("echo notes > docs.md"),
            bash("echo '{}' > .claude/settings.json"),
            done("src/a.py written"),       # refused: the worktree holds the change, nothing said about it
            _keep_line,                     # goes through
        ]),
    ])
    why = run.describe()
    assert run.returncode == 0, why
    own, docs, settings = run.results_of("Bash", "script:wt-sub")
    assert not own.is_error and "/.claude/worktrees/agent-" in own.text, why
    assert docs.is_error and "[W01]" in docs.text and "writes docs.md" in docs.text, why
    assert ".claude/worktrees" not in docs.text.split("Way out")[0], why
    assert settings.is_error and "[G01]" in settings.text and "of the worktree" in settings.text, why

    starts = run.decisions(event="SubagentStart")
    assert len(starts) == 1, why
    agent_id = starts[0]["agent_id"]
    wt = claude_repo.repo / ".claude" / "worktrees" / f"agent-{agent_id}"
    assert (wt / "src" / "a.py").read_text() == "x = 1\n", why
    # C02 told the agent where it works and what H01 wants
    (first,) = [r for r in run.conversation("script:wt-sub") if r.assistant_turns == 0]
    assert f"You work in the git worktree {wt}" in first.all_text, why

    stops = run.decisions(event="SubagentStop")
    assert [s["decision"] for s in stops] == ["block", "context"], why
    assert "H01" in stops[0]["codes"] and "H01" not in stops[1]["codes"], why
    feedback = run.conversation("script:wt-sub")[4].user_texts()[-1]
    assert "Stop hook feedback:" in feedback and f".claude/worktrees/agent-{agent_id}" in feedback, why
    # the client kept the worktree (it holds a change) and the main agent got the line naming it
    (handback,) = run.results_of("Agent")
    assert f".claude/worktrees/agent-{agent_id} not deleted: holds src/a.py" in handback.text, why
    listed = subprocess.run(["git", "worktree", "list"], cwd=claude_repo.repo, capture_output=True, text=True)
    assert str(wt) in listed.stdout, listed.stdout


def test_a_worktree_subagent_that_changed_nothing_hands_back_at_once(claude_repo):
    claude_repo.add_agent("implementer")
    run = claude_repo.run("script:wt-clean", [
        Conversation("script:wt-clean", [
            dispatch("implementer", f"script:wt-clean-sub\nLook around.\n{HEAVY_LINE}", isolation="worktree"),
            done("got the report"),
        ]),
        Conversation("script:wt-clean-sub", [bash("git status --short; ls"), done("nothing to change")]),
    ])
    why = run.describe()
    (stop,) = run.decisions(event="SubagentStop")
    assert stop["decision"] == "context" and "H01" not in stop["codes"], why
    # Claude Code removed the clean worktree after the hand-back, as H01 expected
    assert not list((claude_repo.repo / ".claude" / "worktrees").glob("agent-*")), why
