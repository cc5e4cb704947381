"""run-with-memory-cap against real cgroups (v1 here, v2 inside user-mode Linux): exit codes, admission, cleanup.

Every allocation happens inside a run's cgroup with a limit (≤ 400M cap, 256M or
512M total); each test's slice, state dir and processes are removed after it.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from swarmgate.hosts import ledger, status
from swarmgate.hosts.admission import predict
from swarmgate.hosts.kernel_log import KernelLog, oom_lines
from swarmgate.hosts.runner_selftest import MiB, alloc, dead_pid, suite
from swarmgate.selftest import run_suite

pytestmark = [pytest.mark.cgroup, pytest.mark.layout("v1", "v2", "systemd")]

# How long a wait for something that takes a second here may last before it counts as never: inside
# user-mode Linux on a machine that others load, a process start or a kill takes 10-50 times longer.
# Only a failing test ever waits it out.
BOUND_S = 120


def out(r) -> str:
    return r.stderr.decode(errors="replace")


def pid_gone(pid: int, timeout: float = BOUND_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[-1].startswith("Z"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def own_cgroup(proc_self_cgroup: str) -> str:
    """The cgroup path in /proc/<pid>/cgroup text: the memory controller's line (v1) or the unified one (v2)."""
    lines = proc_self_cgroup.splitlines()
    line = next((x for x in lines if ":memory:" in x), None) or next(x for x in lines if x.startswith("0::"))
    return line.split(":", 2)[2].strip()


def booking_of(sb, label: str, timeout: float = BOUND_S) -> dict:
    assert sb.wait_booked(label, timeout), f"{label} was never booked"
    return next(b for b in sb.ledger()["bookings"].values() if b["label"] == label)


def comm_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def wait_pids(sb, path: str, n: int, timeout: float = BOUND_S, comm: str | None = None) -> list[int]:
    """The run cgroup's pids once it holds ``n`` of them, or ``n`` named ``comm`` when given. Name the
    command when the test then kills the wrapper: under systemd the scope's first process is the
    report shell (hosts/scope_report.py), and a wrapper killed before that shell wrote ``started``
    takes the shell with it (SIGPIPE), so the scope would be gone before the test looked."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = sb.backend().pids(path)
        if len([p for p in pids if comm is None or comm_of(p) == comm]) >= n:
            return pids
        time.sleep(0.02)
    raise AssertionError(f"{path} never held {n} processes" + (f" named {comm}" if comm else ""))


def test_own_cap_oom_is_250_and_marks_the_label(sandbox):
    r = sandbox.run(["64M", "--label", "own", "--", *alloc(150)])
    assert r.returncode == 250, out(r)
    assert "hit its own memory cap 64M" in out(r)
    h = sandbox.history()["own"]
    assert h["ceiling_hit"] is True and h["last_outcome"] == "own_cap"
    assert sandbox.backend().runs(sandbox.slice) == []


def test_pushed_out_by_the_total_is_254_and_books_its_cap_next_time(sandbox):
    sandbox.total = "400M"
    sandbox.write_config()
    sandbox.set_history("gambler", {"peak": 40 * MiB, "peaks": [40 * MiB], "runs": 1})
    holder = sandbox.start(["300M", "--label", "holder", "--", "python3", "-c",
                            "import time; b=b'x'*(220*2**20); print('held', flush=True); time.sleep(60)"])
    assert holder.stdout.readline() == b"held\n"
    # admitted on its 40M history: 220M in use + 80M booked-not-grown + 40M <= 400M
    r = sandbox.run(["300M", "--label", "gambler", "--", *alloc(220, 0.5)])
    assert r.returncode == 254, out(r)
    assert "not because of its own cap" in out(r) and "rerun" in out(r)
    assert holder.poll() is None, "the holder (admitted on its cap) must survive"
    holder.send_signal(signal.SIGTERM)
    assert holder.wait(BOUND_S) == 128 + signal.SIGTERM
    assert sandbox.history()["gambler"]["pushed_out"] is True
    # next time it books its full cap: basis cap, oom_score_adj 0
    show = ["python3", "-c", "print(open('/proc/self/oom_score_adj').read().strip())"]
    r2 = sandbox.run(["300M", "--label", "gambler", "--", *show])
    assert r2.returncode == 0 and r2.stdout == b"0\n", out(r2)

    assert predict(300 * MiB, {"peak": 40 * MiB, "pushed_out": True}).need == 300 * MiB


def test_exit_code_stdout_stderr_and_stdin_pass_through(sandbox):
    code = ("import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data[::-1]); "
            "sys.stderr.write('to stderr\\n'); sys.exit(42)")
    payload = bytes(range(256)) * 300
    r = sandbox.run(["64M", "--", "python3", "-c", code], input=payload)
    assert r.returncode == 42
    assert r.stdout == payload[::-1]
    assert r.stderr == b"to stderr\n"


def test_signal_death_of_the_command_is_128_plus_signal(sandbox):
    r = sandbox.run(["64M", "--", "sh", "-c", "kill -USR1 $$"])
    assert r.returncode == 128 + signal.SIGUSR1


def test_command_not_found_is_127_and_nothing_left(sandbox):
    r = sandbox.run(["64M", "--", "no-such-command-swarmgate"])
    assert r.returncode == 127
    assert "no-such-command-swarmgate" in out(r)
    assert sandbox.ledger()["bookings"] == {}
    assert sandbox.backend().runs(sandbox.slice) == []


def test_timeout_is_253_and_stops_every_process(sandbox, tmp_path, layout):
    # the background child must exist before the timeout for the test to mean anything: in an
    # emulated guest a systemd scope and a shell take seconds to start (1s was once too short there)
    pidfile = tmp_path / "pids"
    limit = "3" if layout == "v1" else "20"
    r = sandbox.run(["64M", "--timeout", limit, "--", "sh", "-c",
                     f"sleep 600 & echo $! > {pidfile}; sleep 600"], timeout=BOUND_S)
    assert r.returncode == 253, out(r)
    assert "timeout" in out(r)
    assert pidfile.exists(), f"the job's shell had not started its child within --timeout {limit}: {out(r)}"
    assert pid_gone(int(pidfile.read_text()))
    assert sandbox.backend().runs(sandbox.slice) == []


def test_never_fits_exits_252_at_once(sandbox):
    r = sandbox.run(["1G", "--wait", "3600", "--", "true"], timeout=BOUND_S)
    assert r.returncode == 252
    assert "can never fit" in out(r)


def test_wait_exhausted_is_252_and_says_who_holds(sandbox):
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    r = sandbox.run(["200M", "--wait", "1", "--label", "late", "--", "true"], timeout=BOUND_S)
    assert r.returncode == 252, out(r)
    assert "'holder'" in out(r) and "no turn" in out(r)
    holder.send_signal(signal.SIGTERM)
    assert holder.wait(BOUND_S) == 128 + signal.SIGTERM
    assert sandbox.ledger()["waiters"] == {}


def test_a_private_ledger_does_not_hide_a_run_from_admission(sandbox, tmp_path):
    """`SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap ...` (G01 refuses it; this is the tool's own
    line): a run booked in another ledger is in the same slice, and counts there at its cap."""
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    # the other ledger sees the holder only by its cgroup, which comes after the booking (under systemd
    # when systemd-run has made the scope, seconds later in a guest): wait for the command in it
    held = booking_of(sandbox, "holder")["cgroup"]
    wait_pids(sandbox, held, 1, comm="sleep")
    private = tmp_path / "private-state"
    private.mkdir()
    r = sandbox.run(["200M", "--wait", "1", "--label", "sneaky", "--", "true"], timeout=BOUND_S,
                    SWARMGATE_STATE_DIR=str(private))
    assert r.returncode == 252, out(r)
    assert "booked in another ledger" in out(r) and "counted at their caps" in out(r)
    # and the other way round: the real ledger's next run sees the private run's cgroup
    sneaky = sandbox.start(["150M", "--label", "sneaky", "--", "sleep", "30"], SWARMGATE_STATE_DIR=str(private))
    holder.send_signal(signal.SIGTERM)
    assert holder.wait(BOUND_S) == 128 + signal.SIGTERM
    backend = sandbox.backend()
    deadline = time.monotonic() + BOUND_S
    while not [n for n in backend.runs(sandbox.slice) if backend.run_path(sandbox.slice, n) != held
               and any(comm_of(p) == "sleep" for p in backend.pids(backend.run_path(sandbox.slice, n)))]:
        assert time.monotonic() < deadline, "the private run's command never started in its cgroup"
        time.sleep(0.05)
    r = sandbox.run(["200M", "--wait", "1", "--label", "honest", "--", "true"], timeout=BOUND_S)
    assert r.returncode == 252, out(r)
    sneaky.send_signal(signal.SIGTERM)
    assert sneaky.wait(BOUND_S) == 128 + signal.SIGTERM
    assert sandbox.run(["200M", "--label", "honest", "--", "true"], timeout=BOUND_S).returncode == 0


def test_a_run_that_does_not_fit_starts_only_after_the_first_ends(sandbox, tmp_path):
    go, a_end, b_start = tmp_path / "go", tmp_path / "a_end", tmp_path / "b_start"
    a = sandbox.start(["200M", "--label", "first", "--", "python3", "-c",
                       (f"import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
                        f"open({str(a_end)!r}, 'w').write(repr(time.time()))")])
    booking_of(sandbox, "first")
    b = sandbox.start(["200M", "--label", "second", "--", "python3", "-c",
                       f"import time; open({str(b_start)!r}, 'w').write(repr(time.time()))"])
    deadline = time.monotonic() + BOUND_S
    while not any(w["label"] == "second" for w in sandbox.ledger()["waiters"].values()):
        assert time.monotonic() < deadline, "the second run never queued"
        assert not b_start.exists(), "the second run started while the first held its memory"
        time.sleep(0.05)
    assert not b_start.exists()
    go.write_text("")
    assert a.wait(BOUND_S) == 0
    assert b.wait(BOUND_S) == 0
    assert float(b_start.read_text()) >= float(a_end.read_text())
    assert b"waiting for memory" in b.stderr.read()


def test_page_cache_of_a_finished_run_does_not_block_the_next(sandbox):
    big = os.path.join(sandbox.tmp, "cache.bin")
    w = sandbox.run(["240M", "--", "python3", "-c",
                     f"f=open({big!r},'wb')\nfor _ in range(200): f.write(bytes(2**20))"])
    assert w.returncode == 0
    c = sandbox.backend().counters(sandbox.backend().slice_path(sandbox.slice))
    assert c.usage > 150 * MiB and c.reclaimable > 150 * MiB  # still charged to the slice
    r = sandbox.run(["128M", "--wait", "0", "--label", "after", "--", "true"])
    assert r.returncode == 0, out(r)
    os.unlink(big)


@pytest.mark.layout("v1")  # a million lookups take minutes in an emulated guest; the v2 write is a unit test
def test_kernel_caches_left_by_a_finished_run_do_not_block_the_next(sandbox):
    # a run that looks up a million absent names leaves its dentries charged to the slice: memory
    # no memory.stat line calls page cache, that nothing uses once the run has ended
    probe = os.path.join(sandbox.tmp, "absent")
    w = sandbox.run(["240M", "--", "python3", "-c",
                     "import os\nfor i in range(1_000_000):\n"
                     f"    try: os.stat({probe!r} + str(i))\n    except OSError: pass"], timeout=BOUND_S)
    assert w.returncode == 0, out(w)
    c = sandbox.backend().counters(sandbox.backend().slice_path(sandbox.slice))
    assert c.usage - c.reclaimable > 128 * MiB, "the lookups left less than the test needs"
    r = sandbox.run(["128M", "--wait", "0", "--label", "after-lookups", "--", "true"])
    assert r.returncode == 0, out(r)
    assert "reclaimed them" in out(r)


def test_reclaim_empties_an_idle_slice_of_what_ended_runs_left(sandbox):
    big = os.path.join(sandbox.tmp, "cache.bin")
    w = sandbox.run(["128M", "--", "python3", "-c",
                     f"f=open({big!r},'wb')\nfor _ in range(64): f.write(bytes(2**20))"])
    assert w.returncode == 0, out(w)
    backend = sandbox.backend()
    path = backend.slice_path(sandbox.slice)
    before = backend.counters(path).usage
    assert before > 48 * MiB
    assert backend.reclaim(path) is True
    assert backend.counters(path).usage < before - 48 * MiB
    os.unlink(big)


def test_twenty_concurrent_wrappers_never_over_admit(sandbox, layout):
    # inside user-mode Linux each page fault costs ~0.1 ms on one virtual CPU: the same ratios at a
    # quarter of the sizes (total 128M, caps 40M, 25M each) keep the test about admission, not faults
    mib = 1 if layout == "v1" else 4
    sandbox.total = f"{512 // mib}M"
    sandbox.write_config()
    total = 512 * MiB // mib
    klog = KernelLog()
    seen_max = [0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                booked = sum(b["booked"] for b in sandbox.ledger()["bookings"].values())
            except Exception:  # noqa: BLE001 - the ledger is replaced atomically; retry
                continue
            seen_max[0] = max(seen_max[0], booked)
            time.sleep(0.01 * mib)

    t = threading.Thread(target=watch)
    t.start()
    try:
        procs = [sandbox.start([f"{160 // mib}M", "--label", f"job-{i % 4}", "--", *alloc(100 // mib, 0.2)])
                 for i in range(20)]
        codes = [p.wait(4 * BOUND_S) for p in procs]
    finally:
        stop.set()
        t.join()
    errs = [p.stderr.read().decode(errors="replace") for p in procs]
    assert codes == [0] * 20, [e for c, e in zip(codes, errs) if c]
    assert 0 < seen_max[0] <= total, f"booked {seen_max[0]} > total {total}"
    sl = sandbox.backend().counters(sandbox.backend().slice_path(sandbox.slice))
    assert sl.peak <= total and sl.oom_kill == 0, sl.as_dict()
    messages = klog.read_new() or []
    klog.close()
    ours = [x for x in oom_lines(messages) if x["task_memcg"].startswith(f"/{sandbox.slice}")]
    assert not ours, ours
    global_ooms = [m for m in messages if "CONSTRAINT_NONE" in m]
    assert not global_ooms, global_ooms  # the machine itself never ran out
    assert sandbox.ledger() == {"version": 1, "bookings": {}, "waiters": {}}


def test_sigkill_of_a_wrapper_leaves_no_phantom_booking_and_no_cgroup(sandbox):
    w = sandbox.start(["64M", "--label", "victim", "--", "sleep", "60"])
    b = booking_of(sandbox, "victim")
    orphan = next(p for p in wait_pids(sandbox, b["cgroup"], 1, comm="sleep") if comm_of(p) == "sleep")
    w.kill()
    w.wait()
    assert os.path.isdir(b["cgroup"])  # nobody cleaned up yet
    r = sandbox.run(["250M", "--wait", "0", "--label", "next", "--", "true"])
    assert r.returncode == 0, out(r)  # 64M phantom + 250M would not fit under 256M
    assert "dead wrapper" in out(r)
    assert not os.path.exists(b["cgroup"])
    assert pid_gone(orphan)
    assert sandbox.ledger()["bookings"] == {}


def test_cleanup_of_dead_bookings_is_one_line_and_is_not_repeated_once_saved(sandbox):
    """Four dead wrappers' bookings and a dead waiter in the real ledger: the next run says so in one
    line, even when it then cannot run (252, which saves nothing else), and the run after says nothing."""
    with ledger.lock():
        data = ledger.load()
        for i in range(4):
            pid = dead_pid()
            data["bookings"][ledger.booking_id(pid, None)] = {"pid": pid, "start": None, "booked": 8 * MiB,
                                                              "label": f"gone-{i}", "cap": 64 * MiB}
        pid = dead_pid()
        data["waiters"][ledger.booking_id(pid, None)] = {"pid": pid, "start": None, "label": "gone-w"}
        ledger.save(data)
    first = sandbox.run(["1G", "--wait", "0", "--label", "too-big", "--", "true"])
    assert first.returncode == 252, out(first)
    lines = [x for x in out(first).splitlines() if "dead" in x]
    assert len(lines) == 1, out(first)
    assert "dropped 4 bookings" in lines[0] and "1 waiter" in lines[0] and "and 1 more" in lines[0]
    assert sandbox.ledger()["bookings"] == {} and sandbox.ledger()["waiters"] == {}
    second = sandbox.run(["64M", "--label", "after", "--", "true"])
    assert second.returncode == 0, out(second)
    assert "dead" not in out(second) and "cleaned up" not in out(second), out(second)


def test_term_to_the_wrapper_stops_every_process_of_the_run(sandbox):
    w = sandbox.start(["64M", "--label", "tree", "--", "sh", "-c", "sleep 60 & sleep 60 & wait"])
    b = booking_of(sandbox, "tree")
    pids = wait_pids(sandbox, b["cgroup"], 2, comm="sleep")
    w.send_signal(signal.SIGTERM)
    assert w.wait(BOUND_S) == 128 + signal.SIGTERM
    assert all(pid_gone(p) for p in pids)
    assert not os.path.exists(b["cgroup"])
    assert sandbox.ledger()["bookings"] == {}


def test_corrupt_ledger_and_history_are_reported_and_rebuilt(sandbox):
    runner_dir = os.path.join(sandbox.state, "runner")
    os.makedirs(runner_dir, exist_ok=True)
    for name in ("ledger.json", "history.json"):
        with open(os.path.join(runner_dir, name), "w") as f:
            f.write("{not json")
    r = sandbox.run(["64M", "--label", "after-corruption", "--", "true"])
    assert r.returncode == 0, out(r)
    assert out(r).count("was corrupt") == 2
    with open(os.path.join(runner_dir, "history.json")) as f:
        assert "after-corruption" in json.load(f)["labels"]
    with open(os.path.join(runner_dir, "ledger.json")) as f:
        assert json.load(f)["bookings"] == {}
    assert len([n for n in os.listdir(runner_dir) if ".corrupt-" in n]) == 2


def test_malformed_bookings_are_dropped_not_fatal(sandbox):
    runner_dir = os.path.join(sandbox.state, "runner")
    os.makedirs(runner_dir, exist_ok=True)
    with open(os.path.join(runner_dir, "ledger.json"), "w") as f:
        json.dump({"version": 1, "bookings": {"x": {"pid": "nope"}, "y": 7}, "waiters": []}, f)
    r = sandbox.run(["64M", "--", "true"])
    assert r.returncode == 0, out(r)
    assert "malformed" in out(r)


@pytest.mark.parametrize("name", ["ledger.json", "history.json", "ledger.lock"])
def test_a_symlink_planted_at_a_state_path_is_not_followed(sandbox, tmp_path, name):
    runner_dir = os.path.join(sandbox.state, "runner")
    os.makedirs(runner_dir, exist_ok=True)
    target = tmp_path / "precious"
    target.write_text("precious\n")
    os.symlink(target, os.path.join(runner_dir, name))
    marker = tmp_path / "ran"
    r = sandbox.run(["64M", "--", "touch", str(marker)])
    assert r.returncode == 251, out(r)
    assert "symlink" in out(r)
    assert target.read_text() == "precious\n"
    assert not marker.exists()


def test_a_break_switch_outside_a_self_test_is_refused_with_251(sandbox, tmp_path):
    marker = tmp_path / "ran"
    r = sandbox.run(["64M", "--", "touch", str(marker)], SWARMGATE_BREAK="book-cap-not-peak")
    assert r.returncode == 251
    assert "outside a self-test" in out(r)
    assert not marker.exists()


def test_a_cap_that_cannot_be_set_up_is_251_and_never_runs_uncapped(sandbox, tmp_path, layout):
    marker = tmp_path / "ran"
    if layout == "systemd":
        # the run's scope cannot be made: a scope of the same name exists already (the wrapper's pid and
        # start time name it; the launcher holds that scope, then execs the runner keeping both)
        launcher = ("import os, subprocess, sys, time\n"
                    "from swarmgate.procinfo import identity\n"
                    "from swarmgate.hosts import cgroups\n"
                    "me = identity()\n"
                    "b = cgroups.get('systemd')\n"
                    "name = cgroups.run_name(me['pid'], me['start'])\n"
                    f"b.ensure_slice({sandbox.slice!r}, None)\n"
                    f"path, holder = __import__('swarmgate.hosts.runner_selftest', fromlist=['x']).orphan_run("
                    f"b, {sandbox.slice!r}, name)\n"
                    "os.execv(sys.executable, sys.argv[1:])\n")
        r = subprocess.run([sys.executable, "-c", launcher, *sandbox.argv(["64M", "--", "touch", str(marker)])],
                           cwd=sandbox.repo, env=sandbox.env(), capture_output=True, timeout=120)
        assert "could not start the run's scope" in out(r) and "swarmgate-run-" in out(r), out(r)
    else:
        r = sandbox.run(["64M", "--", "touch", str(marker)], SWARMGATE_CGROUP_ROOT=str(tmp_path))
    assert r.returncode == 251, out(r)
    assert "never runs uncapped" in out(r)
    assert not marker.exists()


def test_cuda_out_of_memory_in_the_output_is_245(sandbox):
    say = "import sys; sys.stderr.write('RuntimeError: CUDA out of memory. Tried to allocate 2 GiB\\n'); sys.exit({})"
    r = sandbox.run(["64M", "--", "python3", "-c", say.format(1)])
    assert r.returncode == 245
    assert b"CUDA out of memory" in r.stderr  # still passed through
    r0 = sandbox.run(["64M", "--", "python3", "-c", say.format(0)])
    assert r0.returncode == 0  # it recovered: its own code stands


def test_second_host_hint_prints_the_exact_line_and_writes_an_alert(sandbox):
    with open(os.path.join(sandbox.tmp, "hosts.toml"), "w") as f:
        f.write('[across_machines]\nenabled = true\n'
                f'[peers.box2]\nhost = "127.0.0.1"\ntransport = "local"\nstate_dir = "{sandbox.state}"\n')
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    r = sandbox.run(["200M", "--wait", "1", "--label", "spill", "--", "echo", "hi there"], timeout=BOUND_S)
    assert r.returncode == 252, out(r)
    assert "multi-host-run --peer box2 --memory-cap 200M --label spill -- echo 'hi there'" in out(r)
    with open(os.path.join(sandbox.state, "alerts", "alerts.jsonl")) as f:
        alerts = [json.loads(line) for line in f]
    assert any(a["kind"] == "runner-fits-on-peer" and a["peer"] == "box2" for a in alerts)
    holder.send_signal(signal.SIGTERM)
    holder.wait(BOUND_S)


def test_no_hint_when_the_switch_is_off(sandbox):
    with open(os.path.join(sandbox.tmp, "hosts.toml"), "w") as f:
        f.write('[peers.box2]\nhost = "127.0.0.1"\ntransport = "local"\n')
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    r = sandbox.run(["200M", "--wait", "0", "--label", "spill", "--", "true"], timeout=BOUND_S)
    assert r.returncode == 252
    assert "multi-host-run" not in out(r)
    holder.send_signal(signal.SIGTERM)
    holder.wait(BOUND_S)


def test_history_records_the_peak_and_admission_books_it(sandbox):
    r = sandbox.run(["200M", "--label", "measured", "--", *alloc(60)])
    assert r.returncode == 0
    peak = sandbox.history()["measured"]["peak"]
    assert 60 * MiB <= peak <= 200 * MiB
    holder = sandbox.start(["150M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    # 150M booked + its ~70M history fits under 256M; its 200M cap would not
    r = sandbox.run(["200M", "--wait", "0", "--label", "measured", "--", "true"])
    assert r.returncode == 0, out(r)
    holder.send_signal(signal.SIGTERM)
    holder.wait(BOUND_S)


def test_the_self_test_suite_is_green_and_every_switch_turns_red(sandbox):
    res = run_suite(suite())
    bad = [row for row in res.rows if not row[3]]
    assert not bad, bad
    assert {row[0] for row in res.rows} >= {"", "no-page-cache-subtraction", "book-cap-not-peak",
                                             "no-oom-score-adj", "no-slice-total",
                                             "run-uncapped-on-setup-failure", "no-phantom-reconcile",
                                             "misread-parent-oom-as-own"}


def test_dead_pid_helper_gives_a_dead_pid():
    pid = dead_pid()
    assert pid_gone(pid)


def test_term_while_waiting_ends_the_wait_and_leaves_no_waiter(sandbox):
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    waiter = sandbox.start(["200M", "--label", "queued", "--", "true"])
    deadline = time.monotonic() + BOUND_S
    while not any(w["label"] == "queued" for w in sandbox.ledger()["waiters"].values()):
        assert time.monotonic() < deadline, "never queued"
        time.sleep(0.05)
    waiter.send_signal(signal.SIGTERM)
    assert waiter.wait(BOUND_S) == 128 + signal.SIGTERM
    assert sandbox.ledger()["waiters"] == {}
    holder.send_signal(signal.SIGTERM)
    assert holder.wait(BOUND_S) == 128 + signal.SIGTERM


def test_status_shows_bookings_and_waiters(sandbox, monkeypatch, capsys):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", sandbox.repo)
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    waiter = sandbox.start(["200M", "--label", "queued", "--", "true"])
    deadline = time.monotonic() + BOUND_S
    while not sandbox.ledger()["waiters"]:
        assert time.monotonic() < deadline, "the second run never queued"
        time.sleep(0.05)
    assert status.main(["--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [b["label"] for b in rep["bookings"]] == ["holder"]
    assert [w["label"] for w in rep["waiters"]] == ["queued"]
    assert rep["slice"]["limit"] == 256 * MiB
    holder.send_signal(signal.SIGTERM)
    assert holder.wait(BOUND_S) == 128 + signal.SIGTERM
    assert waiter.wait(BOUND_S) == 0  # its turn came once the holder was gone


def test_a_user_space_line_in_the_kernel_log_is_not_taken_for_the_driver(sandbox):
    if not os.access("/dev/kmsg", os.W_OK):
        pytest.skip("/dev/kmsg is not writable here")
    fake = "print('swarmgate test: NV_ERR_NO_MEMORY (user-space line, must be ignored)', file=open('/dev/kmsg', 'w'))"
    r = sandbox.run(["64M", "--", "python3", "-c", fake])
    assert r.returncode == 0, out(r)


def test_a_reader_that_goes_away_gives_the_command_sigpipe_as_without_the_runner(sandbox):
    p = subprocess.Popen(sandbox.argv(["64M", "--", "yes"]), cwd=sandbox.repo, env=sandbox.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdout.readline() == b"y\n"
    p.stdout.close()
    assert p.wait(BOUND_S) == 128 + signal.SIGPIPE
    assert sandbox.backend().runs(sandbox.slice) == []


def test_a_command_that_is_not_executable_is_126(sandbox, tmp_path):
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    r = sandbox.run(["64M", "--", str(script)])
    assert r.returncode == 126 and "not-executable.sh" in out(r)


def test_a_waiter_reports_who_holds_what_every_report_every_seconds(sandbox):
    holder = sandbox.start(["200M", "--label", "holder", "--", "sleep", "30"])
    booking_of(sandbox, "holder")
    r = sandbox.run(["200M", "--wait", "2.5", "--label", "patient", "--", "true"], timeout=BOUND_S)
    assert r.returncode == 252
    reports = [line for line in out(r).splitlines() if "still waiting" in line]
    assert reports and all("'holder'" in line and "books 200M (cap)" in line for line in reports)
    holder.send_signal(signal.SIGTERM)
    holder.wait(BOUND_S)


def test_a_run_inside_a_run_does_not_book_twice_and_keeps_its_own_cap(sandbox, layout):
    inner = [sys.executable, "-m", "swarmgate.hosts.runner_cli"]
    show = ["python3", "-c", "print(open('/proc/self/cgroup').read())"]
    # the outer run books 200M of the 256M total: a second booking of 64M would wait for itself
    r = sandbox.run(["200M", "--label", "outer", "--", *inner, "64M", "--wait", "5", "--label", "inner", "--",
                     *show], timeout=BOUND_S)
    assert r.returncode == 0, out(r)
    path = own_cgroup(r.stdout.decode())
    backend = sandbox.backend()
    assert path.startswith("/" + os.path.relpath(backend.slice_path(sandbox.slice), backend.hierarchy_root()) + "/")
    assert "run-" in path
    r = sandbox.run(["200M", "--label", "outer2", "--", *inner, "32M", "--label", "inner2", "--", *alloc(100)],
                    timeout=BOUND_S)
    if layout == "v1":  # its own cap in a cgroup inside the enclosing run's
        assert "/nested-" in path
        assert r.returncode == 250, out(r)
        assert "hit its own memory cap 32M" in out(r)
    else:  # v2: a cgroup with processes cannot have children with their own limits; the enclosing cap holds
        assert "/nested-" not in path
        assert r.returncode == 0, out(r)
        assert "running under its cap, without a cap of its own" in out(r)
    assert sandbox.backend().runs(sandbox.slice) == []
    assert sandbox.ledger()["bookings"] == {}


def test_cgroups_a_command_makes_inside_its_run_are_emptied_and_removed_too(sandbox, tmp_path):
    pidfile = tmp_path / "pid"
    root = sandbox.backend().root
    code = ("import subprocess\n"
            "lines = open('/proc/self/cgroup').read().splitlines()\n"
            "rel = ([x for x in lines if ':memory:' in x] or [x for x in lines if x.startswith('0::')])[0]"
            ".split(':', 2)[2].strip()\n"
            f"cg = {root!r} + rel + '/sub'\n"
            "import os; os.mkdir(cg)\n"
            "p = subprocess.Popen(['sleep', '60'])\n"
            "open(cg + '/cgroup.procs', 'w').write(str(p.pid))\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n")
    r = sandbox.run(["64M", "--", "python3", "-c", code])
    assert r.returncode == 0, out(r)
    assert pid_gone(int(pidfile.read_text()))
    assert sandbox.backend().runs(sandbox.slice) == []


def test_bookings_carry_the_session_and_status_marks_yours(sandbox, monkeypatch, capsys):
    """The session comes from the environment Claude Code gives every command (CLAUDE_CODE_SESSION_ID)."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", sandbox.repo)
    for var in ledger.SESSION_VARS:
        monkeypatch.delenv(var, raising=False)
    mine = sandbox.start(["64M", "--label", "mine", "--", "sleep", "30"], CLAUDE_CODE_SESSION_ID="sess-mine")
    theirs = sandbox.start(["64M", "--label", "theirs", "--", "sleep", "30"], CLAUDE_CODE_SESSION_ID="sess-other")
    anyone = sandbox.start(["64M", "--label", "person", "--", "sleep", "30"])
    try:
        assert booking_of(sandbox, "mine")["session"] == "sess-mine"
        assert booking_of(sandbox, "theirs")["session"] == "sess-other"
        assert booking_of(sandbox, "person")["session"] is None
        monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-mine")
        assert status.main(["--json"]) == 0
        rep = json.loads(capsys.readouterr().out)
        assert {b["label"]: b["yours"] for b in rep["bookings"]} == {"mine": True, "theirs": False, "person": False}
        assert rep["session"] == "sess-mine"
        monkeypatch.setenv("COLUMNS", "200")
        assert status.main(["--session", "sess-other"]) == 0
        text = capsys.readouterr().out
        row = next(ln for ln in text.splitlines() if "theirs" in ln)
        assert "yours" in row and "yours" not in next(ln for ln in text.splitlines() if "mine" in ln.split())
    finally:
        for p in (mine, theirs, anyone):
            p.send_signal(signal.SIGTERM)
            p.wait(BOUND_S)
    runs = sandbox._with_state(ledger.read_runs)
    assert {r["label"]: r["session"] for r in runs} == {"mine": "sess-mine", "theirs": "sess-other", "person": None}


def test_the_runs_log_keeps_booked_peak_and_exit_class(sandbox):
    """What `swarmgate report` shows per run: an OOM is 250/own_cap with a peak at its cap."""
    ok = sandbox.run(["64M", "--label", "small", "--", *alloc(8)], CLAUDE_CODE_SESSION_ID="sess-r")
    oom = sandbox.run(["48M", "--label", "big", "--", *alloc(200)], CLAUDE_CODE_SESSION_ID="sess-r")
    assert ok.returncode == 0, out(ok)
    assert oom.returncode == 250, out(oom)
    runs = {r["label"]: r for r in sandbox._with_state(ledger.read_runs)}
    assert (runs["small"]["exit"], runs["small"]["outcome"]) == (0, "ok")
    assert (runs["big"]["exit"], runs["big"]["outcome"]) == (250, "own_cap")
    # the peak is the cap: the kernel's OOM report says what the run held at the kill (under systemd the scope,
    # and its memory.peak, are gone by then; 0.5 s samples alone saw as little as 39.9M)
    assert runs["big"]["cap"] == 48 * MiB and runs["big"]["peak"] >= 44 * MiB, runs["big"]
    assert runs["small"]["booked"] == 64 * MiB and 0 < runs["small"]["peak"] < 64 * MiB
    for r in runs.values():
        assert r["session"] == "sess-r" and r["ended"] >= r["started"] and r["duration_s"] >= 0
