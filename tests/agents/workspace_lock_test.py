"""workspace-lock: pid + start time liveness with real processes, stale takeover, pid reuse,
waiting reports, 248 on timeout, the CLI holding for its parent shell, the context manager."""
from __future__ import annotations

import io
import json
import multiprocessing
import os
import subprocess
import threading

import pytest

from swarmgate.agents import workspace_lock as wl
from swarmgate.procinfo import is_alive, start_time
from swarmgate.statefile import StateError
from tests.agents.support import tool
from tests.processes import terminate


@pytest.fixture
def sleeper():
    """A real process to hold locks; killed and reaped at the end (asserted gone)."""
    procs = []

    def start() -> subprocess.Popen:
        p = subprocess.Popen(["sleep", "120"])
        procs.append(p)
        return p

    yield start
    for p in procs:
        terminate(p)
        assert not is_alive(p.pid, None)


def holder_of(proc, **extra) -> dict:
    return {"pid": proc.pid, "start": start_time(proc.pid), "session": "other-session",
            "command": "make merge", "since": "2026-11-29T10:00:00Z", **extra}


def write_record(path, rec) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(wl.format_record(rec))


def test_free_lock_is_taken_and_record_has_every_field(tmp_path):
    path = tmp_path / "lock"
    owner = wl.make_owner(None, "s1", "cargo build")
    assert wl.try_take(path, owner) == (True, None)
    text = path.read_text()
    for key in ("pid=", "start=", "session=s1", "command=cargo build", "since="):
        assert key in text
    rec = wl.read_holder(path)
    assert rec["pid"] == os.getpid() and rec["start"] == start_time(os.getpid())


def test_empty_record_is_free(tmp_path):
    path = tmp_path / "lock"
    path.write_text("")
    assert wl.try_take(path, wl.make_owner(None, "s1"))[0]


def test_live_holder_blocks_then_dead_holder_is_taken_over(tmp_path, sleeper):
    path = tmp_path / "lock"
    proc = sleeper()
    write_record(path, holder_of(proc))
    taken, holder = wl.try_take(path, wl.make_owner(None, "me"))
    assert not taken and holder["pid"] == proc.pid and holder["session"] == "other-session"
    proc.kill()
    proc.wait()
    taken, holder = wl.try_take(path, wl.make_owner(None, "me"))
    assert taken and holder["pid"] == proc.pid  # the stale holder is reported
    assert wl.read_holder(path)["session"] == "me"


def test_reused_pid_reads_as_stale(tmp_path, sleeper):
    """A live pid whose start time differs from the record: another process got the pid."""
    path = tmp_path / "lock"
    proc = sleeper()
    write_record(path, holder_of(proc, start=start_time(proc.pid) - 1))
    assert not wl.holder_live(wl.read_holder(path))
    taken, holder = wl.try_take(path, wl.make_owner(None, "me"))
    assert taken and holder["pid"] == proc.pid
    assert proc.poll() is None  # the process that reused the pid is left alone


def test_corrupt_record_is_taken_over(tmp_path):
    path = tmp_path / "lock"
    path.write_text("\x00garbage without a pid\n")
    taken, holder = wl.try_take(path, wl.make_owner(None, "me"))
    assert taken and "corrupt" in holder


def test_symlink_planted_on_the_record_is_refused(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    path = tmp_path / "lock"
    path.symlink_to(target)
    with pytest.raises(StateError):
        wl.try_take(path, wl.make_owner(None, "me"))
    assert target.read_text() == "keep me\n"


def test_custom_liveness_for_scratch_locks(tmp_path):
    """D16 passes its own test (e.g. 'the agent is still running')."""
    path = tmp_path / "scratch.lock"
    wl.try_take(path, wl.make_owner(None, "s", agent="a1"))
    taken, holder = wl.try_take(path, wl.make_owner(None, "s", agent="a2"), alive=lambda h: h.get("agent") == "a1")
    assert not taken and holder["agent"] == "a1"
    taken, _ = wl.try_take(path, wl.make_owner(None, "s", agent="a2"), alive=lambda h: False)
    assert taken and wl.read_holder(path)["agent"] == "a2"


def test_waiting_reports_the_holder_and_times_out_with_248(tmp_path, sleeper):
    proc = sleeper()
    state = tmp_path / "state"
    path = wl.lock_path("merge")
    write_record(path, holder_of(proc))
    p = subprocess.run([tool("workspace-lock"), "acquire", "--name", "merge", "--timeout", "1.2",
                        "--report-every", "0.3", "--session", "me"],
                       capture_output=True, text=True, env={**os.environ, "SWARMGATE_STATE_DIR": str(state)})
    assert p.returncode == 248, p.stderr
    reports = [ln for ln in p.stderr.splitlines() if "held by session other-session" in ln and "waiting" in ln]
    assert len(reports) >= 2, p.stderr
    assert f"pid {proc.pid}" in reports[0] and "make merge" in reports[0]
    assert "not acquired within 1.2s" in p.stderr
    assert wl.read_holder(path)["pid"] == proc.pid  # untouched


def test_waiter_takes_the_lock_when_the_holder_dies(tmp_path, sleeper):
    proc = sleeper()
    path = tmp_path / "lock"
    write_record(path, holder_of(proc))
    out = io.StringIO()
    result = {}

    def wait() -> None:
        result["stale"] = wl.acquire(path, wl.make_owner(None, "me"), timeout=60, report_every=0.1,
                                     out=out, poll=0.05)

    t = threading.Thread(target=wait)
    t.start()
    while "held by" not in out.getvalue():
        t.join(0.05)
    proc.kill()
    proc.wait()
    t.join(60)
    assert not t.is_alive()
    assert result["stale"]["pid"] == proc.pid
    assert "took over a stale lock" in out.getvalue()
    assert wl.read_holder(path)["session"] == "me"


def test_cli_acquire_holds_for_the_parent_shell(tmp_path):
    sh = ("workspace-lock acquire --name n --session s1 --timeout 0 >/dev/null 2>&1; "
          "workspace-lock status --name n --json; echo shell=$$")
    env = {**os.environ, "PATH": f"{os.path.dirname(tool('workspace-lock'))}:{os.environ['PATH']}"}
    p = subprocess.run(["bash", "-c", sh], capture_output=True, text=True, env=env)
    status = json.loads(p.stdout.splitlines()[0])
    shell_pid = int(p.stdout.splitlines()[1].split("=")[1])
    assert status["live"] and status["holder"]["pid"] == shell_pid and status["holder"]["session"] == "s1"
    # the shell has exited: the lock is stale now, and status says so
    p = subprocess.run([tool("workspace-lock"), "status", "--name", "n"], capture_output=True, text=True)
    assert "stale" in p.stdout
    p = subprocess.run([tool("workspace-lock"), "acquire", "--name", "n", "--timeout", "0", "--session", "s2"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "took over a stale lock" in p.stderr


def test_cli_acquire_holds_for_the_claude_code_session_process(sleeper):
    """Claude Code exports CLAUDE_PID to Bash calls; each call's shell exits at once."""
    bindir = os.path.dirname(tool("workspace-lock"))
    inner = "workspace-lock acquire --name n --session s1 --timeout 0 >/dev/null 2>&1"
    sh = f'CLAUDE_PID=$$ bash -c "{inner}"; workspace-lock status --name n --json; echo outer=$$'
    p = subprocess.run(["bash", "-c", sh], capture_output=True, text=True,
                       env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"})
    status = json.loads(p.stdout.splitlines()[0])
    assert status["holder"]["pid"] == int(p.stdout.splitlines()[1].split("=")[1]) and status["live"]
    # a CLAUDE_PID that is not our ancestor is not trusted: the parent shell holds it
    stranger = sleeper()
    sh = ("workspace-lock acquire --name m --timeout 0 >/dev/null 2>&1; "
          "workspace-lock status --name m --json; echo sh=$$")
    p = subprocess.run(["bash", "-c", sh], capture_output=True, text=True,
                       env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "CLAUDE_PID": str(stranger.pid)})
    status = json.loads(p.stdout.splitlines()[0])
    assert status["holder"]["pid"] == int(p.stdout.splitlines()[1].split("=")[1]) != stranger.pid


def test_cli_acquire_for_a_pid_and_release_rules(sleeper):
    proc = sleeper()
    base = [tool("workspace-lock")]
    p = subprocess.run(base + ["acquire", "--name", "n", "--pid", str(proc.pid), "--session", "s1"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert wl.read_holder(wl.lock_path("n"))["pid"] == proc.pid
    p = subprocess.run(base + ["acquire", "--name", "n", "--pid", str(proc.pid), "--session", "s1"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "already held by you" in p.stdout
    p = subprocess.run(base + ["release", "--name", "n", "--session", "s2"], capture_output=True, text=True)
    assert p.returncode == 1 and "not yours" in p.stderr and "--force" in p.stderr
    p = subprocess.run(base + ["release", "--name", "n", "--session", "s1"], capture_output=True, text=True)
    assert p.returncode == 0 and wl.read_holder(wl.lock_path("n")) is None
    p = subprocess.run(base + ["acquire", "--name", "n", "--pid", str(proc.pid)], capture_output=True, text=True)
    p = subprocess.run(base + ["release", "--name", "n", "--force"], capture_output=True, text=True)
    assert p.returncode == 0 and wl.read_holder(wl.lock_path("n")) is None


def test_cli_acquire_for_a_missing_pid_is_a_usage_error():
    p = subprocess.run([tool("workspace-lock"), "acquire", "--name", "n", "--pid", "999999999"],
                       capture_output=True, text=True)
    assert p.returncode == 251 and "no process" in p.stderr


def test_run_holds_the_lock_exactly_while_the_command_runs():
    inner = f"{tool('workspace-lock')} status --name n --json; exit 7"
    p = subprocess.run([tool("workspace-lock"), "run", "--name", "n", "--session", "s1", "--", "bash", "-c", inner],
                       capture_output=True, text=True)
    assert p.returncode == 7
    status = json.loads(p.stdout)
    assert status["live"] and status["holder"]["session"] == "s1"
    assert wl.read_holder(wl.lock_path("n")) is None


def test_context_manager(tmp_path):
    with wl.WorkspaceLock("cm", timeout=0, session="s1", command="merge") as lock:
        rec = wl.read_holder(lock.path)
        assert rec["pid"] == os.getpid() and rec["session"] == "s1" and rec["command"] == "merge"
        # from another shell (our own process as parent would be "already held by you")
        p = subprocess.run(["bash", "-c", f"{tool('workspace-lock')} acquire --name cm --timeout 0; exit $?"],
                           capture_output=True, text=True)
        assert p.returncode == 248 and "session s1" in p.stderr
        with pytest.raises(wl.LockTimeout) as e:
            with wl.WorkspaceLock("cm", timeout=0, out=io.StringIO()):
                pass
        assert e.value.exit_code == 248 and e.value.holder["session"] == "s1"
    assert wl.read_holder(lock.path) is None


def test_break_switch_outside_a_selftest_refuses(monkeypatch):
    monkeypatch.setenv("SWARMGATE_BREAK", "lock-ignores-start-time")
    p = subprocess.run([tool("workspace-lock"), "status"], capture_output=True, text=True)
    assert p.returncode == 251 and "outside a self-test" in p.stderr


def test_selftest_every_switch_turns_its_cell_red():
    p = subprocess.run([tool("workspace-lock"), "--selftest"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "lock-ignores-start-time -> reused-pid-taken-over" in p.stdout
    assert "lock-no-stale-takeover -> dead-holder-taken-over" in p.stdout


def _racer(path: str, barrier, done, results) -> None:
    barrier.wait()
    taken, _ = wl.try_take(path, wl.make_owner(None, f"racer-{os.getpid()}"))
    results.put((os.getpid(), taken))
    done.wait()  # stay alive (a live holder) until every racer has tried


def test_racing_processes_exactly_one_takes_a_free_lock(tmp_path):
    ctx = multiprocessing.get_context("fork")
    path = str(tmp_path / "race")
    barrier, done, results = ctx.Barrier(6), ctx.Barrier(6), ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(path, barrier, done, results)) for _ in range(6)]
    for p in procs:
        p.start()
    outcome = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    winners = [pid for pid, taken in outcome if taken]
    assert len(winners) == 1
    # the winner's record is the one on disk (its process has exited since: stale now)
    assert wl.read_holder(path)["session"] == f"racer-{winners[0]}"
