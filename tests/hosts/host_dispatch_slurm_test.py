"""host-dispatch --backend slurm against a real single-node Slurm on loopback (SPEC §5.8)."""
import json
import os
import subprocess
import sys

import pytest

from tests.hosts.slurm_cluster import SlurmCluster
from tests.hosts.sshd import require


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    if not os.access("/sys/fs/cgroup/memory", os.W_OK):
        require("Slurm's cgroup plugin needs a writable cgroup v1 memory controller")
    cluster = SlurmCluster(str(tmp_path_factory.mktemp("slurm"))).start()
    yield cluster
    cluster.stop()
    for p in cluster.procs:
        assert p.poll() is not None


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / ".claude").mkdir(parents=True)
    (r / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = 1\n")
    (tmp_path / "hosts.toml").write_text('[dispatch]\nbackend = "slurm"\n[slurm]\ntime_limit = "00:05:00"\n')
    return r


def _hd(slurm, repo, *args):
    env = dict(slurm.env, SWARMGATE_STATE_DIR=str(repo.parent / "state"),
               SWARMGATE_HOSTS_CONFIG=str(repo.parent / "hosts.toml"))
    return subprocess.run([sys.executable, "-m", "swarmgate", "host-dispatch", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)


def test_exit_code_passes_through(slurm, repo):
    cp = _hd(slurm, repo, "--mem", "64M", "--", "sh", "-c", "echo on-slurm; exit 3")
    assert cp.returncode == 3, cp.stderr
    assert "on-slurm" in cp.stdout
    assert "srun --mem=96M --cpus-per-task=1" in cp.stderr


def test_out_of_memory_maps_to_250(slurm, repo):
    cp = _hd(slurm, repo, "--mem", "40M", "--", sys.executable, "-c", "b = bytearray(400 * 2**20)")
    assert cp.returncode == 250, cp.stderr
    assert "OUT_OF_MEMORY" in cp.stderr


def _history(repo):
    path = repo.parent / "state" / "runner" / "history.json"
    return json.loads(path.read_text())["labels"]


def _runs(repo):
    path = repo.parent / "state" / "runner" / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


HOLD = "import time\nb = bytearray(120 * 2**20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\ntime.sleep(4)\n"


def test_a_job_records_its_peak_and_duration_in_the_history(slurm, repo):
    """accounting_storage/none here: sacct is disabled, so the peak is sstat's MaxRSS while it ran and the
    duration the job's RunTime (hosts/slurm_accounting.py)."""
    cp = _hd(slurm, repo, "--mem", "200M", "--label", "hold-120", "--", sys.executable, "-c", HOLD)
    assert cp.returncode == 0, cp.stderr
    assert "Slurm accounting storage is disabled" in cp.stderr  # why the fallback was used, said once
    entry = _history(repo)["hold-120"]
    assert 100 * 2**20 <= entry["peak"] <= 300 * 2**20, entry
    assert 3 <= entry["duration_s"] <= 60 and entry["last_outcome"] == "ok" and entry["runs"] == 1, entry
    (run,) = [r for r in _runs(repo) if r["label"] == "hold-120"]
    assert run["backend"] == "slurm" and run["exit"] == 0 and run["peak"] == entry["peak"] and run["job"]


def test_an_oom_job_marks_its_label_and_the_next_prediction_books_more(slurm, repo):
    cp = _hd(slurm, repo, "--mem", "40M", "--label", "hog", "--", sys.executable, "-c", "b = bytearray(400 * 2**20)")
    assert cp.returncode == 250, cp.stderr
    entry = _history(repo)["hog"]
    assert entry["ceiling_hit"] and entry["last_outcome"] == "own_cap" and entry["cap"] == 60 * 2**20, entry
    cp = _hd(slurm, repo, "--dry-run", "--label", "hog", "--", "true")
    assert "--mem=135M" in cp.stdout, cp.stdout + cp.stderr  # its cap (60M) x 1.5 = 90M need, x 1.5 = 135M cap
