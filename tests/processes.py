"""Stopping what a test started, and proving it is gone (psutil's tests: every process a test
starts is reaped, and the test asserts the kill really happened)."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

import psutil


def pid_gone(pid: int, create_time: float | None = None) -> bool:
    """True when no process ``pid`` runs (a zombie counts as gone; a reused pid, given the first
    process's create time, too)."""
    try:
        p = psutil.Process(pid)
        if create_time is not None and abs(p.create_time() - create_time) > 0.01:
            return True
        return p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def assert_pid_gone(pid: int, timeout: float = 10.0, create_time: float | None = None) -> None:
    """Fail unless ``pid`` is gone within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not pid_gone(pid, create_time):
        if time.monotonic() >= deadline:
            raise AssertionError(f"process {pid} is still running {timeout:g} s after it was stopped")
        time.sleep(0.02)


def terminate(proc, timeout: float = 5.0, group: bool = False) -> None:
    """Stop a process a test started (a Popen, a psutil.Process or a pid): TERM, then KILL after
    ``timeout`` seconds; reap it when it is our child; assert it is gone. ``group``: signal its
    process group (a child started with start_new_session=True), and wait for the group's leader.
    Safe to call on a process that already ended."""
    if isinstance(proc, subprocess.Popen):
        pid, popen = proc.pid, proc
    else:
        pid, popen = (proc.pid if isinstance(proc, psutil.Process) else int(proc)), None
    try:
        create_time = psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        create_time = None

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)

    if popen is not None and popen.poll() is not None:
        assert_pid_gone(pid, create_time=create_time)
        return
    send(signal.SIGTERM)
    if popen is not None:
        try:
            popen.wait(timeout)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            popen.wait(timeout)
    else:
        deadline = time.monotonic() + timeout
        while not pid_gone(pid, create_time) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not pid_gone(pid, create_time):
            send(signal.SIGKILL)
    assert_pid_gone(pid, create_time=create_time)
