"""host-dispatch --backend slurm against a real single-node Slurm on loopback (SPEC §5.8)."""
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
