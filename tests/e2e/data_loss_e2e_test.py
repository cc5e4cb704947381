"""The data-loss and secret guards through the real client (issue 25): two subagents share the
checkout; the second one's `git reset --hard` and `git stash` are refused over the first one's
uncommitted change, which survives byte for byte; its own secret read is refused too."""
from __future__ import annotations

import pytest

from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

WRITER, CLEANER = "e2e-writer", "e2e-cleaner"


def test_a_subagent_cannot_drop_another_subagents_uncommitted_change(claude_repo):
    for t in (WRITER, CLEANER):
        claude_repo.add_agent(t)
        claude_repo.config_set("write", t, ["**"])
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "agents")
    (claude_repo.home / ".ssh").mkdir(exist_ok=True)
    (claude_repo.home / ".ssh" / "id_ed25519").write_text("not a real key\n")
    run = claude_repo.run("script:loss-main", [
        Conversation("script:loss-main", [
            dispatch(WRITER, "script:loss-writer\nAdd a line to the README.\nheavy test: do not run"),
            dispatch(CLEANER, "script:loss-cleaner\nStart from a clean tree.\nheavy test: do not run"),
            done("both reported"),
        ]),
        Conversation("script:loss-writer", [bash("echo 'the writer was here' >> README.md"), done("added")]),
        Conversation("script:loss-cleaner", [
            bash("git reset --hard"), bash("git stash"), bash("cat ~/.ssh/id_ed25519"), done("refused"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    reset, stash, key = run.results_of("Bash", "script:loss-cleaner")
    assert reset.is_error and "[L02]" in reset.text and "README.md (subagent" in reset.text, run.describe()
    assert stash.is_error and "[L02]" in stash.text, run.describe()
    assert key.is_error and "[K01]" in key.text, run.describe()
    # the effect: the writer's change is there, byte for byte
    assert (claude_repo.repo / "README.md").read_text() == "e2e test repository\nthe writer was here\n"
    recs = run.decisions(event="PreToolUse", agent_type=CLEANER)
    assert [(r["tool"], r["decision"]) for r in recs] == [("Bash", "deny")] * 3, run.describe()
