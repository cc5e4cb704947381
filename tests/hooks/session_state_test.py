"""Session state: concurrent hook processes lose nothing; liveness by pid + start time."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from swarmgate.hooks import session_state as S
from swarmgate.procinfo import start_time
from tests.hooks.conftest import GOOD, answer, context, denied, dispatch


def test_twenty_concurrent_hook_processes_lose_no_start(repo):
    procs = []
    for i in range(20):
        payload = {"session_id": "conc", "transcript_path": "", "cwd": str(repo),
                   "hook_event_name": "SubagentStart", "agent_id": f"a{i:02d}", "agent_type": "implementer"}
        p = subprocess.Popen([sys.executable, "-m", "swarmgate", "hook", "SubagentStart"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdin.write(json.dumps(payload))
        p.stdin.close()
        procs.append(p)
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
        p.stdout.close()
        p.stderr.close()
    st = S.load("conc")
    assert sorted(st["agents"]) == [f"a{i:02d}" for i in range(20)]
    assert len(S.running(st)) == 20  # their session process (this test) lives


def test_update_under_lock_from_threads_of_processes(tmp_path):
    """Direct API: 5 processes x 10 updates each, all counted."""
    code = ("import sys; from swarmgate.hooks import session_state as S\n"
            "for i in range(10):\n"
            "    S.update('cnt', lambda st: st['dispatches'].append({'id': sys.argv[1] + str(i)}))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, f"p{n}-"]) for n in range(5)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    assert len(S.load("cnt")["dispatches"]) == 50


def test_running_drops_dead_and_reused_session_processes():
    me = {"pid": os.getpid(), "start": start_time(os.getpid())}
    reused = {"pid": os.getpid(), "start": start_time(os.getpid()) + 7}
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    dead = {"pid": p.pid, "start": start_time(p.pid)}
    p.wait()
    st = S.empty("x")
    S.record_start(st, "live", "implementer", me, 1.0)
    S.record_start(st, "gone", "implementer", dead, 2.0)
    S.record_start(st, "reuse", "implementer", reused, 3.0)
    S.record_start(st, "done", "implementer", me, 4.0)
    S.record_stop(st, "done", "implementer", me, 5.0)
    assert [aid for aid, _ in S.running(st)] == ["live"]


def test_corrupt_state_is_rebuilt_not_a_traceback(repo, capsys):
    path = S.state_path("bad")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert S.load("bad")["agents"] == {}
    S.update("bad", lambda st: S.record_start(st, "a1", "clerk", {"pid": 1}, 1.0))
    assert list(S.load("bad")["agents"]) == ["a1"]
    assert "corrupt" in capsys.readouterr().err


def test_a_corrupt_state_is_told_to_the_agent_and_d07_says_its_count_restarted(repo):
    """Not moved aside silently: an alert for the session (C04 brings it to the main agent's next tool
    call), and D07 tells each dispatch that subagents started before the rebuild are not counted."""
    path = S.state_path("s1")
    path.parent.mkdir(parents=True)
    path.write_text('{"session": "s1", "agents": {"a1": {"type": "implementer", "sta')  # torn write
    ans = answer("PreToolUse", dispatch(GOOD), repo)
    note = context(ans)
    assert "state was corrupt and rebuilt" in note and "D07 counts only the subagents started since" in note, ans
    assert not denied(ans)
    assert list(path.parent.glob("state.json.corrupt-*")), "the corrupt copy is kept for a person"
    post = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}}
    told = context(answer("PostToolUse", post, repo))
    assert "RED: swarmgate alerts" in told and "state.json was corrupt" in told, told
    assert "RED: swarmgate alerts" not in context(answer("PostToolUse", post, repo))  # told once
    # a refusal by D07 carries the note too
    (repo / ".claude" / "swarmgate.toml").write_text("[dispatch]\nmax_concurrent = 1\n")
    reason = denied(answer("PreToolUse", dispatch(GOOD, tool_use_id="toolu_2"), repo))
    assert "[D07]" in reason and "state was corrupt and rebuilt" in reason, reason
    # an hour later the note is gone
    S.update("s1", lambda st: st["rebuilt"].update(time=st["rebuilt"]["time"] - S.REBUILT_NOTE_S - 1))
    (repo / ".claude" / "swarmgate.toml").write_text("")
    assert "corrupt" not in context(answer("PreToolUse", dispatch(GOOD, tool_use_id="toolu_3"), repo))


def test_start_links_oldest_dispatch_of_its_type_and_stop_relinks_by_prompt():
    st = S.empty("x")
    me = {"pid": os.getpid(), "start": start_time(os.getpid())}
    S.record_dispatch(st, tool_use_id="t1", agent_type="implementer", name="one", proc=me, now=1.0,
                      background=True, scratch=["/s/1"], prompt_digest="d1")
    S.record_dispatch(st, tool_use_id="t2", agent_type="implementer", name="two", proc=me, now=2.0,
                      background=True, scratch=["/s/2"], prompt_digest="d2")
    # the second dispatch's agent starts first: linked to t1 by order...
    S.record_start(st, "A2", "implementer", me, 3.0)
    S.record_start(st, "A1", "implementer", me, 4.0)
    assert st["agents"]["A2"]["name"] == "one"
    # ...and its transcript's prompt corrects it at stop, swapping the other link
    S.record_stop(st, "A2", "implementer", me, 5.0, prompt_digest="d2")
    assert st["agents"]["A2"]["name"] == "two" and S.dispatch_of(st, "A2")["scratch"] == ["/s/2"]
    assert st["agents"]["A1"]["name"] == "one" and S.dispatch_of(st, "A1")["id"] == "t1"


def test_session_process_walks_past_a_shell():
    """Run through `sh -c` (as Claude Code may): the session process is the shell's parent."""
    code = "from swarmgate.hooks.session_state import session_process as s; print(s()['pid'])"
    out = subprocess.run(["sh", "-c", f"{sys.executable} -c \"{code}\"; true"], capture_output=True, text=True)
    assert int(out.stdout.strip()) == os.getpid()


def test_a_resumed_agent_runs_again():
    me = {"pid": os.getpid(), "start": start_time(os.getpid())}
    st = S.empty("x")
    S.record_start(st, "a1", "clerk", me, 1.0)
    S.record_stop(st, "a1", "clerk", me, 2.0)
    assert S.running(st) == []
    S.record_start(st, "a1", "clerk", me, 3.0)
    assert [aid for aid, _ in S.running(st)] == ["a1"] and st["agents"]["a1"]["resumed"] == 1


def test_meta_json_links_each_agent_to_its_own_dispatch(repo, tmp_path):
    """Two dispatches of one type with the same prompt start in the other order: the guess by type
    swaps them; the toolUseId Claude Code writes in each subagent's meta.json puts them right at the
    hand-back (and a case-variant type still links)."""
    transcript = tmp_path / "proj" / "s1.jsonl"
    subs = tmp_path / "proj" / "s1" / "subagents"
    subs.mkdir(parents=True)
    answer("PreToolUse", dispatch(tool_use_id="toolu_A", name="first"), repo)
    answer("PreToolUse", dispatch(tool_use_id="toolu_B", name="second", agent_type="IMPLEMENTER"), repo)
    for aid in ("agB", "agA"):   # B's agent starts first: the oldest dispatch (A's) is guessed for it
        answer("SubagentStart", {"agent_id": aid, "agent_type": "implementer", "transcript_path": str(transcript)},
               repo)
    st = S.load("s1")
    assert st["agents"]["agB"]["dispatch"] == "toolu_A"   # the guess, wrong
    for aid, tid in (("agA", "toolu_A"), ("agB", "toolu_B")):
        (subs / f"agent-{aid}.meta.json").write_text(json.dumps({"agentType": "implementer", "toolUseId": tid}))
    answer("SubagentStop", {"agent_id": "agB", "agent_type": "implementer", "transcript_path": str(transcript),
                            "last_assistant_message": "done", "stop_hook_active": False,
                            "agent_transcript_path": ""}, repo)
    st = S.load("s1")
    assert st["agents"]["agB"]["dispatch"] == "toolu_B" and st["agents"]["agB"]["name"] == "second"
    assert st["agents"]["agB"]["linked_by"] == "meta.json"
    assert S.dispatch_by_id(st, "toolu_B")["agent"] == "agB"
    # the agent whose guess was taken gets the other dispatch, and its own record confirms it later
    assert st["agents"]["agA"]["dispatch"] == "toolu_A" and S.dispatch_by_id(st, "toolu_A")["agent"] == "agA"
    assert S.link_exact(st, "agA", "toolu_A") and not S.link_exact(st, "agA", "toolu_B")
