import json
import os
import subprocess
import sys

import psutil
import pytest

from swarmgate.hosts import gpu_quiesce_run as GQ
from swarmgate.procinfo import start_time
from swarmgate.selftest import run_suite
from tests.processes import terminate

FAKES = os.path.join(os.path.dirname(GQ.__file__), "selftest_fakes")


@pytest.fixture
def env(tmp_path):
    def make(cards, stop=("true",), check=("true",), names=("yield-svc",)):
        st = tmp_path / "nvml.json"
        st.write_text(json.dumps({"cards": cards}))
        hosts = tmp_path / "hosts.toml"
        hosts.write_text(f"[quiesce]\nstop = {json.dumps(list(stop))}\ncheck = {json.dumps(list(check))}\n"
                         f"process_names = {json.dumps(list(names))}\n")
        e = dict(os.environ, FAKE_NVML_STATE=str(st), SWARMGATE_NVML_PROBE="force",
                 PYTHONPATH=FAKES, SWARMGATE_STATE_DIR=str(tmp_path / "state"))
        return e, str(hosts)
    return make


def _run(e, hosts, *cmd, wait=None):
    extra = ["--wait", str(wait)] if wait is not None else []
    return subprocess.run([sys.executable, "-m", "swarmgate", "gpu-quiesce-run", "--hosts-config", hosts, *extra,
                           "--", *cmd], env=e, capture_output=True, text=True, timeout=60)


CARD = {"name": "NVIDIA H200", "total_mib": 143771, "free_mib": 143000, "procs": []}


def test_stops_services_reads_back_runs_and_does_not_restore(env, tmp_path):
    flag = tmp_path / "service-running"
    flag.write_text("1")
    e, hosts = env([CARD], stop=[f"rm -f {flag}"], check=[f"test ! -e {flag}"])
    cp = _run(e, hosts, "sh", "-c", "echo trained; exit 3")
    assert cp.returncode == 3 and "trained" in cp.stdout
    assert not flag.exists()  # stopped, and not restored afterwards
    assert os.listdir(tmp_path / "state" / "gpu") == [".lock"]  # registration removed


def test_service_that_does_not_stop_is_78_and_nothing_runs(env, tmp_path):
    e, hosts = env([CARD], stop=["true"], check=["false"])
    marker = tmp_path / "ran"
    cp = _run(e, hosts, "touch", str(marker))
    assert cp.returncode == 78 and "still running" in cp.stderr
    assert not marker.exists()


def test_later_user_only_checks(env, tmp_path):
    stops = tmp_path / "stop-calls"
    e, hosts = env([CARD], stop=[f"echo x >> {stops}"], check=["true"])
    holder = subprocess.Popen(["sleep", "30"])  # a live earlier registration
    try:
        regdir = tmp_path / "state" / "gpu"
        regdir.mkdir(parents=True)
        start = psutil.Process(holder.pid).create_time()  # noqa: F841 - the record uses /proc start ticks
        (regdir / f"{holder.pid}-{start_time(holder.pid)}").write_text("earlier run\n")
        cp = _run(e, hosts, "true")
        assert cp.returncode == 0, cp.stderr
        assert not stops.exists()  # the first user stopped them; we only read back
        holder.kill()
        holder.wait()
        cp = _run(e, hosts, "true")
        assert stops.read_text() == "x\n"  # the dead registration was pruned: we are first again
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_foreign_gpu_job_is_78_and_never_killed(env, tmp_path):
    other = subprocess.Popen(["sleep", "30"])
    yielder = subprocess.Popen(["sleep", "31"])
    try:
        card = dict(CARD, procs=[{"pid": other.pid, "used_mib": 4096}])
        e, hosts = env([card])
        marker = tmp_path / "ran"
        cp = _run(e, hosts, "touch", str(marker))
        assert cp.returncode == 78
        assert f"pid {other.pid}" in cp.stderr and "not touched" in cp.stderr
        assert other.poll() is None and not marker.exists()
        # a whitelisted yield service's process is not foreign
        card = dict(CARD, procs=[{"pid": yielder.pid, "used_mib": 4096}])
        e, hosts = env([card], names=["sleep"])
        cp = _run(e, hosts, "touch", str(marker))
        assert cp.returncode == 0 and marker.exists()
    finally:
        for p in (other, yielder):
            terminate(p)


def test_wait_for_foreign_job_to_end(env, tmp_path):
    other = subprocess.Popen(["sleep", "1"])
    try:
        e, hosts = env([dict(CARD, procs=[{"pid": other.pid, "used_mib": 1}])])
        cp = _run(e, hosts, "echo", "ran", wait=20)
        assert cp.returncode == 0 and "ran" in cp.stdout
    finally:
        terminate(other)


def test_no_gpu_is_78(tmp_path):
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("")
    e = dict(os.environ, SWARMGATE_STATE_DIR=str(tmp_path / "state"))
    e.pop("SWARMGATE_NVML_PROBE", None)
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "gpu-quiesce-run", "--hosts-config", str(hosts),
                         "--", "true"], env=e, capture_output=True, text=True)
    assert cp.returncode == 78 and "no GPU" in cp.stderr


def test_selftest_each_switch_turns_its_cell_red(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "st"))
    res = run_suite(GQ.selftest_suite())
    assert res.ok, res.rows
