"""M01, C02, H01, H02, S01, C03, C04 through the hook engine."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from swarmgate.agents import records as R
from swarmgate.agents.work_dir_owner import claim, work_root
from swarmgate.alerts import all_alerts
from swarmgate.config import load_config
from swarmgate.hooks import scratch_locks
from swarmgate.hooks import session_state as S
from swarmgate.hooks.stop_guards import transcript_calls
from tests.hooks.conftest import GOOD, answer, context, denied, dispatch, hook


def transcript(path, prompt: str, calls: list) -> str:
    """A hand-written subagent transcript: first user message = the prompt; calls =
    [(tool name, input, refused?)]."""
    lines = [{"type": "user", "message": {"role": "user", "content": prompt}}]
    for i, (name, ti, refused) in enumerate(calls):
        lines.append({"type": "assistant", "cwd": "", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "running it"},
            {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": ti}]}})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "is_error": refused,
             "content": (f"PreToolUse:{name} hook error: swarmgate refused this" if refused
                         else [{"type": "text", "text": "test result: ok. 212 passed"}])}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def stop_payload(agent_id="ag1", msg="done", transcript_path="", active=False, agent_type="implementer"):
    return {"agent_id": agent_id, "agent_type": agent_type, "last_assistant_message": msg,
            "stop_hook_active": active, "agent_transcript_path": transcript_path}


def run_agent(repo, tmp_path, name="parser", agent_id="ag1", prompt=GOOD, tool_use_id="toolu_d1", calls=()):
    assert denied(answer("PreToolUse", dispatch(prompt, tool_use_id=tool_use_id, name=name), repo)) == ""
    answer("SubagentStart", {"agent_id": agent_id, "agent_type": "implementer"}, repo)
    return transcript(tmp_path / f"agent-{agent_id}.jsonl", prompt, list(calls))


# --- M01 -----------------------------------------------------------------------------

def test_m01_message_to_handed_back_agent_refused(repo, tmp_path):
    tp = run_agent(repo, tmp_path)
    send = {"tool_name": "SendMessage", "tool_input": {"to": "parser", "message": "also fix the tests"}}
    assert denied(answer("PreToolUse", send, repo)) == ""  # still running: fine
    answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    reason = denied(answer("PreToolUse", send, repo))
    assert "[M01]" in reason and "agent-handover ag1" in reason and "dispatch a new agent" in reason
    by_id = {"tool_name": "SendMessage", "tool_input": {"to": "ag1", "message": "x"}}
    assert "[M01]" in denied(answer("PreToolUse", by_id, repo))
    # a subagent messaging it is refused the same way
    from_sub = dict(send, agent_id="ag9", agent_type="researcher")
    assert "[M01]" in denied(answer("PreToolUse", from_sub, repo))
    # another session's agents are not this session's business
    assert denied(answer("PreToolUse", send, repo, session="other")) == ""


def test_m01_name_reused_by_a_new_dispatch(repo, tmp_path):
    tp = run_agent(repo, tmp_path)
    answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    run_agent(repo, tmp_path, agent_id="ag2", tool_use_id="toolu_d2", prompt=GOOD + "second\n")
    send = {"tool_name": "SendMessage", "tool_input": {"to": "parser", "message": "x"}}
    assert denied(answer("PreToolUse", send, repo)) == ""


# --- C02 -----------------------------------------------------------------------------

def test_c02_subagent_gets_common_and_its_rules(repo):
    ans = answer("SubagentStart", {"agent_id": "a1", "agent_type": "implementer"}, repo)
    text = context(ans)
    assert "## .claude/agent-common.md" in text
    assert "## .claude/rules/implementing.md" in text and "## .claude/rules/testing.md" in text
    assert "## .claude/rules/researching.md" not in text
    ans = answer("SubagentStart", {"agent_id": "a2", "agent_type": "researcher"}, repo)
    assert "## .claude/rules/researching.md" in context(ans)
    assert "## .claude/rules/implementing.md" not in context(ans)


# --- H01 -----------------------------------------------------------------------------

def test_h01_scratch_left_blocks_hand_back_until_deleted_or_excused(repo, tmp_path):
    scratch = tmp_path / "build-1"
    tp = run_agent(repo, tmp_path, prompt=GOOD + f"scratch: {scratch}\n")
    (scratch / "target").mkdir(parents=True)
    ans = answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    assert ans.get("decision") == "block"
    assert "[H01]" in ans["reason"] and str(scratch) in ans["reason"] and "not deleted:" in ans["reason"]
    assert not S.load("s1")["agents"]["ag1"]["stopped"]  # blocked: still running
    # excused in its last message
    msg = f"report\n{scratch} not deleted: it holds the bisect state for the next agent"
    ans = answer("SubagentStop", stop_payload(transcript_path=tp, msg=msg), repo)
    assert "decision" not in ans
    assert S.load("s1")["agents"]["ag1"]["stopped"]


def test_h01_deleted_scratch_passes_and_releases_lock(repo, tmp_path):
    scratch = tmp_path / "build-2"
    tp = run_agent(repo, tmp_path, prompt=GOOD + f"scratch: {scratch}\n")
    assert len(scratch_locks.held("s1")) == 1
    ans = answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    assert "decision" not in ans
    assert "H01 no leftover" in ans["systemMessage"]
    assert scratch_locks.held("s1") == []


def test_h01_work_dir_owner_registration(repo, tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text(f'[workdirs]\nroot = "{root}"\n')
    tp = run_agent(repo, tmp_path)
    claim(str(root / "copy-a"), str(root), "repo copy for the build", "s1", agent="ag1")
    claim(str(root / "copy-b"), str(root), "someone else's", "s1", agent="ag7")
    ans = answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    assert ans.get("decision") == "block"
    assert "copy-a" in ans["reason"] and "copy-b" not in ans["reason"]


def test_h01_way_out_names_the_directory_and_works_when_pasted(repo, tmp_path):
    """With the default config (the default work root): each command H01's way-out gives runs when
    pasted (no `work-dir-owner release` without a directory: exit 251), and after `rm -rf` the agent
    may hand back."""
    tp = run_agent(repo, tmp_path)
    root = work_root(load_config(str(repo)), str(repo))
    path, _ = claim("copy a", root, "repo copy for the build", "s1", agent="ag1")
    reason = answer("SubagentStop", stop_payload(transcript_path=tp), repo)["reason"]
    commands = re.findall(r"`((?:rm|work-dir-owner) [^`]+)`", reason)
    assert [c.split()[0] for c in commands] == ["rm", "work-dir-owner"], reason
    release = shlex.split(commands[1])
    assert release[:2] == ["work-dir-owner", "release"] and release[2] == path, reason
    env = {**os.environ, "SWARMGATE_SESSION_ID": "s1"}
    bindir = os.path.dirname(sys.executable)
    p = subprocess.run([os.path.join(bindir, release[0]), *release[1:]], cwd=repo, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0 and f"released {path}" in p.stdout, p.stderr
    claim("copy a", root, "repo copy for the build", "s1", agent="ag1")
    p = subprocess.run(commands[0], shell=True, cwd=repo, capture_output=True, text=True)
    assert p.returncode == 0 and not os.path.exists(path), p.stderr
    assert "decision" not in answer("SubagentStop", stop_payload(transcript_path=tp), repo)


def test_h01_stop_hook_active_never_blocks(repo, tmp_path):
    scratch = tmp_path / "build-3"
    tp = run_agent(repo, tmp_path, prompt=GOOD + f"scratch: {scratch}\n")
    scratch.mkdir()
    ans = answer("SubagentStop", stop_payload(transcript_path=tp, active=True), repo)
    assert "decision" not in ans
    assert "[H01]" in ans["systemMessage"]
    assert S.load("s1")["agents"]["ag1"]["stopped"]


# --- H02 + C04 ---------------------------------------------------------------------------

def test_h02_reports_a_heavy_test_that_ran_and_alerts_the_main_agent(repo, tmp_path):
    calls = [("Bash", {"command": "git status"}, False),
             ("Bash", {"command": "cargo test --workspace"}, False),
             ("Bash", {"command": "cargo test --all"}, True)]
    tp = run_agent(repo, tmp_path, calls=calls)
    ans = answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    assert "decision" not in ans  # never blocks
    msg = ans["systemMessage"]
    assert "RED:" in msg and "Bash `cargo test --workspace`: B01" in msg
    assert "`cargo test --all`" not in msg  # refused at the time: the hook did fire
    assert "H02 re-judged 2 call(s) from the transcript, 1 a guard refuses" in msg
    alerts = [a for a in all_alerts() if a["kind"] == "transcript-audit"]
    assert len(alerts) == 1 and alerts[0]["session"] == "s1" and "cargo test --workspace" in alerts[0]["message"]
    # the main agent's next tool call carries the red line, once
    post = {"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_response": "x"}
    first = context(answer("PostToolUse", post, repo))
    assert "RED: swarmgate alerts" in first and "cargo test --workspace" in first
    assert "RED: swarmgate alerts" not in context(answer("PostToolUse", post, repo))


def test_h02_write_outside_scope_is_reported(repo, tmp_path):
    (repo / ".claude" / "swarmgate.toml").write_text('[write]\nimplementer = ["src/**"]\n')
    tp = run_agent(repo, tmp_path, calls=[("Write", {"file_path": "docs/x.md", "content": "x"}, False)])
    msg = answer("SubagentStop", stop_payload(transcript_path=tp), repo)["systemMessage"]
    assert "Write `docs/x.md`: W01" in msg


def test_h02_clean_transcript(repo, tmp_path):
    (repo / ".claude" / "swarmgate.toml").write_text('[write]\nimplementer = ["src/**"]\n')
    tp = run_agent(repo, tmp_path, calls=[("Bash", {"command": "ls -la"}, False),
                                          ("Edit", {"file_path": "src/a.py", "old_string": "a",
                                                    "new_string": "b"}, False)])
    ans = answer("SubagentStop", stop_payload(transcript_path=tp), repo)
    assert "RED" not in ans.get("systemMessage", "")
    assert "H02 re-judged 2 call(s) from the transcript, 0 a guard refuses" in ans["systemMessage"]


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_h02_says_it_could_not_read_the_transcript(repo, tmp_path, make):
    """An unreadable transcript never reads as a clean one ("re-judged 0 call(s))."""
    tp = tmp_path / "agent-ag1.jsonl"
    if make == "directory":
        tp.mkdir()  # root opens any file, whatever its mode: a directory cannot be read as one
    ans = answer("SubagentStop", stop_payload(transcript_path=str(tp)), repo)
    msg = ans["systemMessage"]
    assert "decision" not in ans  # H02 never blocks
    assert "[H02]" not in msg or "could not read the transcript" in msg
    assert "H02 could not read the transcript of subagent ag1" in msg and str(tp) in msg, msg
    assert "H02 could not read the transcript (" in msg and "re-judged 0" not in msg, msg
    assert f"swarmgate replay {tp}" in msg


# --- S01 ------------------------------------------------------------------------------

RECORD = ("# Round r7\n\ngoal: ship the parser\nexit: tests pass\n\n## Tasks\n\n"
          "| id | description | deps | inputs ready | batch | verdict |\n"
          "|----|-------------|------|--------------|-------|---------|\n"
          "| t1 | parse the header | - | yes | 1 | close |\n"
          "| t2 | wire the hook | t1 | no | 2 | |\n")


def _record(repo, text=RECORD):
    (repo / "records").mkdir(exist_ok=True)
    (repo / "records" / "r7.md").write_text(text)


def test_s01_open_round_blocks_the_main_agents_stop(repo):
    _record(repo)
    ans = answer("Stop", {"stop_hook_active": False, "background_tasks": [], "session_crons": []}, repo)
    assert ans.get("decision") == "block"
    assert "[S01]" in ans["reason"] and "t2" in ans["reason"]
    assert "swarmgate records verdict r7 t2" in ans["reason"]


def test_s01_stop_hook_active_never_blocks(repo):
    _record(repo)
    ans = answer("Stop", {"stop_hook_active": True}, repo)
    assert "decision" not in ans and "[S01]" in ans["systemMessage"]


def test_s01_pause_with_work_in_flight_is_not_the_end(repo):
    _record(repo)
    bg = {"stop_hook_active": False,
          "background_tasks": [{"id": "b1", "type": "subagent", "status": "running", "description": "batch 2"}]}
    ans = answer("Stop", bg, repo)
    assert "decision" not in ans and "still in flight" in ans["systemMessage"]
    answer("SubagentStart", {"agent_id": "a1", "agent_type": "implementer"}, repo)
    assert "decision" not in answer("Stop", {"stop_hook_active": False}, repo)


def test_s01_closed_round_and_no_record(repo):
    assert "decision" not in answer("Stop", {"stop_hook_active": False}, repo)
    _record(repo, RECORD.replace("| 2 | |", "| 2 | drop |"))
    ans = answer("Stop", {"stop_hook_active": False}, repo)
    assert "decision" not in ans and "every task has a verdict" in ans["systemMessage"]


def test_s01_task_removed_without_verdict_blocks(repo):
    _record(repo)
    path = repo / "records" / "r7.md"
    R.write_snapshot(str(path), R.next_snapshot(R.load_record(str(path)), {}))
    path.write_text(RECORD.replace("| t2 | wire the hook | t1 | no | 2 | |\n", ""))
    ans = answer("Stop", {"stop_hook_active": False}, repo)
    assert ans.get("decision") == "block" and "t2 (removed from the table without a verdict)" in ans["reason"]


def test_s01_a_closed_tasks_verify_must_pass_or_the_verdict_says_why(repo):
    """The three ways round S01's verify rule: never run it, weaken it after planning, remove it."""
    def records(*args):
        assert R.main(["--repo", str(repo), *args]) == 0, args

    def stop():
        return answer("Stop", {"stop_hook_active": False}, repo)

    _record(repo, RECORD.replace("| 2 | |", "| 2 | drop |"))
    records("update", "r7", "t1", "--verify", "test -d .claude")
    ans = stop()
    assert ans.get("decision") == "block" and "t1: its verify `test -d .claude` has not run" in ans["reason"]
    assert "swarmgate records verify t1" in ans["reason"] and "--reason" in ans["reason"]
    assert R.main(["--repo", str(repo), "verify", "t1"]) == 0
    ans = stop()
    assert "decision" not in ans and "every closed task's verify passed" in ans["systemMessage"], ans
    # weakened after it was planned: a pass of `true` is not a pass of the planned verify
    records("update", "r7", "t1", "--verify", "true")
    assert R.main(["--repo", str(repo), "verify", "t1"]) == 0
    ans = stop()
    assert ans.get("decision") == "block" and "verify changed since it was planned" in ans["reason"], ans
    records("update", "r7", "t1", "--no-verify")
    assert "planned verify `test -d .claude` was removed" in stop()["reason"]
    # the way out the agent is told: a verdict that says why
    records("verdict", "r7", "t1", "close", "--reason", "the planned check moved to the gate")
    assert "decision" not in stop()
    # a failed verify blocks too
    records("verdict", "r7", "t1", "close")
    records("update", "r7", "t1", "--verify", "test -d .claude")
    assert R.main(["--repo", str(repo), "verify", "t1"]) == 0
    (repo / ".claude").rename(repo / ".claude-moved")
    assert R.main(["--repo", str(repo), "verify", "t1"]) == 1
    (repo / ".claude-moved").rename(repo / ".claude")
    assert "last ended fail (exit 1)" in stop()["reason"]


def test_stop_through_the_real_entry_point(repo):
    _record(repo)
    ans = hook("Stop", {"stop_hook_active": False}, repo)
    assert ans["decision"] == "block" and "[S01]" in ans["reason"]


def test_h02_failing_heavy_run_ran_and_quoted_hook_text_does_not_hide_it(repo, tmp_path):
    tp = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": "task"}},
             {"type": "assistant", "message": {"role": "assistant", "content": [
                 {"type": "tool_use", "id": "u1", "name": "Bash", "input": {"command": "cargo test --workspace"}}]}},
             {"type": "user", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "u1", "is_error": True,
                  "content": "Exit code 101\ntest hooks::x ... FAILED: PreToolUse hook error text in a fixture"}]}}]
    tp.write_text("".join(json.dumps(x) + "\n" for x in lines))
    calls, n = transcript_calls(str(tp))
    assert n == 3 and [(c[1], c[3]) for c in calls] == [("Bash", True)]
