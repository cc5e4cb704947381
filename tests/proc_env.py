"""Processes told apart by a variable in their environment: every process a test (or a run of the
real client, or a case of the execution harness) starts inherits a mark, so what it left behind is
found by pid and killed exactly, never by name."""
from __future__ import annotations

import os


def pids_with_env(name: str, value: str) -> list[int]:
    """Pids of the processes whose environment holds ``name=value`` (this process excluded)."""
    needle = f"{name}={value}".encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(int(entry))
        except OSError:
            continue
    return out
