"""Cgroups in tests: whether the runner can make them here (else skip with the reason, a failure
under SWARMGATE_REQUIRE_REAL_PARTS=1), and removing the ones a test made, deepest first."""
from __future__ import annotations

import os
import time

import pytest

from swarmgate.hosts import cgroups as host_cgroups


def cgroups_writable(kind: str = "auto") -> str | None:
    """None when the runner can create memory cgroups here with backend ``kind``, else why not."""
    if os.geteuid() != 0:
        return "memory cgroups need root"
    try:
        backend = host_cgroups.get(kind)
    except host_cgroups.CgroupError as e:
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


def remove_tree(root: str, timeout: float = 10.0) -> None:
    """rmdir ``root`` and every cgroup below it, children before parents.

    A cgroup whose last task is still exiting refuses rmdir (EBUSY) for a moment, so retry until
    ``timeout``; a tree still there after that holds a live process the test left behind.
    """
    deadline = time.monotonic() + timeout
    while os.path.isdir(root):
        # reverse lexicographic order puts every child path before its parent
        for dirpath in sorted((d for d, _, _ in os.walk(root)), reverse=True):
            try:
                os.rmdir(dirpath)
            except OSError:
                pass
        if not os.path.isdir(root) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if os.path.isdir(root):
        procs = []
        for d, _, _ in os.walk(root):
            try:
                procs += open(os.path.join(d, "cgroup.procs")).read().split()
            except OSError:
                pass
        raise AssertionError(f"cgroup {root} could not be removed; processes still in it: {procs}")


V1_CONTROLLERS = ("memory", "cpu")  # where swarmgate makes slices on cgroup v1 (hosts/cgroups.py)


def remove_slice(name: str, timeout: float = 10.0) -> None:
    """remove_tree for a top-level slice in every v1 controller swarmgate writes to (memory, cpu)."""
    for controller in V1_CONTROLLERS:
        remove_tree(os.path.realpath(f"/sys/fs/cgroup/{controller}/{name}"), timeout)
