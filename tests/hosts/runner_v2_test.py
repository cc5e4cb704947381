"""What cgroup v2 does better, live inside user-mode Linux (tests/vm): the whole run dies as a unit
(memory.oom.group), memory.events.local tells own cap from a full total without the kernel's line,
the slice is made on a fresh hierarchy, and under systemd only inside what systemd delegated.

Sizes are small (caps 32-100M): every page fault costs about 0.1 ms inside user-mode Linux.
"""
import os
import subprocess
import sys

import pytest

from swarmgate.hosts import cgroups
from swarmgate.hosts.runner_selftest import MiB, alloc

pytestmark = pytest.mark.cgroup


def out(r) -> str:
    return r.stderr.decode(errors="replace")


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def controllers(path: str) -> list[str]:
    with open(os.path.join(path, "cgroup.subtree_control")) as f:
        return f.read().split()


def cgroup_dirs(root: str) -> set[str]:
    return {d for d, _, _ in os.walk(root)}


@pytest.mark.layout("v2", "systemd")
def test_the_bar_64m_cap_over_200m_is_250_and_no_run_cgroup_remains(sandbox, layout, tmp_path):
    probe = tmp_path / "group"
    # the command reports its own cgroup's memory.oom.group, then allocates past its cap
    code = ("import sys\n"
            "rel = [x for x in open('/proc/self/cgroup').read().splitlines() if x.startswith('0::')][0][3:]\n"
            f"open({str(probe)!r}, 'w').write(open('{sandbox.backend().hierarchy_root()}' + rel + "
            "'/memory.oom.group').read())\n"
            "b = b'x' * (200 * 2**20)\n")
    r = sandbox.run(["64M", "--label", "bar", "--", "python3", "-c", code])
    assert r.returncode == 250, out(r)
    assert "hit its own memory cap 64M" in out(r)
    # v2: the runner sets it; systemd (OOMPolicy=stop) leaves it 0 and stops the scope instead
    assert probe.read_text().strip() == {"v2": "1", "systemd": "0"}[layout]
    assert sandbox.backend().runs(sandbox.slice) == []
    assert [d for d in os.listdir(sandbox.backend().slice_path(sandbox.slice)) if "run-" in d] == []


@pytest.mark.layout("v2", "systemd")
def test_an_oom_kill_takes_the_whole_run_not_only_the_biggest_process(sandbox, tmp_path):
    pidfile = tmp_path / "sleeper"
    code = ("import subprocess\n"
            "sleeper = subprocess.Popen(['sleep', '600'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(sleeper.pid))\n"
            "child = subprocess.run(['python3', '-c', \"b = b'x' * (150 * 2**20)\"])\n"
            "print('allocator ended', child.returncode, flush=True)\n"
            "sleeper.wait()\n"
            "print('the rest of the run survived', flush=True)\n")
    # without the group kill the allocator alone dies and the run hangs on its sleeper: 253
    r = sandbox.run(["64M", "--timeout", "60", "--label", "group", "--", "python3", "-c", code], timeout=120)
    assert r.returncode == 250, out(r)
    assert b"survived" not in r.stdout
    assert gone(int(pidfile.read_text()))
    assert sandbox.backend().runs(sandbox.slice) == []


def _without_kernel_log(argv: list[str]) -> list[str]:
    """Run ``argv`` in a private mount namespace where /dev/kmsg is /dev/null: the runner must decide
    250 vs 254 from the cgroup's own counters (memory.events.local)."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind /dev/null /dev/kmsg && exec "$@"', "sh", *argv]


@pytest.mark.layout("v2")
def test_events_local_tells_own_cap_from_a_full_total_without_the_kernel_log(sandbox):
    sandbox.total = "128M"
    sandbox.write_config()
    own = subprocess.run(_without_kernel_log(sandbox.argv(["48M", "--label", "own", "--", *alloc(100)])),
                         cwd=sandbox.repo, env=sandbox.env(), capture_output=True, timeout=120)
    assert own.returncode == 250, out(own)
    # a holder admitted on its cap (oom_score_adj 0) and a gambler admitted on a 16M history (500)
    sandbox.set_history("gambler", {"peak": 16 * MiB, "peaks": [16 * MiB], "runs": 1})
    holder = sandbox.start(["100M", "--label", "holder", "--", "python3", "-c",
                            "import time; b = b'x' * (70 * 2**20); print('held', flush=True); time.sleep(60)"])
    try:
        assert holder.stdout.readline() == b"held\n"
        r = subprocess.run(_without_kernel_log(sandbox.argv(["120M", "--label", "gambler", "--", *alloc(90, 0.5)])),
                           cwd=sandbox.repo, env=sandbox.env(), capture_output=True, timeout=120)
        assert r.returncode == 254, out(r)
        assert "not because of its own cap" in out(r)
        assert holder.poll() is None, "the holder (admitted on its cap) must survive"
    finally:
        sandbox.stop_started()
    assert sandbox.backend().runs(sandbox.slice) == []


@pytest.mark.layout("v2")
def test_the_slice_is_made_on_a_fresh_hierarchy_enabling_memory_top_down(sandbox):
    backend = sandbox.backend()
    root = backend.hierarchy_root()
    assert not os.path.exists(backend.slice_path(sandbox.slice))
    if "memory" in controllers(root):
        with open(os.path.join(root, "cgroup.subtree_control"), "w") as f:
            f.write("-memory")  # as after boot: no child of the root uses it now
    assert "memory" not in controllers(root)
    r = sandbox.run(["32M", "--label", "fresh", "--", *alloc(80)])
    assert r.returncode == 250, out(r)
    assert "memory" in controllers(root)
    assert "memory" in controllers(backend.slice_path(sandbox.slice))


@pytest.mark.layout("v2")
def test_a_run_cgroup_holds_no_children_with_limits_of_their_own(sandbox):
    """v2's "no internal processes": a runner called inside a run runs under the enclosing cap and says so."""
    inner = [sys.executable, "-m", "swarmgate.hosts.runner_cli", "32M", "--label", "inner", "--", *alloc(60)]
    r = sandbox.run(["128M", "--label", "outer", "--", *inner], timeout=120)
    assert r.returncode == 0, out(r)
    assert "no internal processes" in out(r)


@pytest.mark.layout("systemd")
def test_cgroup2_under_systemd_is_refused_outside_a_delegated_cgroup(sandbox, tmp_path):
    marker = tmp_path / "ran"
    r = sandbox.run(["64M", "--backend", "cgroup2", "--", "touch", str(marker)])
    assert r.returncode == 251, out(r)
    assert "systemd owns" in out(r) and "Delegate=yes" in out(r)
    assert not marker.exists()


@pytest.mark.layout("systemd")
def test_cgroup2_under_systemd_writes_only_inside_what_systemd_delegated(sandbox, tmp_path):
    root = sandbox.backend().hierarchy_root()
    unit = f"sgtest-delegated-{os.getpid()}.scope"
    before = cgroup_dirs(root)
    # a unit with Delegate=yes; the runner inside it uses the cgroup2 backend; the cgroups are listed
    # while the scope still exists (it goes when its last process ends)
    script = (f'cat /proc/self/cgroup > {tmp_path}/cgroup; "$@"; rc=$?; '
              f'find {root} -type d > {tmp_path}/after; exit $rc')
    argv = sandbox.argv(["48M", "--backend", "cgroup2", "--label", "deleg", "--", *alloc(100)])
    r = subprocess.run(["systemd-run", "--scope", "--quiet", f"--unit={unit}", "-p", "Delegate=yes", "--",
                        "sh", "-c", script, "sh", *argv],
                       cwd=sandbox.repo, env=sandbox.env(), capture_output=True, timeout=120)
    assert r.returncode == 250, out(r)
    scope = root + (tmp_path / "cgroup").read_text().split("0::", 1)[1].split()[0]
    assert scope.endswith("/" + unit)
    after = set((tmp_path / "after").read_text().split())
    assert f"{scope}/{sandbox.slice}" in after and f"{scope}/leaf" in after
    outside = {d for d in after - before if d != scope and not d.startswith(scope + "/")}
    assert outside == set(), f"made outside the delegated {scope}: {outside}"
    subprocess.run(["systemctl", "stop", unit], capture_output=True, timeout=30)
    assert not os.path.exists(scope)


@pytest.mark.layout("v2")
def test_cgroup_kill_ends_a_run_and_every_cgroup_inside_it_in_one_write(sandbox, monkeypatch):
    """v2's cleanup is one write to cgroup.kill: the kernel kills the whole subtree, racing no fork.
    The per-pid loop that follows it (every backend's, for v1) is stubbed here, so only the write acts."""
    backend = sandbox.backend()
    run = os.path.join(backend.hierarchy_root(), f"sgtest-kill-{os.getpid()}")
    inner = os.path.join(run, "made-by-the-command")
    os.makedirs(inner)
    procs = []
    try:
        for where in (run, inner):
            p = subprocess.Popen(["sleep", "600"])
            procs.append(p)
            with open(os.path.join(where, "cgroup.procs"), "w") as f:
                f.write(str(p.pid))
        assert sorted(backend.tree_pids(run)) == sorted(p.pid for p in procs)
        monkeypatch.setattr(cgroups.Backend, "kill_all", lambda self, path, sig=9, settle_s=2.0: True)
        assert backend.kill_all(run)
        assert [p.wait(120) for p in procs] == [-9, -9]  # both SIGKILLed: the run's and the nested one's
    finally:
        monkeypatch.undo()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(120)
        for d in (inner, run):
            if os.path.isdir(d):
                os.rmdir(d)
