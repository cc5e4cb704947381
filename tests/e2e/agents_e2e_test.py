"""Subagents through the real client: dispatch guards (D01 D07 D12 D15 D16 D20 D21), the continuation guard (M01),
the rules a subagent gets at start (C02), write scope per type (W01), and the hand-over built from
the transcript the binary wrote (agent-handover)."""
from __future__ import annotations

import pytest

from messages_api import Conversation, bash, dispatch, done, tool, tools

from tests.builders import THREADS

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"
HEAVY_LINE = "heavy test: do not run"


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
    why = run.describe()
    # C02: the subagent's first request carries agent-common.md and its type's rules
    first = run.conversation("script:handover-sub")[0]
    assert "SubagentStart hook additional context:" in first.all_text, run.describe()
    assert "## .claude/agent-common.md" in first.all_text, why
    assert "## .claude/rules/implementing.md" in first.all_text, why
    assert "SubagentStart hook additional context:" not in run.conversation("script:handover-main")[0].all_text
    # W01: the implementer's row allows src/**, nothing else
    writes = run.results_of("Write", "script:handover-sub")
    assert [w.is_error for w in writes] == [False, True], why
    assert "[W01]" in writes[1].text and "docs/notes.md" in writes[1].text, why
    assert src.read_text() == "feature v1\n" and not outside.exists(), why
    recs = run.decisions(event="PreToolUse", tool="Write", agent_type="implementer")
    assert [r["decision"] for r in recs] == ["allow", "deny"], why

    # agent-handover reads the transcript the binary wrote for this subagent
    starts = run.decisions(event="SubagentStart")
    assert len(starts) == 1, why
    agent_id = starts[0]["agent_id"]
    assert [p.name for p in run.subagent_transcripts()] == [f"agent-{agent_id}.jsonl"], why
    out = claude_repo.tool("agent-handover", agent_id, "--session", run.session_id)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Add the feature file." in text, text                # the dispatch prompt
    assert "src/feature.txt" in text, text                      # the file it wrote
    refused = [ln for ln in text.splitlines() if "docs/notes.md" in ln]
    assert len(refused) == 1 and "refused" in refused[0], text  # the write W01 stopped, marked so
    assert "printf 'check-%s\\n' one two three" in text, text   # the command it ran ...
    assert "check-three" in text, text                          # ... with its output
    assert "the workspace test is still due" in text, text      # its last message


def test_dispatch_guards_refuse_and_the_model_reads_why(claude_repo):
    """D12 general-purpose, D01 no heavy-test line, D21 unknown type, D20 unfilled placeholder,
    D15 a thread cap other than the registered one; then a compliant dispatch goes out."""
    claude_repo.add_agent(WORKER)
    run = claude_repo.run("script:dispatch-refused", [
        Conversation("script:dispatch-refused", [
            dispatch("general-purpose", f"script:never-gp\nLook around.\n{HEAVY_LINE}"),
            dispatch(WORKER, "script:never-no-line\nLook around."),
            dispatch("no-such-type", f"script:never-unknown\nLook around.\n{HEAVY_LINE}"),
            dispatch(WORKER, f"script:never-hole\nLook at <which module: fill in>.\n{HEAVY_LINE}"),
            dispatch(WORKER, f"script:never-cap\nBuild it.\n{HEAVY_LINE}\nthread cap: {THREADS + 7}"),
            dispatch(WORKER, f"script:d-ok\nBuild it.\n{HEAVY_LINE}\nthread cap: {THREADS}"),
            done("one of six went out"),
        ]),
        Conversation("script:d-ok", [done("looked")]),
    ])
    assert run.returncode == 0, run.describe()
    gp, no_line, unknown, hole, cap, ok = run.results_of("Agent")
    assert gp.is_error and gp.text.startswith("PreToolUse:Agent hook error:"), run.describe()
    assert "[D12]" in gp.text and "general-purpose" in gp.text and "clerk" in gp.text
    assert no_line.is_error and "[D01]" in no_line.text and HEAVY_LINE in no_line.text
    assert unknown.is_error and "[D21]" in unknown.text and "no-such-type" in unknown.text, unknown.text
    assert hole.is_error and "[D20]" in hole.text and "<which module: fill in>" in hole.text, hole.text
    assert cap.is_error and "[D15]" in cap.text and f"thread cap: {THREADS + 7}" in cap.text \
        and f"thread cap: {THREADS}" in cap.text, cap.text   # the default, auto: this machine's cores less one
    assert not ok.is_error and "looked" in ok.text
    # refused dispatches never started a conversation; the compliant one did
    for never in ("gp", "no-line", "unknown", "hole", "cap"):
        assert run.conversation(f"script:never-{never}") == []
    assert run.subagent_stats.get("by_type") == {WORKER: 1}, run.output
    recs = run.decisions(event="PreToolUse", tool="Agent")
    assert [(r["decision"], r["codes"]) for r in recs] == [
        ("deny", ["D12"]), ("deny", ["D01"]), ("deny", ["D21"]), ("deny", ["D20"]), ("deny", ["D15"]),
        ("allow", [])]
    assert [d["tool_name"] for d in run.permission_denials] == ["Task"] * 5  # the internal name


def test_d07_refuses_the_sixth_of_six_background_dispatches_sent_at_once(claude_repo):
    """Claude Code runs the six PreToolUse hooks concurrently: exactly one must be refused."""
    claude_repo.add_agent(WORKER)
    calls = [("Agent", {"description": f"task {i}", "subagent_type": WORKER, "run_in_background": True,
                        "prompt": f"script:d07-sub-{i};\nDo part {i}.\n{HEAVY_LINE}"}) for i in range(6)]
    run = claude_repo.run("script:d07", [
        Conversation("script:d07", [tools(*calls), done("waiting for them")]),
        *[Conversation(f"script:d07-sub-{i};", [done(f"part {i} done")]) for i in range(6)],
    ])
    assert run.returncode == 0, run.describe()
    results = run.results_of("Agent")
    refused = [r for r in results if r.is_error]
    assert len(results) == 6 and len(refused) == 1, run.describe()
    assert refused[0].text.startswith("PreToolUse:Agent hook error:")
    assert "[D07]" in refused[0].text and "the limit is 5" in refused[0].text
    recs = run.decisions(event="PreToolUse", tool="Agent")
    assert sorted(r["decision"] for r in recs) == ["allow"] * 5 + ["deny"]
    assert run.subagent_stats.get("started_in_background") == 5, run.output
    assert len(run.decisions(event="SubagentStart")) == 5


def test_d16_lets_one_of_two_dispatches_sharing_a_scratch_dir_through(claude_repo):
    """Two background dispatches in one message name the same scratch directory; their hooks run
    at once, and exactly one takes the lock."""
    claude_repo.add_agent(WORKER)
    scratch = claude_repo.tmp / "shared-scratch"
    calls = [("Agent", {"description": f"build {i}", "subagent_type": WORKER, "run_in_background": True,
                        "prompt": f"script:d16-sub-{i};\nBuild it.\n{HEAVY_LINE}\nscratch: {scratch}"})
             for i in range(2)]
    run = claude_repo.run("script:d16", [
        Conversation("script:d16", [tools(*calls), done("waiting")]),
        *[Conversation(f"script:d16-sub-{i};", [done(f"build {i} done")]) for i in range(2)],
    ])
    assert run.returncode == 0, run.describe()
    results = run.results_of("Agent")
    refused = [r for r in results if r.is_error]
    assert len(results) == 2 and len(refused) == 1, run.describe()
    assert "[D16]" in refused[0].text and str(scratch) in refused[0].text, refused[0].text
    assert sorted(r["decision"] for r in run.decisions(event="PreToolUse", tool="Agent")) == ["allow", "deny"]
    assert len(run.decisions(event="SubagentStart")) == 1, run.describe()


def test_m01_refuses_a_message_to_a_subagent_that_handed_back(claude_repo):
    claude_repo.add_agent(WORKER)
    run = claude_repo.run("script:m01", [
        Conversation("script:m01", [
            dispatch(WORKER, f"script:m01-sub\nCount the files.\n{HEAVY_LINE}", name="counter"),
            tool("ToolSearch", {"query": "select:SendMessage"}),  # SendMessage is a deferred tool
            tool("SendMessage", {"to": "counter", "summary": "one more", "message": "count again"}),
            done("gave up on it"),
        ]),
        Conversation("script:m01-sub", [done("3 files")]),
    ])
    assert run.returncode == 0, run.describe()
    (sent,) = run.results_of("SendMessage")
    (stopped,) = run.decisions(event="SubagentStop")
    (stopped,) = run.decisions(event="SubagentStop")
    # this release passes a SendMessage deny to the model without the "hook error" prefix
    assert sent.is_error and "[M01]" in sent.text, run.describe()
    assert f"agent-handover {stopped['agent_id']}" in sent.text
    (rec,) = run.decisions(event="PreToolUse", tool="SendMessage")
    assert rec["decision"] == "deny" and rec["codes"] == ["M01"] and rec["agent_type"] is None
    # the finished subagent was not resumed
    assert len(run.conversation("script:m01-sub")) == 1
