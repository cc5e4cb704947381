import json
import os
import subprocess
import sys

import pytest

from swarmgate.hosts import host_dispatch as HD
from swarmgate.selftest import run_suite
from tests.hosts.cgroups import remove_slice

G = 1 << 30
M = 1 << 20


def test_predict_history_ceiling_estimate_default():
    p = HD.predict({"peak": 2 * G, "duration_s": 60, "cap": 8 * G}, None, 8 * G)
    assert (p.need, p.cap) == (2 * G, 3 * G) and "history peak" in p.basis and p.duration == 60
    p = HD.predict({"peak": 2 * G, "ceiling_hit": True, "cap": 4 * G}, None, 8 * G)
    assert p.need == 6 * G and p.cap == 9 * G
    assert HD.predict(None, 1 * G, 8 * G).need == 1 * G
    assert HD.predict(None, None, 8 * G).need == 8 * G


def _rep(**kw):
    r = {"name": "here", "mem_total": 64 * G, "mem_available": 40 * G, "booked_not_grown": 0, "slice": None,
         "gpus": None, "quiesce_holders": 0}
    r.update(kw)
    return r


def _v(available, room=None):
    return {"readable": True, "available": available, "slice_room": room, "verdict": ""}


def test_judge_host_pending_room_never_peer_cap_gpu():
    pred = HD.Prediction(10 * G, 15 * G, "x", None)
    assert HD.judge_host(_rep(), _v(40 * G, 30 * G), pred, False, 0, None, None, 20 * G, 1024, 0)["fits"]
    j = HD.judge_host(_rep(), _v(40 * G, 30 * G), pred, False, 25 * G, None, None, 20 * G, 1024, 0)
    assert not j["fits"] and not j["never"]  # pending placements of the last 30 s count
    j = HD.judge_host(_rep(), _v(40 * G), pred, False, 0, None, 8 * G, 20 * G, 1024, 0)
    assert j["never"] and "whole budget" in j["why"]
    j = HD.judge_host(_rep(), _v(40 * G), pred, False, 0, {"max_cap": 12 * G}, None, 20 * G, 1024, 0)
    assert j["fits"] and j["cap"] == 12 * G
    j = HD.judge_host(_rep(), _v(40 * G), pred, False, 0, {"max_cap": 8 * G}, None, 20 * G, 1024, 0)
    assert j["never"]
    cards = [{"total_mib": 80000, "free_mib": 1000}]
    assert HD.judge_host(_rep(gpus=cards), _v(40 * G), pred, True, 0, None, None, 20 * G, 1024, 40000)["fits"]
    j = HD.judge_host(_rep(gpus=cards, quiesce_holders=1), _v(40 * G), pred, True, 0, None, None, 20 * G, 1024, 40000)
    assert not j["fits"] and "GPU" in j["why"]
    assert HD.judge_host(_rep(), _v(40 * G), pred, True, 0, None, None, 20 * G, 1024, 1)["never"]


def test_the_margin_stays_free():
    """need + margin must fit in the free memory (seed 003: fits = predicted + MARGIN <= free)."""
    pred = HD.Prediction(10 * G, 15 * G, "x", None)
    assert HD.judge_host(_rep(), _v(31 * G, 30 * G), pred, False, 0, None, None, 20 * G, 1024, 0)["fits"]
    j = HD.judge_host(_rep(), _v(29 * G, 30 * G), pred, False, 0, None, None, 20 * G, 1024, 0)
    assert not j["fits"] and not j["never"] and "margin 20G" in j["why"], j
    j = HD.judge_host(_rep(mem_total=28 * G), _v(28 * G, 30 * G), pred, False, 0, None, 24 * G, 20 * G, 1024, 0)
    assert j["never"]  # 10G + 20G margin can never fit in 28G of memory


def test_a_peers_room_counts_what_already_runs_there():
    pred = HD.Prediction(10 * G, 15 * G, "x", None)
    peer = _rep(name="p1", bookings=[{"label": "a", "booked": 20 * G, "used": 5 * G},
                                     {"label": "b", "booked": 4 * G, "used": 16 * G}])
    # total for capped runs on the peer: 64G - 20G margin = 44G; held: 20G + 16G = 36G; room 8G < 10G
    j = HD.judge_host(peer, _v(60 * G), pred, False, 0, {}, None, 20 * G, 1024, 0)
    assert not j["fits"] and "8G room" in j["why"], j
    assert HD.held(peer) == 36 * G
    assert HD.judge_host(_rep(name="p1", bookings=[]), _v(60 * G), pred, False, 0, {}, None, 20 * G, 1024, 0)["fits"]


def test_gpu_placements_of_the_last_seconds_count(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    pred = HD.Prediction(1 * G, 2 * G, "x", None)
    cards = [{"total_mib": 80000, "free_mib": 80000}]
    HD.add_pending("here", 1 * G, "first", 30, gpu_mib=60000)
    HD.add_pending("other", 1 * G, "elsewhere", 30, gpu_mib=70000)
    mem, gpu = HD.pending_for("here", 30)
    assert (mem, gpu) == (1 * G, 60000)
    j = HD.judge_host(_rep(gpus=cards), _v(40 * G), pred, True, mem, None, None, 1 * G, 1024, 30000, gpu)
    assert not j["fits"] and "placed in the last seconds" in j["why"], j
    assert HD.pending_for("here", 0) == (0, 0)  # outside the window nothing counts


def test_long_job_header(tmp_path):
    s = tmp_path / "replay.sh"
    s.write_text("#!/bin/sh\n# long-job: sharded=by-crate resume=checkpoint multi-host=multi-host-run\n")
    assert HD.long_job_declared(["sh", str(s)], str(tmp_path))
    s.write_text("#!/bin/sh\n# long-job: sharded=by-crate\n")
    assert not HD.long_job_declared(["sh", str(s)], str(tmp_path))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = tmp_path / "repo"
    (r / ".claude").mkdir(parents=True)
    (r / ".claude" / "swarmgate.toml").write_text(
        f'[memory]\ntotal = "512M"\nmargin = "64M"\nslice = "swarmgate-test-hd-{os.getpid()}"\n')
    monkeypatch.chdir(r)
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", str(tmp_path / "hosts.toml"))
    (tmp_path / "hosts.toml").write_text("")
    yield r
    remove_slice(f"swarmgate-test-hd-{os.getpid()}")


def _hd(*args):
    return subprocess.run([sys.executable, "-m", "swarmgate", "host-dispatch", *args], capture_output=True,
                          text=True, timeout=120)


def test_long_job_without_declaration_is_244(repo):
    cp = _hd("--dry-run", "--mem", "64M", "--expect-duration", "9000", "--", "sh", "replay.sh")
    assert cp.returncode == 244 and "long-job:" in cp.stderr
    (repo / "replay.sh").write_text("# long-job: sharded=2 resume=yes multi-host=yes\n")
    assert _hd("--dry-run", "--mem", "64M", "--expect-duration", "9000", "--", "sh", "replay.sh").returncode == 0


def test_fits_nowhere_is_241_at_once(repo):
    cp = _hd("--mem", "2G", "--wait", "600", "--", "true")
    assert cp.returncode == 241 and "fits on no host, ever" in cp.stderr


def test_dry_run_line_through_the_runner_with_cap_one_and_a_half(repo):
    cp = _hd("--dry-run", "--mem", "100M", "--label", "unit", "--", "cargo", "test")
    assert cp.returncode == 0, cp.stderr
    line = cp.stdout.split()
    assert os.path.basename(line[0]) == "run-with-memory-cap" and line[1] == "150M"
    assert line[2:] == ["--label", "unit", "--", "cargo", "test"]


def test_gpu_placement_wraps_in_gpu_quiesce_run(repo, tmp_path, monkeypatch):
    st = tmp_path / "nvml.json"
    st.write_text(json.dumps({"cards": [{"name": "GPU", "total_mib": 80000, "free_mib": 80000, "procs": []}]}))
    fakes = os.path.join(os.path.dirname(HD.__file__), "selftest_fakes")
    monkeypatch.setenv("FAKE_NVML_STATE", str(st))
    monkeypatch.setenv("SWARMGATE_NVML_PROBE", "force")
    monkeypatch.setenv("PYTHONPATH", fakes)
    cp = _hd("--dry-run", "--gpu", "--mem", "100M", "--", "torchrun", "train.py")
    assert cp.returncode == 0, cp.stderr
    words = cp.stdout.split()
    assert os.path.basename(words[0]) == "gpu-quiesce-run" and os.path.basename(words[2]) == "run-with-memory-cap"


def test_peer_chosen_when_it_fits_only_there(repo, tmp_path, sshd):
    (tmp_path / "hosts.toml").write_text("[across_machines]\nenabled = true\n"
                                         + sshd.peer_toml("p1", str(tmp_path / "root")))
    cp = _hd("--dry-run", "--mem", "1G", "--label", "big", "--", "make", "check-full")
    assert cp.returncode == 0, cp.stderr
    words = cp.stdout.split()
    assert os.path.basename(words[0]) == "multi-host-run"
    assert words[1:7] == ["--peer", "p1", "--memory-cap", "1.5G", "--label", "big"]


@pytest.mark.usefixtures("writable_cgroup")
def test_real_local_launch_passes_the_exit_code_through_the_runner(repo):
    cp = _hd("--mem", "64M", "--", "sh", "-c", "cat /proc/self/cgroup | grep -c swarmgate-test-hd; exit 5")
    assert cp.returncode == 5, cp.stderr
    assert cp.stdout.strip() == "1"


def test_slurm_argv_and_state_mapping():
    argv = HD.slurm_argv(3 * G, 31, 1, "01:00:00", "", "lbl", ["cargo", "test"])
    assert argv == ["srun", "--mem=3072M", "--cpus-per-task=31", "--time=01:00:00", "--job-name=lbl",
                    "--gres=gpu:1", "--", "cargo", "test"]
    assert HD.SLURM_STATES == {"OUT_OF_MEMORY": 250, "TIMEOUT": 253}


def test_selftest(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "st"))
    res = run_suite(HD.selftest_suite())
    assert res.ok, res.rows
