"""Subagents through the real client: write scope per type (W01) and the hand-over built from
the transcript the binary wrote (agent-handover)."""
from __future__ import annotations

import pytest

from messages_api import Conversation, bash, dispatch, done, tool

pytestmark = pytest.mark.e2e


def test_implementer_writes_in_its_scope_and_hands_over_from_its_transcript(claude_repo):
    claude_repo.config_set("write", "implementer", ["src/**"])
    src = claude_repo.repo / "src" / "feature.txt"
    outside = claude_repo.repo / "docs" / "notes.md"
    run = claude_repo.run("script:handover-main", [
        Conversation("script:handover-main", [
            dispatch("implementer", "script:handover-sub\nAdd the feature file.\nheavy test: do not run"),
            done("dispatched"),
        ]),
        Conversation("script:handover-sub", [
            tool("Write", {"file_path": str(src), "content": "feature v1\n"}),
            tool("Write", {"file_path": str(outside), "content": "not mine\n"}),
            bash("printf 'check-%s\\n' one two three"),
            done("feature written; the workspace test is still due"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    # W01: the implementer's row allows src/**, nothing else
    writes = run.results_of("Write", "script:handover-sub")
    assert [w.is_error for w in writes] == [False, True], run.describe()
    assert "[W01]" in writes[1].text and "docs/notes.md" in writes[1].text
    assert src.read_text() == "feature v1\n" and not outside.exists()
    recs = run.decisions(event="PreToolUse", tool="Write", agent_type="implementer")
    assert [r["decision"] for r in recs] == ["allow", "deny"]

    # agent-handover reads the transcript the binary wrote for this subagent
    (started,) = run.decisions(event="SubagentStart")
    agent_id = started["agent_id"]
    assert [p.name for p in run.subagent_transcripts()] == [f"agent-{agent_id}.jsonl"]
    out = claude_repo.tool("agent-handover", agent_id, "--session", run.session_id)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Add the feature file." in text                      # the dispatch prompt
    assert "src/feature.txt" in text                            # the file it wrote
    (refused,) = [ln for ln in text.splitlines() if "docs/notes.md" in ln]
    assert "refused" in refused                                 # the write W01 stopped, marked so
    assert "printf 'check-%s\\n' one two three" in text         # the command it ran ...
    assert "check-three" in text                                # ... with its output
    assert "the workspace test is still due" in text            # its last message
