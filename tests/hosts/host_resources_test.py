import json
import os
import subprocess
import sys
import threading

import psutil
import pytest

from swarmgate.config import defaults
from swarmgate.hosts_config import validate_hosts
from swarmgate.hosts import collector
from swarmgate.hosts import history as H
from swarmgate.hosts import host_resources as HR
from swarmgate.selftest import run_suite
from tests.processes import terminate

FAKE_NVML = os.path.join(os.path.dirname(HR.__file__), "selftest_fakes")
GIB = 1 << 30


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("SWARMGATE_NVML_PROBE", raising=False)
    return tmp_path


def _report(**kw):
    base = {"name": "here", "cores": 32, "cores_in_use": 4.0, "load": [1, 1, 1], "mem_total": 64 * GIB,
            "mem_available": 40 * GIB, "booked_not_grown": 10 * GIB, "slice": None, "gpus": None,
            "gpu_note": "no GPU"}
    base.update(kw)
    return base


def test_judge_subtracts_booked_not_yet_grown():
    v = HR.judge(_report(), 25 * GIB, 31, False)
    assert v["available"] == 30 * GIB and v["verdict"] == "can run here"
    v = HR.judge(_report(), 35 * GIB, 31, False)
    assert v["verdict"].startswith("cannot run here") and "short 5G" in v["verdict"]
    assert v["threads_free"] == 28


def test_judge_slice_room_and_gpu_and_unreadable():
    sl = {"limit": 40 * GIB, "usage": 30 * GIB, "reclaimable": 8 * GIB}
    v = HR.judge(_report(booked_not_grown=0, slice=sl), 20 * GIB, 31, False)
    assert v["slice_room"] == 18 * GIB and "slice room" in v["verdict"]
    v = HR.judge(_report(), 1 * GIB, 31, True)
    assert "GPU: no GPU" in v["verdict"]
    v = HR.judge({"name": "p1", "error": "timeout"}, 1, 31, False)
    assert not v["readable"] and "unreadable" in v["verdict"]


def test_local_report_is_real(state):
    rep = HR.build(defaults(), validate_hosts({}), "cargo test --workspace")
    here = rep["hosts"][0]
    assert here["cores"] == os.cpu_count()
    meminfo = open("/proc/meminfo").read()
    assert "MemAvailable" in meminfo and here["mem_available"] > 0
    assert "no GPU" in here["gpu_note"]
    text = HR.render_text(rep)
    assert "host here:" in text and "verdict here:" in text and "no history" in text


def test_fake_nvml_cards_and_yield_service_share(state, tmp_path, monkeypatch):
    yielder = subprocess.Popen(["sleep", "30"])
    other = subprocess.Popen(["cat"], stdin=subprocess.PIPE)
    try:
        st = tmp_path / "nvml.json"
        st.write_text(json.dumps({"cards": [{"name": "NVIDIA H200", "total_mib": 143771, "free_mib": 100000,
                                             "procs": [{"pid": yielder.pid, "used_mib": 30000},
                                                       {"pid": other.pid, "used_mib": 2048}]}]}))
        monkeypatch.setenv("FAKE_NVML_STATE", str(st))
        monkeypatch.setenv("SWARMGATE_NVML_PROBE", "force")
        monkeypatch.syspath_prepend(FAKE_NVML)
        sys.modules.pop("pynvml", None)
        hosts = validate_hosts({"quiesce": {"process_names": ["sleep"]}})
        rep = HR.build(defaults(), hosts, "torchrun train.py")
        card = rep["hosts"][0]["gpus"][0]
        assert card["total_mib"] == 143771 and card["free_mib"] == 100000
        assert card["yield_service_mib"] == 30000
        assert [p["pid"] for p in card["processes"]] == [other.pid]
        text = HR.render_text(rep)
        assert "30000 MiB held by a yield service" in text
        assert "sleep" not in text  # the yield service is never named
        assert rep["gpu"] is True
    finally:
        sys.modules.pop("pynvml", None)
        for p in (yielder, other):
            terminate(p)


def test_cli_json_and_unknown_host(state):
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--json"], capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["hosts"][0]["name"] == "here"
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--host", "nope"],
                        capture_output=True, text=True)
    assert cp.returncode == 251 and "unknown host" in cp.stderr


def _hosts_file(tmp_path, sshd, **extra):
    path = tmp_path / "hosts.toml"
    path.write_text("[across_machines]\nenabled = true\n[report]\nhost_budget_s = 3.0\ntotal_budget_s = 5.0\n"
                    + sshd.peer_toml("p1", str(tmp_path / "peer-root"), **extra))
    return path


def test_peer_read_over_real_ssh_by_sending_the_collector(state, tmp_path, sshd):
    path = _hosts_file(tmp_path, sshd)
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--json",
                         "--hosts-config", str(path), "--", "cargo", "test"],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    names = [h["name"] for h in rep["hosts"]]
    assert names == ["here", "p1"]
    peer = rep["hosts"][1]
    assert "error" not in peer, peer
    assert peer["cores"] == os.cpu_count() and peer["mem_total"] > 0


def test_peer_that_hangs_is_reported_unreadable_within_budget(state, tmp_path, sshd):
    path = _hosts_file(tmp_path, sshd, python='"sleep 8; python3"')
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--json",
                         "--hosts-config", str(path)], capture_output=True, text=True, timeout=60)
    rep = json.loads(cp.stdout)
    v = {x["name"]: x for x in rep["verdicts"]}
    assert v["here"]["readable"] and not v["p1"]["readable"]
    assert rep["elapsed_s"] < 10
    _stop_peer_side(str(tmp_path))


def _stop_peer_side(marker: str) -> None:
    """The peer is this machine: the hung remote command (`sleep 8; python3 - OPTS`, OPTS naming this
    test's peer state dir) outlives the ssh client that gave up on it. Stop it by pid, assert it gone."""
    hung = [p for p in psutil.process_iter(["cmdline"])
            if p.info["cmdline"] and any(marker in a for a in p.info["cmdline"]) and p.pid != os.getpid()
            and "sleep 8" in " ".join(p.info["cmdline"])]
    tree = []
    for p in hung:
        try:
            tree += [p, *p.children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    for p in tree:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    gone, alive = psutil.wait_procs(tree, timeout=10)
    assert not alive, alive


def test_label_and_history_from_the_runner(state):
    assert HR.label_for("SWARMGATE_HEAVY=commit run-with-memory-cap 16G --label build -- cargo test") == "build"
    assert HR.label_for("run-with-memory-cap 16G -- cargo  test --workspace") == "cargo test --workspace"
    assert HR.label_for("A=1 pytest -q") == "pytest -q"
    data = H.load()
    H.record(data, "cargo test --workspace", peak=3 * GIB, duration_s=120.0, outcome="ok", basis="cap", cap=8 * GIB)
    H.save(data)
    rep = HR.build(defaults(), validate_hosts({}), "run-with-memory-cap 8G -- cargo test --workspace")
    assert rep["need"] == 3 * GIB
    assert "last peak 3G, ran 120s" in HR.render_text(rep)


def test_selftest(state):
    res = run_suite(HR.selftest_suite())
    assert res.ok, res.rows


def test_room_is_the_runner_total_before_any_slice_exists(state):
    v = HR.judge(_report(slice=None, booked_not_grown=0), 8 * GIB, 31, False, slice_total=4 * GIB)
    assert v["slice_room"] == 4 * GIB and "slice room: needs 8G" in v["verdict"]
    cfg = defaults()
    assert HR.local_total(cfg, _report()) == 64 * GIB - 16 * GIB   # margin auto: a quarter of 64G


def test_cores_in_use_never_sleeps_with_a_snapshot(tmp_path, monkeypatch):
    snap = str(tmp_path / "host" / "cpu-snapshot.json")
    slept = []
    real_sleep = collector.time.sleep
    main = threading.current_thread()

    def sleep(s):   # collector.time is the time module: other threads of the run (a test guest) sleep too
        if threading.current_thread() is main:
            slept.append(s)
        else:
            real_sleep(s)
    monkeypatch.setattr(collector.time, "sleep", sleep)
    first = collector.cpu_busy(0.25, snap)            # no sample yet: the load average stands in
    assert 0 <= first <= os.cpu_count() and slept == []
    again = collector.cpu_busy(0.25, snap)            # a moment later: the same figure
    assert again == first
    data = json.loads(open(snap).read())
    data["t"] -= 2.0                                   # two seconds later: a real /proc/stat delta
    data["s"] = [data["s"][0] - 200, data["s"][1] - 100]
    open(snap, "w").write(json.dumps(data))
    monkeypatch.setattr(collector, "_cpu_sample", lambda: [data["s"][0] + 200, data["s"][1] + 100])
    assert collector.cpu_busy(0.25, snap) == round(100 / 200 * os.cpu_count(), 2)  # half the time busy
    assert json.loads(open(snap).read())["t"] > data["t"]                            # and the sample moved on
    assert slept == []
    collector.cpu_busy(0.05, None)                     # without a snapshot file it samples
    assert slept == [0.05]


def test_break_switch_outside_a_selftest_is_refused(state, monkeypatch):
    monkeypatch.setenv("SWARMGATE_BREAK", "no-booking-subtraction")
    monkeypatch.delenv("SWARMGATE_SELFTEST_TOKEN", raising=False)
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--json"], capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 251 and "outside a self-test" in cp.stderr and cp.stdout == ""


def test_at_80_columns_each_host_is_a_block_whose_lines_fit(state):
    sl = {"limit": 40 * GIB, "usage": 30 * GIB, "reclaimable": 8 * GIB}
    gpus = [{"index": i, "name": "NVIDIA H200", "total_mib": 143771, "free_mib": 100000 - i, "processes": []}
            for i in range(2)]
    hosts = [_report(booked_not_grown=0, slice=sl), _report(name="gpu-box-with-a-long-name", gpus=gpus),
             {"name": "p1", "error": "ssh: connect to host p1 port 22: Connection timed out after 3.0s"}]
    rep = {"command": "cargo test --workspace", "history": None, "need": 20 * GIB, "gpu": False,
           "hosts": hosts, "verdicts": [HR.judge(h, 20 * GIB, 31, False) for h in hosts]}
    lines = HR.render_narrow(rep, 80)
    assert all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
    text = "\n".join(lines)
    assert "here: 32 cores, 4 in use, load 1/1/1, 28 heavy threads free" in lines
    assert "  memory: 40G available, slice room 18G" in lines
    assert "  GPU 1: 99999/143771 MiB free" in lines
    assert "p1: could not be read (ssh: connect to host p1 port 22" in text
    # a verdict too long for a line wraps at words, every word of it kept
    verdicts = [v["verdict"] for v in rep["verdicts"]]
    assert " ".join(text.split()).count("verdict: ") == 3
    for v in verdicts:
        assert " ".join(v.split()) in " ".join(text.split())
    assert lines[-1].startswith("this command: no history; assuming 20G")


def test_cli_at_80_columns_prints_no_line_wider(state):
    env = {**os.environ, "COLUMNS": "80"}
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--", "cargo", "build"],
                        capture_output=True, text=True, timeout=60, env=env)
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.splitlines()
    assert all(len(x) <= 80 for x in lines), lines
    assert any(x.startswith("  verdict: ") for x in lines) and lines[-1].startswith("this command:")
    assert not any("…" in x for x in lines)  # nothing cut: the words wrap instead
