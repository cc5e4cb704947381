"""Fixtures for the runner's tests: real cgroups under a temporary slice, a temp state dir.

Skips with the reason where the v1/v2 memory controller cannot be written here;
fails instead under SWARMGATE_REQUIRE_REAL_PARTS=1 (CI; the rule in tests/conftest.py).
"""
import os

import pytest

from swarmgate.hosts import cgroups
from swarmgate.hosts.runner_selftest import Sandbox

# the runner's backend for each cgroup layout of the `layout` marker (tests/vm/plugin.py)
BACKEND_OF = {"v1": "cgroup1", "v2": "cgroup2", "systemd": "systemd"}


def cgroups_writable(kind: str = "auto") -> str | None:
    """None when the runner can create memory cgroups here with backend ``kind``, else why not."""
    if os.geteuid() != 0:
        return "memory cgroups need root"
    try:
        backend = cgroups.get(kind)
    except cgroups.CgroupError as e:
        return str(e)
    if kind == "auto" and backend.name == "systemd":
        return "systemd is PID 1: these tests drive cgroups directly (the systemd backend has its own tests)"
    if not os.access(backend.root, os.W_OK):
        return f"{backend.root} is not writable"
    return None


def need_real(reason: str | None) -> None:
    if reason is None:
        return
    pytest.skip(reason)


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
