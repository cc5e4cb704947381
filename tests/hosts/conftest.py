"""Fixtures for the hosts tests (the runner and the host tools): real cgroups under a temporary
slice, a temp state dir, a loopback sshd, a temp git repository.

Skips with the reason where the v1/v2 memory controller cannot be written here or sshd is missing;
fails instead under SWARMGATE_REQUIRE_REAL_PARTS=1 (CI; the rule in tests/conftest.py).
"""
import os

import pytest

from swarmgate.hosts.runner_selftest import Sandbox
from tests import builders as build
from tests.hosts.cgroups import cgroups_writable, need_real
from tests.hosts.sshd import require, serve

# the runner's backend for each cgroup layout of the `layout` marker (tests/vm/plugin.py)
BACKEND_OF = {"v1": "cgroup1", "v2": "cgroup2", "systemd": "systemd"}


def layout_backend(request) -> str:
    """The backend a test's cgroup layout pins (``auto`` for a test without the layout marker)."""
    callspec = getattr(request.node, "callspec", None)
    return BACKEND_OF.get(callspec.params.get("layout") if callspec else None, "auto")


@pytest.fixture
def sandbox(request, monkeypatch):
    """A temp repo (.claude/swarmgate.toml with a 256M total, its own slice, the layout's backend) + state dir."""
    kind = layout_backend(request)
    need_real(cgroups_writable(kind))

    sb = Sandbox(prefix="sgtest", backend=kind)
    monkeypatch.setenv("SWARMGATE_STATE_DIR", sb.state)
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", os.path.join(sb.tmp, "hosts.toml"))
    backend = sb.backend()
    slice_path = backend.slice_path(sb.slice)
    try:
        yield sb
    finally:
        sb.cleanup()
        assert not os.path.exists(slice_path), f"left behind the slice {slice_path}"
        assert not os.path.exists(sb.tmp)


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    d = tmp_path / "state"
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(d))
    return d


@pytest.fixture
def writable_cgroup():
    """Skip with the reason where the cgroup v1 memory controller is not writable (fail in CI)."""
    if not os.access("/sys/fs/cgroup/memory", os.W_OK):
        require("needs a writable cgroup v1 memory controller")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    yield from serve(tmp_path_factory)


@pytest.fixture
def git_repo(tmp_path):
    return build.git_repo(tmp_path / "repo")
