"""Run a command as a child subreaper; when it ends, kill and reap everything it left behind.

    python reaper.py COMMAND [ARGS...]

Claude Code starts shells in their own sessions, so a process group does not
hold them, and an orphan re-parented to a PID 1 that never reaps stays a
zombie. Under PR_SET_CHILD_SUBREAPER every orphan of the command is
re-parented to this process instead: after the command exits (or on SIGTERM,
which kills the command), each remaining descendant is killed by pid and
reaped. Exit status: the command's (128+N for a signal).
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def _children(me: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if int(fields[1]) == me:
            out.append(int(name))
    return out


def _reap_all(me: int, deadline_s: float = 20.0) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        for pid in _children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return  # no children left at all
        time.sleep(0.02)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: reaper.py COMMAND [ARGS...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"reaper: prctl(PR_SET_CHILD_SUBREAPER) failed: errno {ctypes.get_errno()}", file=sys.stderr)
    child = subprocess.Popen(argv)

    def on_term(signum, frame):  # noqa: ARG001
        try:
            child.kill()
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    rc = child.wait()
    _reap_all(os.getpid())
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
