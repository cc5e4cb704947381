"""multi-host-run against a real sshd on loopback (the peer is this machine, another work root)."""
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import psutil
import pytest

from swarmgate.hosts import multi_host_run as MHR
from swarmgate.hosts import proc_tree, ssh
from tests.hosts.cgroups import remove_slice
from tests.processes import terminate

VENV_BIN = os.path.dirname(sys.executable)
RUNNER = os.path.join(VENV_BIN, "run-with-memory-cap")


def _hosts(tmp_path, sshd, enabled=True, toolchain=("python3 -VV",), **peer_extra):
    work_root = tmp_path / "peer-root"
    work_root.mkdir(exist_ok=True)
    extra = {"runner": f'"{RUNNER}"', "state_dir": f'"{tmp_path / "peer-state"}"'}
    extra.update(peer_extra)
    text = (f"[across_machines]\nenabled = {'true' if enabled else 'false'}\n"
            f"[toolchain]\ncommands = [{', '.join(repr(c).replace(chr(39), chr(34)) for c in toolchain)}]\n"
            + sshd.peer_toml("p1", str(work_root), **extra))
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    return path, work_root


def _commit_repo(repo, slice_name):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text(
        f'[memory]\ntotal = "1G"\nslice = "{slice_name}"\n')
    (repo / "job.sh").write_text("#!/bin/sh\necho job-ran-on $(hostname)\nmkdir -p out\necho result > out/r.txt\n")
    (repo / "untracked.txt").write_text("not copied\n")
    subprocess.run(["git", "-C", str(repo), "add", ".claude", "job.sh"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)


def _mhr(repo, hosts, *args, timeout=120, **kw):
    env = dict(os.environ)
    env["SWARMGATE_STATE_DIR"] = str(repo.parent / "state")
    return subprocess.run([sys.executable, "-m", "swarmgate", "multi-host-run", "--hosts-config", str(hosts),
                           *args], cwd=repo, capture_output=True, text=True, timeout=timeout, env=env, **kw)


@pytest.fixture
def slice_name():
    name = f"swarmgate-test-mhr-{uuid.uuid4().hex[:8]}"
    yield name
    # the peer's runner created this slice under the cgroup v1 memory controller
    remove_slice(name)


def test_switch_off_refuses_243_and_runs_nothing(tmp_path, sshd, git_repo, slice_name):
    _commit_repo(git_repo, slice_name)
    hosts, root = _hosts(tmp_path, sshd, enabled=False)
    marker = tmp_path / "ran"
    cp = _mhr(git_repo, hosts, "--peer", "p1", "--memory-cap", "256M", "--", "touch", str(marker))
    assert cp.returncode == 243, cp.stderr
    assert "switch is off" in cp.stderr
    assert not marker.exists()
    assert not (root / "runs").exists()


def test_cap_above_peer_max_is_refused(tmp_path, sshd, git_repo, slice_name):
    _commit_repo(git_repo, slice_name)
    hosts, root = _hosts(tmp_path, sshd, max_cap='"512M"')
    cp = _mhr(git_repo, hosts, "--peer", "p1", "--memory-cap", "1G", "--", "true")
    assert cp.returncode == 251
    assert "max_cap" in cp.stderr
    assert not (root / "runs").exists()


def test_toolchain_mismatch_is_242(tmp_path, sshd, git_repo, slice_name):
    _commit_repo(git_repo, slice_name)
    # the same command prints differently here and on the peer (SSH_CONNECTION is set only there)
    hosts, root = _hosts(tmp_path, sshd, toolchain=("python3 -VV", "echo ${SSH_CONNECTION:+remote}"))
    cp = _mhr(git_repo, hosts, "--peer", "p1", "--memory-cap", "256M", "--", "true")
    assert cp.returncode == 242, cp.stderr
    assert "toolchains differ" in cp.stderr and "line 1" in cp.stderr
    assert not (root / "runs").exists()


def test_unreachable_peer_is_243(tmp_path, sshd, git_repo, slice_name):
    _commit_repo(git_repo, slice_name)
    hosts, _ = _hosts(tmp_path, sshd)
    hosts.write_text(hosts.read_text().replace(f"port = {sshd.port}", "port = 1"))
    cp = _mhr(git_repo, hosts, "--peer", "p1", "--memory-cap", "256M", "--", "true")
    assert cp.returncode == 243
    assert "cannot reach" in cp.stderr and "no local fallback" in cp.stderr


@pytest.mark.usefixtures("writable_cgroup")
def test_full_run_copies_runs_fetches_redacts_and_cleans(tmp_path, sshd, git_repo, slice_name):
    _commit_repo(git_repo, slice_name)
    hosts, root = _hosts(tmp_path, sshd)
    fetched = tmp_path / "fetched"
    cp = _mhr(git_repo, hosts, "--peer", "p1", "--memory-cap", "256M", "--label", "t-full", "--poll", "0.2",
              "--fetch", "out/r.txt", "--fetch-dest", str(fetched), "--",
              "sh", "-c", "sh job.sh; test -e untracked.txt && echo LEAK; "
                          "cat /proc/self/cgroup | grep memory; git log --oneline | wc -l; exit 7")
    assert cp.returncode == 7, cp.stderr
    host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    assert "job-ran-on <peer>" in cp.stdout and host not in cp.stdout
    assert "LEAK" not in cp.stdout  # only `git ls-files` travels
    assert slice_name in cp.stdout  # it ran under the peer's run-with-memory-cap
    assert "\n1\n" in cp.stdout  # git init + one commit on the peer
    assert (fetched / "out" / "r.txt").read_text() == "result\n"
    assert list((root / "runs").iterdir()) == []  # tree and pid/exit/log files gone
    assert "verified gone" in cp.stderr


@pytest.mark.usefixtures("writable_cgroup")
def test_signal_stops_whole_tree_fetches_partial_and_cleans_247(tmp_path, sshd, git_repo, slice_name):
    _commit_repo(git_repo, slice_name)
    hosts, root = _hosts(tmp_path, sshd)
    fetched = tmp_path / "fetched"
    # a tree that keeps forking children while it runs
    script = ("mkdir -p out; echo partial > out/p.txt; "
              "while true; do (sleep 300 & sleep 300; wait) & sleep 0.05; done")
    env = dict(os.environ, SWARMGATE_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.Popen([sys.executable, "-m", "swarmgate", "multi-host-run", "--hosts-config", str(hosts),
                             "--peer", "p1", "--memory-cap", "256M", "--label", "t-sig", "--poll", "0.2",
                             "--grace", "5", "--fetch", "out/p.txt", "--fetch-dest", str(fetched), "--",
                             "bash", "-c", script],
                            cwd=git_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    pid_file = root / "runs" / "t-sig.pid"
    while time.monotonic() < deadline and not pid_file.exists():
        time.sleep(0.1)
    assert pid_file.exists(), "the job never started on the peer"
    remote_pid = int(pid_file.read_text())
    time.sleep(1.0)
    tree = [remote_pid] + [c.pid for c in psutil.Process(remote_pid).children(recursive=True)]
    assert len(tree) > 3
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 247, err
    assert (fetched / "out" / "p.txt").read_text() == "partial\n"
    assert list((root / "runs").iterdir()) == []
    time.sleep(0.2)
    alive = [p for p in tree if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"processes left on the peer: {alive}"


def test_proc_tree_catches_children_born_during_freeze():
    # a parent that forks a new child every 10 ms
    p = subprocess.Popen(["bash", "-c", "while true; do sleep 60 & sleep 0.01; done"])
    try:
        time.sleep(0.5)
        before = proc_tree.descendants(p.pid)
        assert len(before) > 5
        left = proc_tree.stop_tree(p.pid, grace=5)
        assert left == []
        p.wait(10)
        time.sleep(0.1)
        for pid in before:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    finally:
        terminate(p)


def test_local_mode_goes_through_runner_usage_errors(tmp_path, git_repo):
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "multi-host-run", "--", "true"],
                        cwd=git_repo, capture_output=True, text=True)
    assert cp.returncode == 251 and "--memory-cap is required" in cp.stderr
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "multi-host-run", "--memory-cap", "1G"],
                        cwd=git_repo, capture_output=True, text=True)
    assert cp.returncode == 251 and "after `--`" in cp.stderr


def test_poll_reads_output_written_just_before_the_exit(tmp_path):
    """The job writes its output, then its exit file. A poll that read the log first and the exit
    file second lost output written between the two reads (the run then ended with it unread). Here
    the exit file is a FIFO: its writer appends the job's last output, then the exit code, at the
    moment the poll reads the exit file, so the order of the reads decides what comes back."""
    peer = {"transport": "local", "host": "peer", "work_root": str(tmp_path)}
    run = MHR.PeerRun(peer, "job", ssh.Redactor([]))
    (tmp_path / "runs").mkdir()
    with open(run.log_file, "w") as f:
        f.write("early\n")
    os.mkfifo(run.exit_file)

    def job_ends():
        with open(run.exit_file, "w") as exit_file:   # blocks until the poll opens the exit file
            with open(run.log_file, "a") as log:
                log.write("last words\n")
            exit_file.write("0\n")

    t = threading.Thread(target=job_ends, daemon=True)
    t.start()
    out, code = run.poll()
    t.join(timeout=30)
    assert not t.is_alive()
    assert (out, code) == (b"early\nlast words\n", 0)
