import json
import os
import shutil
import subprocess
import sys
import time

import psutil
import pytest

from swarmgate.agents import swarm_watch as W
from swarmgate.agents.handover import project_dir_name
from swarmgate.alerts import all_alerts
from swarmgate.config import Config, validate
from swarmgate.hosts import ledger
from swarmgate.procinfo import start_time
from swarmgate.selftest import run_suite
from tests.processes import terminate

SESSION = "sess-watch-1"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    repo.mkdir()
    projects = tmp_path / "projects"
    return repo, projects


def _config(**watch):
    return Config(validate({"watch": watch}), None, None, {})


def _iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".000Z"


def _write_transcript(projects, repo, entries, agent=None):
    base = projects / project_dir_name(str(repo))
    path = base / f"{SESSION}.jsonl" if agent is None else base / SESSION / "subagents" / f"agent-{agent}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not (base / f"{SESSION}.jsonl").exists():
        (base / f"{SESSION}.jsonl").write_text("")
    with open(path, "a") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")


def _use(tid, command, t, cwd):
    return {"type": "assistant", "timestamp": _iso(t), "cwd": cwd, "sessionId": SESSION,
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Bash",
                                                          "input": {"command": command}}]}}


def _result(tid, text, t, error=False):
    return {"type": "user", "timestamp": _iso(t), "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}]}}


def test_long_call_heavy_without_prefix_and_wait_loop(env):
    repo, projects = env
    now = time.time()
    _write_transcript(projects, repo, [
        _use("t1", "sleep 1000", now - 20 * 60, str(repo)),                 # still running, 20 min
        _use("t2", "ls", now - 60, str(repo)), _result("t2", "a b", now - 59),
    ])
    _write_transcript(projects, repo, [
        _use("s1", "cargo test --workspace", now - 300, str(repo)), _result("s1", "ok", now - 100),
        _use("s2", "while true; do sleep 5; done", now - 90, str(repo)), _result("s2", "", now - 80),
        _use("s3", "cargo test --workspace", now - 70, str(repo)),
        _result("s3", "PreToolUse:Bash hook error: [B01] refused", now - 69, error=True),
    ], agent="abc123")
    reports = W.tick(SESSION, str(repo), None, _config(), str(projects), now=now)
    kinds = sorted(r.kind for r in reports)
    assert kinds == ["heavy-without-prefix", "tool-call-running", "wait-loop-without-timeout"], reports
    long_ = [r for r in reports if r.kind == "tool-call-running"][0]
    assert "main's Bash call has run 20 min" in long_.message
    assert {a["kind"] for a in all_alerts()} == {"watch:heavy-without-prefix", "watch:tool-call-running",
                                                "watch:wait-loop-without-timeout"}
    # a second tick reports the same findings without writing the alerts again
    W.tick(SESSION, str(repo), None, _config(), str(projects), now=now + 60)
    assert len(all_alerts()) == 3


def test_nothing_to_report_on_a_quiet_healthy_session(env):
    repo, projects = env
    now = time.time()
    _write_transcript(projects, repo, [_use("t1", "git status", now - 30, str(repo)), _result("t1", "", now - 29)])
    assert W.tick(SESSION, str(repo), None, _config(), str(projects), now=now) == []


def test_repeated_command_with_same_output():
    hist = [{"session": SESSION, "command": "pytest -q", "output_sha": "abc"} for _ in range(3)]
    assert [r.kind for r in W.repeated(hist, SESSION)] == ["repeated-command"]
    hist[1]["output_sha"] = "def"
    assert W.repeated(hist, SESSION) == []


def test_idle_only_while_subagents_run():
    now = time.time()
    assert W.idle(now - 11 * 60, now, 10, 2)[0].kind == "no-activity"
    assert W.idle(now - 11 * 60, now, 10, 0) == []
    assert W.idle(now - 5 * 60, now, 10, 2) == []


def test_rss_over_bound_escalates_to_a_stop_only_when_unacknowledged(env, tmp_path):
    repo, projects = env
    # the "session process" and its child that holds ~60 MiB
    session_proc = subprocess.Popen([sys.executable, "-c",
                                     ("import subprocess,sys; p=subprocess.Popen([sys.executable,'-c',"
                                      "'b=bytearray(60*2**20); import time; time.sleep(60)']); p.wait()")])
    try:
        deadline = time.monotonic() + 60  # generous: the machine may be loaded; the loop ends as soon as it holds
        while True:
            kids = psutil.Process(session_proc.pid).children()
            if kids and kids[0].memory_info().rss > 50 * 2**20:
                break
            assert time.monotonic() < deadline, "the child never came to hold 60 MiB"
            time.sleep(0.1)
        child = kids[0].pid
        cfg = _config(rss_bound="40M", kill_after_reports=2)
        r1 = W.tick(SESSION, str(repo), session_proc.pid, cfg, str(projects))
        assert [r.kind for r in r1] == ["rss-over-bound"] and psutil.pid_exists(child)
        assert subprocess.run([sys.executable, "-m", "swarmgate", "swarm-watch", "ack", "all", "--session",
                               SESSION], env=dict(os.environ)).returncode == 0
        W.tick(SESSION, str(repo), session_proc.pid, cfg, str(projects))
        assert psutil.Process(child).status() != psutil.STATUS_ZOMBIE  # acknowledged: not stopped
        # a new finding (unacknowledged) reported twice in a row is stopped by pid
        state = json.loads(open(W._state_path(SESSION)).read())
        state["findings"] = {}
        open(W._state_path(SESSION), "w").write(json.dumps(state))
        W.tick(SESSION, str(repo), session_proc.pid, cfg, str(projects))
        W.tick(SESSION, str(repo), session_proc.pid, cfg, str(projects))
        session_proc.wait(60)
        assert not psutil.pid_exists(child)
        assert any(a["kind"] == "watch:stopped" and a.get("pid") == child for a in all_alerts())
    finally:
        alive = psutil.pid_exists(session_proc.pid)
        for p in psutil.Process(session_proc.pid).children(recursive=True) if alive else []:
            terminate(p)
        terminate(session_proc)


def test_stalled_file_and_work_after_handback(tmp_path):
    f = tmp_path / "out.log"
    f.write_text("x")
    procs = [{"pid": 1, "start": 1, "cmd": "job", "rss": 0, "created": 0, "cwd": str(tmp_path / "scr"),
              "files": [str(f)]}]
    now = time.time()
    reps, sizes = W.stalled_files(procs, {}, now, 20)
    assert reps == []
    reps, sizes = W.stalled_files(procs, sizes, now + 21 * 60, 20)
    assert reps[0].kind == "file-not-growing"
    (tmp_path / "scr").mkdir()
    out = W.after_handback([{"agent": "a1", "dirs": [str(tmp_path / "scr")]}], procs)
    assert [r.kind for r in out] == ["work-after-handback"]
    out = W.after_handback([{"agent": "a1", "dirs": [str(tmp_path / "scr")]}], [])
    assert [r.kind for r in out] == ["copy-left-after-handback"]


def test_cli_once_and_usage(env, tmp_path):
    repo, projects = env
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "swarm-watch", "--once"], capture_output=True, text=True)
    assert cp.returncode == 251 and "--session" in cp.stderr
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "swarm-watch", "--once", "--session", SESSION,
                         "--cwd", str(repo), "--transcripts", str(projects)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr


def test_a01_starts_one_watchdog_per_session_which_ends_with_its_project(env, tmp_path):
    repo, projects = env
    hook = os.path.join(os.path.dirname(sys.executable), "swarmgate")
    payload = json.dumps({"session_id": "sess-a01", "cwd": str(repo), "hook_event_name": "PostToolUse",
                          "tool_name": "Agent", "tool_input": {"subagent_type": "clerk", "prompt": "p"},
                          "tool_response": {}})
    e = dict(os.environ, CLAUDE_PROJECT_DIR=str(repo))
    out = json.loads(subprocess.run([hook, "hook", "PostToolUse"], input=payload, capture_output=True, text=True,
                                    env=e, timeout=120).stdout)
    assert "[A01] swarm-watch started" in out["hookSpecificOutput"]["additionalContext"]
    started = int(out["hookSpecificOutput"]["additionalContext"].split("(pid ")[1].split(")")[0])
    try:
        # running as soon as A01 has answered, before its interpreter is up: the wake waiter at the Stop that
        # follows the dispatch reads it at once, and would give up on a watchdog not yet marked
        assert (W.running_instance("sess-a01") or {}).get("pid") == started, "not marked running when A01 answered"
        deadline = time.monotonic() + 60  # polls end as soon as the condition holds; 60 s only bounds a loaded machine
        inst = None
        while time.monotonic() < deadline and inst is None:
            inst = W.running_instance("sess-a01")
            time.sleep(0.1)
        assert inst, "no watchdog registered"
        assert inst["pid"] == started
        out2 = json.loads(subprocess.run([hook, "hook", "PostToolUse"], input=payload, capture_output=True,
                                         text=True, env=e, timeout=120).stdout)
        assert "A01" not in json.dumps(out2)  # one per session
        shutil.rmtree(repo)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _running(started):
            time.sleep(0.1)
        assert not _running(started), "the watchdog outlived its project"
    finally:
        if _running(started):  # never leave the watchdog behind, even when an assertion failed
            terminate(started)


def _running(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_selftest_switch_turns_its_cell_red(env):
    res = run_suite(W.selftest_suite())
    assert res.ok, res.rows
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "swarm-watch", "--selftest"], capture_output=True,
                        text=True, timeout=120)
    assert cp.returncode == 0 and "watch-silent" in cp.stdout, cp.stdout + cp.stderr


BURN = "import time\nwhile True:\n    sum(range(10000))\n"


def _plant_booking(pid: int, session: str, age_s: float) -> str:
    start = start_time(pid)
    bid = ledger.booking_id(pid, start)
    with ledger.lock():
        data = ledger.load()
        data["bookings"][bid] = {"label": "replay --all", "cap": 1 << 30, "booked": 1 << 30, "basis": "cap",
                                 "pid": pid, "start": start, "cgroup": "", "since": time.time() - age_s,
                                 "session": session}
        ledger.save(data)
    return bid


@pytest.mark.parametrize("heavy_default, serial, other_session, reported", [
    (31, False, False, True),    # one busy thread where 31 are registered: too few cores
    (4, False, False, False),    # 1 thread computing >= 4/4: enough
    (31, True, False, False),    # the run declared a serial phase
    (31, False, True, False),    # another session's run is not this watchdog's
])
def test_a_long_capped_run_using_too_few_cores_is_reported(env, tmp_path, heavy_default, serial, other_session,
                                                           reported):
    repo, projects = env
    state_file = tmp_path / "run.state"
    state_file.write_text("phase 2\nserial now: replaying one log in order\n" if serial else "phase 2\n")
    burner = subprocess.Popen([sys.executable, "-c", BURN],
                              env={**os.environ, "SWARMGATE_STATE_FILE": str(state_file)})
    try:
        _plant_booking(burner.pid, "someone-else" if other_session else SESSION, age_s=20 * 60)
        cfg = Config(validate({"threads": {"heavy_default": heavy_default}}), None, None, {})
        t0 = time.time()
        assert [r for r in W.tick(SESSION, str(repo), None, cfg, str(projects), now=t0)
                if r.kind == "too-few-cores"] == []  # the first tick only samples
        time.sleep(1.0)
        second = [r for r in W.tick(SESSION, str(repo), None, cfg, str(projects), now=t0 + 61)
                  if r.kind == "too-few-cores"]
        assert bool(second) == reported, second
        if reported:
            assert "replay --all" in second[0].message and "too few cores" in second[0].message
            assert second[0].pid is None  # reported, never stopped
            assert [a["kind"] for a in all_alerts()].count("watch:too-few-cores") == 1
            # a tick too soon to judge again keeps the finding (no second alert, not "resolved")
            third = W.tick(SESSION, str(repo), None, cfg, str(projects), now=t0 + 70)
            assert [r.kind for r in third].count("too-few-cores") == 1
            assert [a["kind"] for a in all_alerts()].count("watch:too-few-cores") == 1
    finally:
        terminate(burner)


def test_a_young_run_is_not_judged(env):
    repo, projects = env
    burner = subprocess.Popen([sys.executable, "-c", BURN])
    try:
        _plant_booking(burner.pid, SESSION, age_s=60)
        assert W.long_runs(SESSION, time.time(), 10) == []
        assert [r["label"] for r in W.long_runs(SESSION, time.time() + 600, 10)] == ["replay --all"]
    finally:
        terminate(burner)
