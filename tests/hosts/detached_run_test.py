import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from swarmgate.hosts import detached_run as DR
from swarmgate.hosts.runner_selftest import Sandbox
from swarmgate.selftest import run_suite
from tests.vm.plugin import inside_vm, require


@pytest.fixture
def env(tmp_path):
    return dict(os.environ, SWARMGATE_STATE_DIR=str(tmp_path / "state"), SWARMGATE_DETACHED_BACKEND="process")


def _dr(env, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "swarmgate", "detached-run", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _rec(tmp_path, label):
    return json.loads((tmp_path / "state" / "detached" / label / "run.json").read_text())


def test_start_status_wait_records_exit_code_and_output(env, tmp_path):
    cp = _dr(env, "start", "--label", "job1", "--", "sh", "-c", "echo hello; sleep 0.5; exit 9")
    assert cp.returncode == 0 and "started job1" in cp.stdout, cp.stderr
    st = _dr(env, "status", "job1")
    assert "job1: running" in st.stdout or "job1: exited" in st.stdout
    assert _dr(env, "wait", "job1", "--timeout", "30").returncode == 9
    assert "job1: exited, exit 9" in _dr(env, "status").stdout
    rec = _rec(tmp_path, "job1")
    assert rec["exit"] == 9 and "hello" in open(rec["log"]).read()
    # the supervisor writes the record, then exits: `wait` may see the record a moment before that
    _wait_for(lambda: _gone(rec["supervisor_pid"]), "the supervisor to exit after recording")


def test_outlives_the_session_that_started_it(env, tmp_path):
    # the "session" is a shell that starts the job and is then killed with its whole process group
    session = subprocess.Popen([sys.executable, "-m", "swarmgate", "detached-run", "start", "--label", "long", "--",
                                "sh", "-c", "sleep 1.5; echo survived"], env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    session.wait(30)
    try:  # the leader has exited; kill whatever is left in its process group
        os.killpg(session.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert _dr(env, "wait", "long", "--timeout", "30").returncode == 0
    assert "survived" in open(_rec(tmp_path, "long")["log"]).read()


@pytest.mark.layout("v1", "systemd")  # here: the detached supervisor; inside the VM: a unit of systemd
def test_wall_clock_is_253_and_stop_is_247(env, tmp_path, layout):
    if layout == "systemd":
        env = _systemd_env(tmp_path)
    _dr(env, "start", "--label", "slow", "--wall-clock", "1", "--grace", "2", "--", "sleep", "60")
    assert _dr(env, "wait", "slow", "--timeout", "60").returncode == 253
    assert "wall clock" in _rec(tmp_path, "slow")["reason"]
    _dr(env, "start", "--label", "tostop", "--grace", "2", "--", "sh", "-c", "sleep 60 & sleep 60; wait")
    rec = _rec(tmp_path, "tostop")
    tree = _wait_for(lambda: _tree_with_sleeps(rec["pid"], 2), "the job's two sleeps to start")
    if layout == "systemd":
        assert _unit_state("swarmgate-detached-tostop.service") == "active"
    cp = _dr(env, "stop", "tostop", timeout=120)
    assert cp.returncode == 0 and "exit 247" in cp.stdout, cp.stderr
    assert _rec(tmp_path, "tostop")["exit"] == 247
    _wait_for(lambda: all(_gone(p) for p in tree), f"the stopped tree {tree} to be gone")
    if layout == "systemd":
        _wait_for(lambda: _unit_state("swarmgate-detached-tostop.service") in ("inactive", ""), "the unit to go")


def _gone(pid):
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _tree_with_sleeps(pid, n):
    """The job's pid and its descendants once ``n`` sleep processes are among them, else None."""
    try:
        kids = psutil.Process(pid).children(recursive=True)
        if sum(1 for c in kids if c.name() == "sleep") < n:
            return None
    except psutil.NoSuchProcess:
        return None
    return [pid] + [c.pid for c in kids]


def _wait_for(probe, what, timeout=120.0):
    """Poll ``probe`` until it returns something true (no fixed sleeps: the machine may be loaded)."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_leftovers_are_stopped_after_the_job(env, tmp_path):
    pidfile = tmp_path / "bg.pid"
    _dr(env, "start", "--label", "leaky", "--grace", "2", "--", "sh", "-c", f"sleep 60 & echo $! > {pidfile}")
    assert _dr(env, "wait", "leaky", "--timeout", "30").returncode == 0
    pid = int(pidfile.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert pid in _rec(tmp_path, "leaky")["leftovers_stopped"]


def test_running_label_refused_and_bad_input(env):
    _dr(env, "start", "--label", "dup", "--", "sleep", "5")
    cp = _dr(env, "start", "--label", "dup", "--", "true")
    assert cp.returncode == 251 and "still running" in cp.stderr
    _dr(env, "stop", "dup")
    assert _dr(env, "start", "--label", "../x", "--", "true").returncode == 251
    assert _dr(env, "start", "--label", "x").returncode == 251
    assert _dr(env, "wait", "nope").returncode == 251


def test_systemd_unit_command_is_exact():
    argv = DR.systemd_argv("build", "/repo", "/state/build/output.log", 30, ["HOME", "PATH"], user=False)
    assert argv == ["systemd-run", "--unit=swarmgate-detached-build.service", "--collect", "--quiet",
                    "--property=KillMode=mixed", "--property=TimeoutStopSec=60",
                    "--property=StandardOutput=append:/state/build/output.log",
                    "--property=StandardError=append:/state/build/output.log", "--working-directory=/repo",
                    "--setenv=HOME", "--setenv=PATH",
                    "--", sys.executable, "-m", "swarmgate", "detached-run", "_supervise", "build"]
    assert DR.systemd_argv("b", "/r", "/l", 30, [], user=True)[:2] == ["systemd-run", "--user"]
    assert DR.passed_env({"PATH": "/bin", "INVOCATION_ID": "x", "BASH_FUNC_f%%": "() {", "A_1": ""}) == ["A_1", "PATH"]


def test_selftest(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "st"))
    res = run_suite(DR.selftest_suite())
    assert res.ok, res.rows


# --- live under systemd as PID 1 (inside the systemd test guest: tests/vm) ---

def _systemd_env(tmp_path) -> dict:
    env = dict(os.environ, SWARMGATE_STATE_DIR=str(tmp_path / "state"))
    env.pop("SWARMGATE_DETACHED_BACKEND", None)
    return env


def _unit_state(unit: str) -> str:
    cp = subprocess.run(["systemctl", "show", unit, "-p", "ActiveState", "--value"], capture_output=True, text=True)
    return cp.stdout.strip()


@pytest.mark.layout("systemd")
def test_under_systemd_the_job_is_a_unit_and_its_exit_code_is_recorded(tmp_path):
    env = _systemd_env(tmp_path)
    # the job ends only once the test has looked at its cgroup (a fixed `sleep 1` could be over first in a guest)
    looked = tmp_path / "looked"
    cp = _dr(env, "start", "--label", "unit1", "--", "sh", "-c",
             f"echo hello from the unit; while [ ! -e {looked} ]; do sleep 0.1; done; exit 9")
    try:
        assert cp.returncode == 0 and "as system unit swarmgate-detached-unit1.service" in cp.stdout, cp.stderr
        rec = _rec(tmp_path, "unit1")
        assert rec["backend"] == "systemd"
        with open(f"/proc/{rec['pid']}/cgroup") as f:  # the job runs inside the unit's cgroup
            assert "/swarmgate-detached-unit1.service" in f.read()
    finally:
        looked.touch()
    assert _dr(env, "wait", "unit1", "--timeout", "60").returncode == 9
    rec = _rec(tmp_path, "unit1")
    assert rec["exit"] == 9 and "hello from the unit" in open(rec["log"]).read()
    assert "unit1: exited, exit 9" in _dr(env, "status", "unit1").stdout
    _wait_for(lambda: _unit_state("swarmgate-detached-unit1.service") in ("inactive", ""), "the unit to go")


def _capped_sleeper(sb, pidfile, looked) -> list[str]:
    """A job that starts a capped run in the background and ends, leaving the run behind, once the run's
    command wrote its pid and the test has looked where it runs (``looked`` exists): a job that ended at
    once could have its leftovers stopped before the test read /proc/PID/cgroup."""
    runner = " ".join(sb.argv(["64M", "--label", "left-behind", "--"]))
    return ["sh", "-c", f"{runner} sh -c 'echo $$ > {pidfile}; exec sleep 600' & "
                        f"while [ ! -s {pidfile} ] || [ ! -e {looked} ]; do sleep 0.1; done; exit 0"]


@pytest.mark.layout("systemd")
def test_under_systemd_a_capped_run_the_job_left_in_its_own_scope_is_stopped_after_the_job(tmp_path):
    """The seed's case: the capped run's scope is not in the job's unit, so stopping the unit would
    not stop it; the supervisor finds it after the job and stops it."""
    sb = Sandbox(prefix="sgdr", backend="systemd")
    try:
        env = dict(sb.env(), SWARMGATE_STATE_DIR=sb.state)
        env.pop("SWARMGATE_DETACHED_BACKEND", None)
        pidfile, looked = tmp_path / "inner.pid", tmp_path / "looked"
        cp = subprocess.run([sys.executable, "-m", "swarmgate", "detached-run", "start", "--label", "leaky",
                             "--grace", "2", "--", *_capped_sleeper(sb, pidfile, looked)],
                            env=env, cwd=sb.repo, capture_output=True, text=True, timeout=120)
        assert cp.returncode == 0, cp.stderr
        try:
            inner = int(_wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), "the capped run"))
            with open(f"/proc/{inner}/cgroup") as f:
                where = f.read()
        finally:
            looked.touch()  # the job may end now
        assert "swarmgate-run-" in where and "swarmgate-detached-leaky" not in where, where
        wait = subprocess.run([sys.executable, "-m", "swarmgate", "detached-run", "wait", "leaky", "--timeout", "60"],
                              env=env, capture_output=True, text=True, timeout=120)
        assert wait.returncode == 0, wait.stderr
        rec = json.loads((Path(sb.state) / "detached" / "leaky" / "run.json").read_text())
        assert rec["leftovers_stopped"], rec
        _wait_for(lambda: _gone(inner), f"the capped run's process {inner} to be stopped")
        _wait_for(lambda: sb.backend().runs(sb.slice) == [], "the capped run's scope to go")
    finally:
        sb.cleanup()


@pytest.fixture
def user_manager():
    """A user other than root with its own systemd user manager (user@UID.service), inside the guest only.

    The guest's root is the host's, where /root (mode 700) holds the venv's interpreter: a tmpfs of
    mode 755 goes over /root with every entry of the host's bound back into it, so the user can run
    the tests' Python. The guest's /etc is a tmpfs overlay: the user, and a PAM stack for
    user@.service (pam_systemd sets its XDG_RUNTIME_DIR) where the host has none, live there and
    are removed afterwards with the user's manager and the mounts."""
    if inside_vm() != "systemd":
        require("a user manager is started only inside the systemd guest")
    name, uid = f"sgtest{os.getpid()}", 4321
    home = f"/tmp/{name}"
    hold = f"/run/{name}-root"
    mounted: list[str] = []
    pam = "/etc/pam.d/systemd-user"
    made_pam = not os.path.exists(pam)

    def sh(*argv: str) -> None:
        subprocess.run(argv, check=True, capture_output=True, timeout=180)

    try:
        if not os.stat("/root").st_mode & 0o001:
            os.makedirs(hold)
            sh("mount", "--bind", "/root", hold)
            mounted.append(hold)
            sh("mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/root")
            mounted.append("/root")
            for entry in sorted(os.listdir(hold)):
                src, dst = os.path.join(hold, entry), os.path.join("/root", entry)
                if os.path.isdir(src) and not os.path.islink(src):
                    os.mkdir(dst)
                elif os.path.islink(src):
                    os.symlink(os.readlink(src), dst)
                    continue
                else:
                    open(dst, "w").close()
                sh("mount", "--bind", src, dst)
                mounted.append(dst)
        if made_pam:
            with open(pam, "w") as f:
                f.write("account required pam_permit.so\nauth required pam_permit.so\n"
                        "session required pam_permit.so\nsession optional pam_systemd.so\n")
        sh("useradd", "-m", "-d", home, "-u", str(uid), name)
        sh("systemctl", "start", f"user@{uid}.service")
        yield name, uid, home
    finally:
        subprocess.run(["systemctl", "stop", f"user@{uid}.service"], capture_output=True, timeout=180)
        subprocess.run(["userdel", "-r", name], capture_output=True, timeout=60)
        if made_pam and os.path.exists(pam):
            os.unlink(pam)
        for path in reversed(mounted):
            subprocess.run(["umount", path], check=True, capture_output=True, timeout=60)
        if os.path.isdir(hold):
            os.rmdir(hold)


@pytest.mark.layout("systemd")
def test_for_a_user_other_than_root_the_job_is_a_unit_of_that_users_own_manager(user_manager):
    """systemd-run --user, live: detached-run run by a user other than root starts its job in the user's
    manager (user@UID.service), and wait, the record and the log work the same."""
    name, uid, home = user_manager
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARMGATE_DETACHED")}
    env.update(HOME=home, XDG_RUNTIME_DIR=f"/run/user/{uid}", SWARMGATE_STATE_DIR=f"{home}/state",
               SWARMGATE_HOSTS_CONFIG=f"{home}/hosts.toml", TMPDIR=home)

    def dr(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["runuser", "-u", name, "--", sys.executable, "-m", "swarmgate", "detached-run", *args],
                              cwd=home, env=env, capture_output=True, text=True, timeout=240)

    cp = dr("start", "--label", "u1", "--", "sh", "-c", "echo hello from the user unit; sleep 1; exit 7")
    assert cp.returncode == 0 and "as user unit swarmgate-detached-u1.service" in cp.stdout, cp.stdout + cp.stderr
    assert dr("wait", "u1", "--timeout", "120").returncode == 7
    rec = json.loads((Path(home) / "state" / "detached" / "u1" / "run.json").read_text())
    assert rec["backend"] == "systemd" and rec["manager"] == "user" and rec["exit"] == 7, rec
    assert "hello from the user unit" in Path(rec["log"]).read_text()
    system = subprocess.run(["systemctl", "show", "swarmgate-detached-u1.service", "-p", "LoadState", "--value"],
                            capture_output=True, text=True, timeout=60)
    assert system.stdout.strip() == "not-found"  # the system manager never had it: the user's did
