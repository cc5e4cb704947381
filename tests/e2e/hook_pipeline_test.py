"""The real Claude Code binary drives swarmgate's installed hooks (issue 2 item 10).

Each test runs `claude -p` once against a scripted Messages API and checks
both sides: what the model was sent back (the next request) and what the
hook recorded (the decision log).
"""
from __future__ import annotations

import os

import pytest
from harness import marked_pids
from messages_api import Conversation, bash, compact_after, dispatch, done, tool

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"


def test_main_agent_bash_runs_through_the_hooks(claude_repo):
    target = claude_repo.repo / "notes.txt"
    run = claude_repo.run("script:main-bash", [
        Conversation("script:main-bash", [
            bash("echo hello-from-$((40+2))"),
            tool("Write", {"file_path": str(target), "content": "plain file\n"}),
            done("finished"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    # the command ran: its output came back to the model as the tool result
    results = run.results_of("Bash")
    assert [(r.is_error, r.text.strip()) for r in results] == [(False, "hello-from-42")], run.describe()
    # the hook saw it, as the main agent (no agent_id/agent_type), and allowed it
    pre = run.decisions(event="PreToolUse", tool="Bash")
    assert len(pre) == 1, run.describe()
    assert pre[0]["decision"] == "allow"
    assert pre[0]["agent_type"] is None and pre[0]["agent_id"] is None
    assert pre[0]["input"] == "echo hello-from-$((40+2))"
    assert pre[0]["session"] == run.session_id
    assert run.decisions(event="PostToolUse", tool="Bash"), run.describe()
    assert run.permission_denials == []
    assert run.transcript_path.exists()
    # every request the binary made was the main conversation's (no title/haiku/count_tokens calls
    # with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1); a new kind would show up here
    assert run.api.side_requests() == [] and run.api.other == [], run.describe()
    # an ordinary file write passes the file guards (G01 does not fire on every Write)
    assert [r.is_error for r in run.results_of("Write")] == [False], run.describe()
    assert target.read_text() == "plain file\n"
    assert [d["decision"] for d in run.decisions(event="PreToolUse", tool="Write")] == ["allow"]


def test_session_start_context_reaches_the_first_request(claude_repo):
    (claude_repo.repo / "wip-e2e.txt").write_text("half done\n")
    run = claude_repo.run("script:start", [Conversation("script:start", [done("hello")])])
    assert run.returncode == 0, run.describe()
    (start,) = run.decisions(event="SessionStart")
    assert start["session"] == run.session_id and start["decision"] == "context", run.describe()
    assert "C01" in start["codes"]
    (first,) = run.conversation("script:start")
    (added,) = first.hook_texts("SessionStart hook additional context:")
    assert "swarmgate session start (startup)" in added, added
    # the report is about this worktree: the one uncommitted file is listed in its section
    changes = added.split("## Uncommitted changes in the worktree", 1)[1].split("\n## ", 1)[0]
    assert "wip-e2e.txt" in changes, added


def test_session_start_after_compaction_reports_afresh(claude_repo):
    """Auto-compaction mid-run: SessionStart runs again (source compact) and its report, built
    anew, reaches the first request after the compaction."""
    run = claude_repo.run("script:compact", [
        Conversation("script:compact", [compact_after(bash("echo draft > wip-after-start.txt")), done()]),
        Conversation("script:compact:after-compact", [done("picked up where I was")]),
    ])
    assert run.returncode == 0, run.describe()
    assert len(run.decisions(event="SessionStart")) == 2, run.describe()
    before = run.conversation("script:compact")[0].hook_texts("SessionStart hook additional context:")
    (after_req,) = run.conversation("script:compact:after-compact")
    after = after_req.hook_texts("SessionStart hook additional context:")
    assert len(before) == 1 and "swarmgate session start (startup)" in before[0], run.describe()
    assert len(after) == 1 and "swarmgate session start (compact)" in after[0], run.describe()
    # the compact report is about now: the file written after start is among the uncommitted changes
    def changes(text: str) -> str:
        return text.split("## Uncommitted changes in the worktree", 1)[1].split("\n## ", 1)[0]
    assert "wip-after-start.txt" not in changes(before[0])
    assert "wip-after-start.txt" in changes(after[0])


def test_g01_deny_reaches_the_model_as_the_tools_error(claude_repo):
    settings = claude_repo.repo / ".claude" / "settings.json"
    cache = claude_repo.repo / ".swarmgate" / "cache" / "config.json"
    before = settings.read_bytes()
    run = claude_repo.run("script:g01", [
        Conversation("script:g01", [
            tool("Write", {"file_path": str(cache), "content": '{"key": "forged"}\n'}),
            bash("echo '{}' > .claude/settings.json"),  # the shell side of G01
            # the client's own deny rule (install's second line) refuses this before any hook runs
            tool("Write", {"file_path": str(settings), "content": '{"hooks": {}}\n'}),
            done("gave up"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    (shell,) = run.results_of("Bash")
    assert shell.is_error and "[G01]" in shell.text, run.describe()
    results = run.results_of("Write")
    assert len(results) == 2, run.describe()
    assert results[0].is_error
    assert results[0].text.startswith("PreToolUse:Write hook error:"), results[0].text
    assert "[G01]" in results[0].text
    assert results[1].is_error and "denied by your permission settings" in results[1].text, run.describe()
    assert settings.read_bytes() == before
    assert not cache.exists() or "forged" not in cache.read_text()
    assert [d["tool_name"] for d in run.permission_denials] == ["Write", "Bash", "Write"]
    deny = run.decisions(event="PreToolUse", tool="Write")
    assert [(d["decision"], d["codes"]) for d in deny] == [("deny", ["G01"])]


def test_a_break_switch_outside_a_self_test_makes_the_hooks_refuse(claude_repo):
    """SWARMGATE_BREAK in the session's environment (not a self-test): every tool call is refused,
    naming the variable; typed inline into a command, G01 refuses it too."""
    notes = claude_repo.repo / "notes.txt"
    run = claude_repo.run("script:break", [
        Conversation("script:break", [
            tool("Write", {"file_path": str(notes), "content": "{}\n"}),
            bash("echo harmless"),
            done("blocked"),
        ]),
    ], env={"SWARMGATE_BREAK": "g01-allow-file-tools"})
    assert run.returncode == 0, run.describe()
    (write,) = run.results_of("Write")
    (echo,) = run.results_of("Bash")
    for res in (write, echo):
        assert res.is_error and "SWARMGATE_BREAK=g01-allow-file-tools is set outside a self-test" in res.text, \
            run.describe()
    assert not notes.exists()

    inline = claude_repo.run("script:break-inline", [
        Conversation("script:break-inline", [bash("SWARMGATE_BREAK=b01-allow-heavy echo hi"), done("no")]),
    ])
    (res,) = inline.results_of("Bash")
    assert res.is_error and "[G01]" in res.text and "SWARMGATE_BREAK" in res.text, inline.describe()


def test_subagent_tool_calls_carry_agent_type(claude_repo):
    claude_repo.add_agent(WORKER)
    run = claude_repo.run("script:main-dispatch", [
        Conversation("script:main-dispatch", [
            bash("echo main-side"),
            dispatch(WORKER, "script:sub-work\nRun the echo.\nheavy test: do not run"),
            done("all done"),
        ]),
        Conversation("script:sub-work", [bash("echo sub-side"), done("sub finished")]),
    ])
    assert run.returncode == 0, run.describe()
    assert run.subagent_stats.get("by_type") == {WORKER: 1}, run.output
    # the subagent's own conversation ran its command
    assert [r.text.strip() for r in run.results_of("Bash", "script:sub-work")] == ["sub-side"]

    bash_calls = {d["input"]: d for d in run.decisions(event="PreToolUse", tool="Bash")}
    assert set(bash_calls) == {"echo main-side", "echo sub-side"}, run.describe()
    main, sub = bash_calls["echo main-side"], bash_calls["echo sub-side"]
    assert main["agent_type"] is None and main["agent_id"] is None
    assert sub["agent_type"] == WORKER and sub["agent_id"]
    assert main["decision"] == sub["decision"] == "allow"
    # the dispatch itself is the main agent's tool call
    (agent_call,) = run.decisions(event="PreToolUse", tool="Agent")
    assert agent_call["agent_type"] is None and agent_call["input"] == WORKER
    # lifecycle events name the same agent, and its transcript is where the binary says
    (started,) = run.decisions(event="SubagentStart")
    assert (started["agent_id"], started["agent_type"]) == (sub["agent_id"], WORKER)
    assert run.decisions(event="SubagentStop", agent_id=sub["agent_id"])
    assert [p.name for p in run.subagent_transcripts()] == [f"agent-{sub['agent_id']}.jsonl"]
    # A01: the first dispatch started the session's watchdog, detached; it is gone after the run
    after = run.conversation("script:main-dispatch")[2]
    (started_watch,) = after.hook_texts("PostToolUse:Agent hook additional context:")
    assert "[A01] swarm-watch started for this session (pid " in started_watch, started_watch
    watch_pid = int(started_watch.split("(pid ", 1)[1].split(")", 1)[0])
    assert not os.path.exists(f"/proc/{watch_pid}"), f"swarm-watch {watch_pid} outlived the run"


def test_harness_kills_what_the_run_left_running(claude_repo):
    """A process the model's command detached does not outlive the run: the harness reaps it."""
    pid_file = claude_repo.tmp / "detached.pid"
    run = claude_repo.run("script:detach", [
        Conversation("script:detach", [
            bash(f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 300' </dev/null >/dev/null 2>&1 &"),
            done("left it running"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    pid = int(pid_file.read_text())
    assert not os.path.exists(f"/proc/{pid}"), f"detached sleep {pid} survived the run"
    assert marked_pids(run.token) == []


def test_harness_bounds_a_run_in_time_and_cleans_up(claude_repo):
    """A run that does not finish in time is killed with everything it started, and says so."""
    pid_file = claude_repo.tmp / "hung.pid"
    with pytest.raises(AssertionError, match="did not finish within 8 s"):
        claude_repo.run("script:hang", [
            Conversation("script:hang", [bash(f"echo $$ > {pid_file}; exec tail -f /dev/null"), done()]),
        ], timeout=8)
    pid = int(pid_file.read_text())
    assert not os.path.exists(f"/proc/{pid}"), f"the hung command {pid} survived"
    assert marked_pids(claude_repo.last_token) == [], "a process of the timed-out run survived"
