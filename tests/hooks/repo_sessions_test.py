"""D07 across the sessions of one repository ([dispatch] max_concurrent_repo) and agent teams
(teammates judged as [teams] agent_type, counted while busy): real hook processes, real
session processes (a teammate is a process whose command line carries the lead's flags)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from swarmgate.alerts import write_alert
from swarmgate.hooks import repo_sessions as R
from swarmgate.hosts import status
from tests.hooks.conftest import GOOD, answer, denied, dispatch, hook

CAP5 = "[dispatch]\nmax_concurrent = 5\nmax_concurrent_repo = 5\n"


def start(repo, session, n, first=0):
    for i in range(first, first + n):
        assert denied(answer("PreToolUse", dispatch(tool_use_id=f"{session}-t{i}", name=f"{session}-w{i}"), repo,
                             session=session)) == "", (session, i)
        answer("SubagentStart", {"agent_id": f"{session}-a{i}", "agent_type": "implementer"}, repo, session=session)


def test_the_repository_cap_counts_every_live_session(repo):
    (repo / ".claude" / "swarmgate.toml").write_text(CAP5)
    start(repo, "s1", 3)
    start(repo, "s2", 2)
    reason = denied(answer("PreToolUse", dispatch(tool_use_id="s2-t9"), repo, session="s2"))
    assert "[D07]" in reason and "max_concurrent_repo" in reason and "5 agents" in reason
    assert "session s1: 3 running" in reason and "session s2 (yours): 2 running" in reason
    # another repository is not this one's business
    other = repo.parent / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / ".claude" / "agents").mkdir(parents=True)
    (other / ".claude" / "swarmgate.toml").write_text(CAP5)
    (other / ".claude" / "agents" / "implementer.md").write_text(
        (repo / ".claude" / "agents" / "implementer.md").read_text())
    assert denied(answer("PreToolUse", dispatch(tool_use_id="o-t1"), other, session="s3")) == ""
    # one hands back in s1: the next dispatch of s2 goes through
    answer("SubagentStop", {"agent_id": "s1-a0", "agent_type": "implementer", "last_assistant_message": "done",
                            "stop_hook_active": False, "agent_transcript_path": ""}, repo, session="s1")
    assert denied(answer("PreToolUse", dispatch(tool_use_id="s2-t10"), repo, session="s2")) == ""


def test_a_dead_sessions_agents_do_not_count_and_zero_is_no_cap(repo):
    (repo / ".claude" / "swarmgate.toml").write_text(CAP5)
    for i in range(4):   # a session whose process ends after each call: as if it crashed
        assert denied(hook("PreToolUse", dispatch(tool_use_id=f"d{i}"), repo, session="dead", via_parent=True)) == ""
    start(repo, "s1", 4)
    assert denied(answer("PreToolUse", dispatch(tool_use_id="s1-t9"), repo, session="s1")) == ""
    assert "[D07]" in denied(answer("PreToolUse", dispatch(tool_use_id="s1-t10"), repo, session="s1"))
    (repo / ".claude" / "swarmgate.toml").write_text("[dispatch]\nmax_concurrent = 50\nmax_concurrent_repo = 0\n")
    start(repo, "s2", 8)


class Teammate:
    """A process started as a teammate is (`--agent-name NAME --parent-session-id LEAD`) that lives until
    closed and runs the real hook for each call, as its parent: the teammate's session process."""
    RUNNER = ("import json,subprocess,sys\n"
              "for line in sys.stdin:\n"
              "    req = json.loads(line)\n"
              "    p = subprocess.run([sys.executable, '-m', 'swarmgate', 'hook', req['event']],\n"
              "                       input=json.dumps(req['payload']), capture_output=True, text=True)\n"
              "    sys.stdout.write(json.dumps({'out': p.stdout, 'err': p.stderr}) + '\\n')\n"
              "    sys.stdout.flush()\n")

    def __init__(self, repo, session="mate-1", name="tester", lead="s1"):
        self.repo, self.session = repo, session
        self.proc = subprocess.Popen([sys.executable, "-c", self.RUNNER, "--agent-name", name, "--team-name", "t",
                                      "--parent-session-id", lead], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd=str(repo), env=dict(os.environ))

    def hook(self, event, payload):
        full = {"session_id": self.session, "transcript_path": "", "cwd": str(self.repo), "hook_event_name": event,
                **payload}
        self.proc.stdin.write(json.dumps({"event": event, "payload": full}) + "\n")
        self.proc.stdin.flush()
        res = json.loads(self.proc.stdout.readline())
        assert res["out"], res["err"]
        return json.loads(res["out"])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        assert self.proc.returncode is not None


def test_a_teammate_is_judged_as_the_team_type_and_counted_while_busy(repo):
    (repo / ".claude" / "swarmgate.toml").write_text(
        '[dispatch]\nmax_concurrent = 3\nmax_concurrent_repo = 10\n[teams]\nagent_type = "tester"\n'
        '[write]\nmain = ["**"]\ntester = ["tests/**"]\n')
    write = lambda p: {"tool_name": "Write", "tool_input": {"file_path": str(repo / p), "content": "x"}}  # noqa: E731
    mate_proc = Teammate(repo)
    try:
        _teammate_scenario(repo, mate_proc, write)
    finally:
        mate_proc.close()
    # its process gone: not counted, whatever it said last
    assert not [r for r in R.live_sessions(str(repo)) if r.get("teammate")]


def _teammate_scenario(repo, mate_proc, write):
    # its calls are a subagent's of type `tester`: its row, not main's
    reason = denied(mate_proc.hook("PreToolUse", write("src/a.py")))
    assert "[W01]" in reason and "agent type `tester`" in reason
    assert denied(mate_proc.hook("PreToolUse", write("tests/a_test.py"))) == ""
    assert "[B01]" in denied(mate_proc.hook("PreToolUse", {"tool_name": "Bash", "tool_input": {
        "command": "SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo test --workspace"}}))
    (mate,) = [r["teammate"] for r in R.live_sessions(str(repo)) if r.get("teammate")]
    assert mate["name"] == "tester" and mate["parent"] == "s1" and mate["busy"]
    # the lead counts it against its own cap: two subagents + the busy teammate = 3
    start(repo, "s1", 2)
    reason = denied(answer("PreToolUse", dispatch(tool_use_id="s1-t9"), repo, session="s1"))
    assert "[D07]" in reason and "teammate tester (busy)" in reason
    # idle: not counted any more; a task given to it makes it busy again
    answer("TeammateIdle", {"teammate_name": "tester", "team_name": "t"}, repo, session="s1")
    assert denied(answer("PreToolUse", dispatch(tool_use_id="s1-t10"), repo, session="s1")) == ""
    answer("SubagentStop", {"agent_id": "s1-a0", "agent_type": "implementer", "last_assistant_message": "done",
                            "stop_hook_active": False, "agent_transcript_path": ""}, repo, session="s1")
    answer("TaskCreated", {"task_id": "7", "task_subject": "more tests", "teammate_name": "tester"}, repo,
           session="s1")
    assert "teammate tester (busy)" in denied(answer("PreToolUse", dispatch(tool_use_id="s1-t11"), repo,
                                                     session="s1"))


def test_status_marks_what_is_yours(repo, tmp_path, monkeypatch):
    (repo / ".claude" / "swarmgate.toml").write_text(CAP5)
    scratch = tmp_path / "build-s2"
    start(repo, "s1", 1)
    assert denied(answer("PreToolUse", dispatch(GOOD + f"scratch: {scratch}\n", tool_use_id="s2-t1", name="b"),
                         repo, session="s2")) == ""
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s2")
    write_alert("too-few-cores", "a run of s2 uses 1 core")       # no session named: the writer's
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s1")
    write_alert("too-few-cores", "a run of s1 uses 1 core")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    rep = status.gather("s2")
    by = {s["session"]: s for s in rep["sessions"]}
    assert set(by) == {"s1", "s2"} and by["s2"]["yours"] and not by["s1"]["yours"]
    assert [a["agent_id"] for a in by["s1"]["running"]] == ["s1-a0"]
    (lock,) = rep["scratch_locks"]
    assert lock["path"] == str(scratch) and lock["yours"]
    assert [(a["message"], a["yours"]) for a in rep["alerts"]] == [("a run of s2 uses 1 core", True),
                                                                   ("a run of s1 uses 1 core", False)]
