import os
import subprocess

import pytest

from tests.hosts.sshd import Sshd, require


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Never touch /var/tmp/swarmgate, the caller's hosts.toml or $HOME (tests may set their own)."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", str(tmp_path / "no-hosts.toml"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CLAUDE_PROJECT_DIR", "SWARMGATE_BREAK", "SWARMGATE_SELFTEST_TOKEN"):
        monkeypatch.delenv(var, raising=False)


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
def git_repo(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo
