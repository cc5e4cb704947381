"""Runs killed by a userspace OOM killer (earlyoom, systemd-oomd) end with 254 and a line naming it.

Live inside a test guest (tests/vm): earlyoom itself (Debian's 1.7, unpacked by .ci/run, never
installed: the package would start the daemon on the machine) as a unit of the systemd guest,
logging to its journal; and systemd-oomd itself (Debian's 252, unpacked the same way), acting on the
Pressure Stall Information of the QEMU guest's Debian kernel (user-mode Linux has none). The older
stand-in stays beside it: it does exactly what oomd_cgroup_kill() does (mark the cgroup with
user.oomd_ooms, then SIGKILL everything in it), on the v2 layout too, where no systemd runs oomd.
"""
import os
import shutil
import subprocess
import time

import pytest

from swarmgate.hosts import oom_killers, outcome
from tests.vm.plugin import require
from tests.vm.machine import CHECKOUT

pytestmark = pytest.mark.cgroup

EARLYOOM_17 = 'earlyoom: sending SIGTERM to process 4242 uid 0 "python3": badness 1000, VmRSS 734 MiB'
EARLYOOM_NEW = ('sending SIGKILL to process 77 uid 1000 "cargo": oom_score 950, oom_score_adj 500, VmRSS 2 MiB, '
                'cmdline "cargo test"')


def out(r) -> str:
    return r.stderr.decode(errors="replace")


def test_earlyoom_lines_of_both_formats_are_read():
    assert oom_killers.parse_earlyoom(EARLYOOM_17) == ("SIGTERM", 4242, 0, "python3")
    assert oom_killers.parse_earlyoom(EARLYOOM_NEW) == ("SIGKILL", 77, 1000, "cargo")
    assert oom_killers.parse_earlyoom("low memory! at or below SIGTERM limits: mem 10.00%") is None


def test_an_oomd_mark_that_rose_during_the_run_names_systemd_oomd(tmp_path):
    top = tmp_path / "cg"
    run = top / "slice" / "run-1-2"
    run.mkdir(parents=True)
    os.setxattr(top / "slice", "user.oomd_ooms", b"3")  # an earlier kill of another run, before this one
    before = oom_killers.oomd_marks(str(run.parent), str(top))
    assert oom_killers.find(str(run), str(top), before, set(), 0, 1) is None
    os.setxattr(run, "user.oomd_ooms", b"1")
    kill = oom_killers.find(str(run), str(top), before, set(), 0, 1)
    assert kill.killer == "systemd-oomd" and str(run) in kill.detail
    line = outcome.explain(254, cap="1G", label="x", killer=kill.killer, killer_said=kill.detail)
    assert line.startswith("run-with-memory-cap: exit 254: killed by systemd-oomd") and "rerun" in line


def _run_pid_and_cgroup(sandbox, pidfile, timeout=60.0) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pidfile.exists() and pidfile.read_text().strip():
            pid = int(pidfile.read_text())
            with open(f"/proc/{pid}/cgroup") as f:
                rel = [x for x in f.read().splitlines() if x.startswith("0::")][0][3:]
            return pid, sandbox.backend().hierarchy_root() + rel
        time.sleep(0.05)
    raise AssertionError("the run never started")


@pytest.mark.layout("v2", "systemd")
def test_a_run_killed_by_systemd_oomd_is_254_and_says_so(sandbox, tmp_path):
    pidfile = tmp_path / "pid"
    run = sandbox.start(["64M", "--label", "oomd-victim", "--", "sh", "-c", f"echo $$ > {pidfile}; exec sleep 600"])
    try:
        pid, cgroup = _run_pid_and_cgroup(sandbox, pidfile)
        # what systemd-oomd's oomd_cgroup_kill() does: mark, then SIGKILL every process in the cgroup
        os.setxattr(cgroup, "user.oomd_ooms", b"1")
        os.setxattr(cgroup, "user.oomd_kill", b"1")
        with open(os.path.join(cgroup, "cgroup.kill"), "w") as f:
            f.write("1")
        assert run.wait(60) == 254, run.stderr.read().decode(errors="replace")
        err = run.stderr.read().decode(errors="replace")
        assert "exit 254: killed by systemd-oomd" in err and "not because of the run's own cap" in err, err
    finally:
        sandbox.stop_started()
    assert sandbox.history()["oomd-victim"]["pushed_out"] is True  # it books its cap next time


def _earlyoom() -> str:
    exe = shutil.which("earlyoom") or os.path.join(CHECKOUT, ".vm", "earlyoom", "usr", "bin", "earlyoom")
    if not os.access(exe, os.X_OK):
        require("earlyoom is not here (.ci/run unpacks Debian's package into .vm/earlyoom)")
    return exe


def _mem_available_kib() -> int:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))


@pytest.mark.layout("systemd")
def test_a_run_killed_by_earlyoom_is_254_and_names_it(sandbox, tmp_path):
    exe = _earlyoom()
    sandbox.total = "900M"
    sandbox.write_config()
    unit = f"sgtest-earlyoom-{os.getpid()}.service"
    # earlyoom as a service of this machine (its lines go to the journal): SIGTERM once less than
    # (available now - 200M) is left, so the growing run below is the one to push it there
    threshold = _mem_available_kib() - 200 * 1024
    subprocess.run(["systemd-run", "--quiet", f"--unit={unit}", "--", exe, "-M", str(threshold), "-r", "0"],
                   check=True, timeout=60)
    try:
        grow = ("import time\nheld = []\n"
                "while True:\n    held.append(b'x' * (4 << 20))\n    time.sleep(0.02)\n")
        r = subprocess.run(sandbox.argv(["800M", "--unbounded", "--label", "grower", "--", "python3", "-c", grow]),
                           cwd=sandbox.repo, env=sandbox.env(), capture_output=True, timeout=300)
        assert r.returncode == 254, out(r)
        assert "exit 254: killed by earlyoom" in out(r) and "sending SIG" in out(r), out(r)
    finally:
        subprocess.run(["systemctl", "stop", unit], capture_output=True, timeout=60)
    # a run that ends on its own signal, with earlyoom gone, keeps its code
    r = sandbox.run(["64M", "--", "sh", "-c", "kill -TERM $$"])
    assert r.returncode == 143, out(r)


def _systemd_oomd() -> str:
    exe = os.path.join(CHECKOUT, ".vm", "systemd-oomd", "lib", "systemd", "systemd-oomd")
    if not os.access(exe, os.X_OK):
        require("systemd-oomd is not here (.ci/run unpacks Debian's package into .vm/systemd-oomd)")
    if not os.path.exists("/proc/pressure/memory"):
        require("this guest kernel has no Pressure Stall Information (user-mode Linux): systemd-oomd cannot run")
    return exe


def _journal(unit: str) -> str:
    r = subprocess.run(["journalctl", "--no-pager", "-q", "-u", unit], capture_output=True, text=True, timeout=60)
    return r.stdout[-3000:]


@pytest.mark.layout("systemd")
def test_systemd_oomd_itself_kills_a_run_under_memory_pressure_and_the_runner_says_254(sandbox, tmp_path):
    """The real systemd-oomd (Debian's 252, unpacked, never installed) acting on PSI: no stand-in."""
    exe = _systemd_oomd()
    conf = "/etc/systemd/oomd.conf.d/sgtest.conf"  # the guest's /etc is a tmpfs overlay
    os.makedirs(os.path.dirname(conf), exist_ok=True)
    with open(conf, "w") as f:
        f.write("[OOM]\nDefaultMemoryPressureDurationSec=2s\n")
    # PID 1 hands the cgroups to manage only to a unit of this name (else PermissionDenied on its
    # io.systemd.ManagedOOM socket); oomd listens for user managers in /run/systemd/oom
    unit = "systemd-oomd.service"
    os.makedirs("/run/systemd/oom", exist_ok=True)
    data = f"/var/tmp/sgtest-thrash-{os.getpid()}"  # the guest's scratch disk: page cache that must be reread
    slice_unit = sandbox.slice + ".slice"
    try:
        subprocess.run(["systemd-run", "--quiet", f"--unit={unit}", "-p", "Type=notify", "--", exe],
                       check=True, timeout=120)
        assert sandbox.run(["16M", "--", "true"], timeout=300).returncode == 0  # the slice exists
        subprocess.run(["systemctl", "set-property", "--runtime", slice_unit, "ManagedOOMMemoryPressure=kill",
                        "ManagedOOMMemoryPressureLimit=1%"], check=True, timeout=60)
        # a run that thrashes its own page cache: 160M of file reread under a 48M cap (no OOM of the
        # kernel's: file pages can always be dropped) stalls on memory, and oomd sees the slice's PSI
        thrash = (f"dd if=/dev/zero of={data} bs=1M count=160 status=none; "
                  f"while :; do cat {data} > /dev/null; done")
        r = sandbox.run(["48M", "--label", "thrasher", "--", "sh", "-c", thrash], timeout=600)
        said = out(r)
        assert r.returncode == 254, said + _journal(unit)
        assert "exit 254: killed by systemd-oomd" in said, said
        assert "due to memory pressure" in _journal(unit)  # oomd's own line: it was oomd, not a stand-in
    finally:
        subprocess.run(["systemctl", "stop", unit], capture_output=True, timeout=60)
        subprocess.run(["systemctl", "set-property", "--runtime", slice_unit, "ManagedOOMMemoryPressure=auto"],
                       capture_output=True, timeout=60)
        for path in (conf, data):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    assert sandbox.history()["thrasher"]["pushed_out"] is True
