"""D01 D07 D12 D15 D16 D20 D21 through the hook entry point, main agent and subagent."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from swarmgate.agents.dispatch_prompt import skeleton
from swarmgate.config import load_config
from swarmgate.hooks import scratch_locks
from swarmgate.hooks import session_state as S
from swarmgate.procinfo import start_time
from swarmgate.statefile import write_json_atomic
from tests import builders as build
from tests.hooks.conftest import GOOD, answer, denied, dispatch, hook
from tests.processes import terminate


def codes(reason: str) -> set:
    return set(re.findall(r"\[([A-Z]\d\d)\]", reason))


def test_good_dispatch_allowed_and_recorded(repo):
    ans = answer("PreToolUse", dispatch(name="parser", run_in_background=True), repo)
    assert denied(ans) == ""
    st = S.load("s1")
    assert [(d["id"], d["type"], d["name"], d["background"]) for d in st["dispatches"]] == \
        [("toolu_1", "implementer", "parser", True)]


def test_general_purpose_refused_naming_clerk(repo):
    reason = denied(answer("PreToolUse", dispatch(agent_type="general-purpose"), repo))
    assert codes(reason) == {"D12"}
    assert "clerk" in reason and "denied_types" in reason
    # no subagent_type at all means general-purpose in Claude Code
    ti = dispatch()
    del ti["tool_input"]["subagent_type"]
    assert codes(denied(answer("PreToolUse", ti, repo))) == {"D12"}


def test_task_tool_name_is_judged_too(repo):
    ans = answer("PreToolUse", dict(dispatch("task: x\n"), tool_name="Task"), repo)
    assert "D01" in codes(denied(ans))


def test_d01_missing_heavy_line_names_the_line(repo):
    reason = denied(answer("PreToolUse", dispatch(f"task: x\nthread cap: {build.THREADS}\n"), repo))
    assert codes(reason) == {"D01"}
    assert "heavy test: do not run" in reason


def test_d01_wording_from_config(repo):
    (repo / ".claude" / "swarmgate.toml").write_text('[dispatch]\nheavy_line = "重型テスト：実行しない"\n')
    assert "D01" in codes(denied(answer("PreToolUse", dispatch(), repo)))
    ok = dispatch(f"task: x\n重型テスト：実行しない\nthread cap: {build.THREADS}\n")
    assert denied(answer("PreToolUse", ok, repo)) == ""


def test_subagent_dispatching_is_judged_the_same(repo):
    payload = dict(dispatch("task: x\n"), agent_id="a1", agent_type="implementer")
    assert "D01" in codes(denied(answer("PreToolUse", payload, repo)))


@pytest.mark.parametrize("cap, refused", [
    ("thread cap: {n}", False),
    ("thread cap: {n} (fewer if busy)", True),
    ("thread cap: {other}", True),
    ("thread cap: {other}\nthread cap reason: the replay tool deadlocks above that many threads", False),
    ("thread cap: {other}\nthread cap reason: <why fill in>", True),
    ("thread cap: {n}\nthread cap: {other}", True),
    ("thread cap: all of them", True),
])
def test_d15_thread_cap(repo, cap, refused):
    """The default config registers auto: this machine's cores less one (n); any other number needs a reason."""
    prompt = "task: x\nheavy test: do not run\n" + cap.format(n=build.THREADS, other=build.THREADS + 15) + "\n"
    reason = denied(answer("PreToolUse", dispatch(prompt), repo))
    assert ("D15" in codes(reason)) is refused, reason


def test_d15_value_comes_from_the_config(repo):
    (repo / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = 16\n")
    assert "D15" in codes(denied(answer("PreToolUse", dispatch(GOOD.replace(f"cap: {build.THREADS}", "cap: 17")),
                                        repo)))
    assert denied(answer("PreToolUse", dispatch(GOOD.replace(f"cap: {build.THREADS}", "cap: 16")), repo)) == ""


def test_d20_skeleton_as_printed_is_refused_until_filled(repo):
    sk = skeleton(str(repo), load_config(str(repo)), "implementer")
    reason = denied(answer("PreToolUse", dispatch(sk), repo))
    assert "D20" in codes(reason) and "fill in>" in reason
    filled = re.sub(r"<([^<>\n]*) fill in>", lambda m: f"/tmp/x-{m.group(1).replace(' ', '-')}", sk)
    assert denied(answer("PreToolUse", dispatch(filled), repo)) == ""


def test_d21_unknown_types(repo):
    for t in ("implementor", "../agents/implementer", "implementer.md"):
        reason = denied(answer("PreToolUse", dispatch(agent_type=t), repo))
        assert codes(reason) == {"D21"}, (t, reason)
        assert "implementer" in reason  # names the defined types


def test_d21_resolves_types_as_claude_code_does(repo, tmp_path):
    """Case-insensitive frontmatter names, user-level agents, the built-ins; D12 on what resolves."""
    (repo / ".claude" / "agents" / "impl-v2.md").write_text("---\nname: parser-writer\ndescription: x\n---\nx\n")
    user = tmp_path / "home" / ".claude" / "agents"
    user.mkdir(parents=True)
    (repo / ".claude" / "swarmgate.toml").write_text("[dispatch]\nmax_concurrent = 50\n")
    (user / "mine.md").write_text("---\nname: my-helper\ndescription: x\n---\nx\n")
    for i, t in enumerate(("Implementer", "IMPLEMENTER", "parser-writer", "Parser-Writer", "my-helper",
                           "Explore", "plan", "fork")):
        assert denied(answer("PreToolUse", dispatch(agent_type=t, tool_use_id=f"t{i}"), repo)) == "", t
    assert "D21" in codes(denied(answer("PreToolUse", dispatch(agent_type="impl-v2"), repo)))  # a file name
    for t in ("general-purpose", "General-Purpose", "GENERAL-PURPOSE"):
        reason = denied(answer("PreToolUse", dispatch(agent_type=t), repo))
        assert codes(reason) == {"D12"}, (t, reason)
    # the dispatch is recorded under the type that runs, so SubagentStart links it
    answer("PreToolUse", dispatch(agent_type="IMPLEMENTER", tool_use_id="t-case", name="caser"), repo)
    answer("SubagentStart", {"agent_id": "a-case", "agent_type": "implementer"}, repo)
    st = S.load("s1")
    assert S.dispatch_by_id(st, "t-case")["type"] == "implementer"


def test_d07_sixth_running_subagent_refused(repo):
    for i in range(5):
        assert denied(answer("PreToolUse", dispatch(tool_use_id=f"t{i}", name=f"w{i}"), repo)) == ""
        answer("SubagentStart", {"agent_id": f"a{i}", "agent_type": "implementer"}, repo)
    reason = denied(answer("PreToolUse", dispatch(tool_use_id="t5"), repo))
    assert codes(reason) == {"D07"}
    assert "a0" in reason and "max_concurrent" in reason
    # one hands back: the next dispatch goes through
    answer("SubagentStop", {"agent_id": "a2", "agent_type": "implementer", "last_assistant_message": "done",
                            "stop_hook_active": False, "agent_transcript_path": ""}, repo)
    assert denied(answer("PreToolUse", dispatch(tool_use_id="t6"), repo)) == ""


def test_d07_quick_dispatches_count_before_they_start(repo):
    for i in range(5):
        assert denied(answer("PreToolUse", dispatch(tool_use_id=f"q{i}", run_in_background=True), repo)) == ""
    assert codes(denied(answer("PreToolUse", dispatch(tool_use_id="q5"), repo))) == {"D07"}


def test_d07_other_sessions_do_not_count(repo):
    for i in range(5):
        answer("SubagentStart", {"agent_id": f"a{i}", "agent_type": "implementer"}, repo, session="other")
    assert denied(answer("PreToolUse", dispatch(), repo, session="mine")) == ""


def test_d07_refused_dispatches_do_not_count(repo):
    for i in range(8):
        assert "D01" in codes(denied(answer("PreToolUse", dispatch("task: x\n", tool_use_id=f"r{i}"), repo)))
    assert denied(answer("PreToolUse", dispatch(), repo)) == ""


def test_d07_crashed_session_never_blocks(repo):
    """Starts recorded by a session process that has since died do not count (real processes)."""
    for i in range(5):
        hook("SubagentStart", {"agent_id": f"a{i}", "agent_type": "implementer"}, repo, via_parent=True)
    st = S.load("s1")
    assert len(st["agents"]) == 5 and S.running(st) == []
    assert denied(hook("PreToolUse", dispatch(), repo)) == ""


def test_d07_warn_mode_lets_through_and_says_so(repo):
    (repo / ".claude" / "swarmgate.toml").write_text('[dispatch]\nmax_concurrent = 1\n[guards]\nD07 = "warn"\n')
    answer("SubagentStart", {"agent_id": "a0", "agent_type": "implementer"}, repo)
    ans = answer("PreToolUse", dispatch(), repo)
    assert denied(ans) == ""
    assert "D07" in (ans.get("hookSpecificOutput") or {}).get("additionalContext", "")


# --- D16 -------------------------------------------------------------------------------

def _scratch_prompt(path) -> str:
    return GOOD + f"scratch: {path}\n"


def test_d16_second_holder_refused_then_released_at_subagent_stop(repo, tmp_path):
    scratch = tmp_path / "build-a"
    first = dispatch(_scratch_prompt(scratch), tool_use_id="x1", name="builder")
    assert denied(answer("PreToolUse", first, repo, session="s1")) == ""
    answer("SubagentStart", {"agent_id": "ag1", "agent_type": "implementer"}, repo, session="s1")
    # another session names the same directory (relative spelling resolving to it too)
    second = dispatch(_scratch_prompt(scratch), tool_use_id="y1")
    reason = denied(answer("PreToolUse", second, repo, session="s2"))
    assert codes(reason) == {"D16"}
    assert "session s1" in reason and "builder" in reason and "ag1" in reason
    # the same session cannot double-book it either
    assert codes(denied(answer("PreToolUse", dispatch(_scratch_prompt(scratch), tool_use_id="x2"), repo,
                               session="s1"))) == {"D16"}
    # the holder hands back: the lock is released
    stop = answer("SubagentStop", {"agent_id": "ag1", "agent_type": "implementer", "last_assistant_message": "ok",
                                   "stop_hook_active": False, "agent_transcript_path": ""}, repo, session="s1")
    assert "scratch locks released" in stop.get("systemMessage", "")
    assert scratch_locks.held() == []
    assert denied(answer("PreToolUse", second, repo, session="s2")) == ""
    assert [r["session"] for r in scratch_locks.held()] == ["s2"]


def test_d16_pending_dispatch_holds_the_lock(repo, tmp_path):
    scratch = tmp_path / "b"
    assert denied(answer("PreToolUse", dispatch(_scratch_prompt(scratch), tool_use_id="p1"), repo)) == ""
    assert "D16" in codes(denied(answer("PreToolUse", dispatch(_scratch_prompt(scratch), tool_use_id="p2"),
                                        repo, session="s2")))


def _plant_lock(path, pid, start, session="ghost", since=None):
    norm = scratch_locks.normal_path(str(path), "/")
    write_json_atomic(scratch_locks.record_path(norm),
                      {"path": norm, "session": session, "dispatch": "toolu_ghost", "name": "ghost",
                       "type": "implementer", "pid": pid, "start": start,
                       "since": time.time() if since is None else since})


def test_d16_pid_reused_is_stale(repo, tmp_path):
    """A record with the right pid but the wrong start time is a reused pid: taken over."""
    scratch = tmp_path / "c"
    me = os.getpid()
    _plant_lock(scratch, me, start_time(me) + 1)
    assert denied(answer("PreToolUse", dispatch(_scratch_prompt(scratch)), repo)) == ""
    # the same record with the right start time is a live holder (dispatched just now)
    _plant_lock(tmp_path / "d", me, start_time(me))
    reason = denied(answer("PreToolUse", dispatch(_scratch_prompt(tmp_path / "d"), tool_use_id="z"), repo))
    assert "D16" in codes(reason) and f"pid {me}" in reason


def test_d16_dead_holder_is_stale(repo, tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        st = start_time(p.pid)
        _plant_lock(tmp_path / "e", p.pid, st)
        assert "D16" in codes(denied(answer("PreToolUse", dispatch(_scratch_prompt(tmp_path / "e")), repo)))
    finally:
        terminate(p)
    assert denied(answer("PreToolUse", dispatch(_scratch_prompt(tmp_path / "e"), tool_use_id="n"), repo)) == ""


def test_d16_not_taken_when_another_guard_refuses(repo, tmp_path):
    ans = answer("PreToolUse", dispatch("task: x\nscratch: " + str(tmp_path / "f") + "\n"), repo)
    assert "D01" in codes(denied(ans))
    assert scratch_locks.held() == []


def test_agent_dispatch_via_real_entry_point(repo):
    """One real `swarmgate hook PreToolUse` process: the refusal JSON Claude Code reads."""
    ans = hook("PreToolUse", dispatch(agent_type="general-purpose"), repo)
    hso = ans["hookSpecificOutput"]
    assert hso["permissionDecision"] == "deny"
    assert "[D12]" in hso["permissionDecisionReason"] and "Way out:" in hso["permissionDecisionReason"]
    log = (repo / ".swarmgate" / "log" / "decisions.jsonl").read_text().splitlines()
    assert json.loads(log[-1])["codes"] == ["D12"]
