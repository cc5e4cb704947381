import os
import subprocess

import pytest

from tests.hosts.sshd import Sshd, require


@pytest.fixture
def writable_cgroup():
    """Skip with the reason where the cgroup v1 memory controller is not writable (fail in CI)."""
    if not os.access("/sys/fs/cgroup/memory", os.W_OK):
        require("needs a writable cgroup v1 memory controller")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    d = tmp_path_factory.mktemp("sshd")
    server = Sshd(str(d)).start()
    yield server
    server.stop()


@pytest.fixture
def git_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo
