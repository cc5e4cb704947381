"""Stopping a process tree without losing children born meanwhile (SPEC §5.4 step 8).

Freeze every process (SIGSTOP), enumerate again to catch children born between
enumeration and freezing, repeat until no new process appears; then TERM from
the leaves up, CONT, and KILL what is left after a grace period (30 s).

Stdlib only and self-contained: multi-host-run sends this file's source to the
peer and runs it there with `python3 - PID GRACE`.
"""
import os
import signal
import sys
import time


def _children_map():
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2:].split()
        try:
            ppid = int(rest[1])
        except (IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def descendants(pid):
    """pid and every descendant, parents before children (breadth first)."""
    kids = _children_map()
    order, queue, seen = [], [pid], set()
    while queue:
        p = queue.pop(0)
        if p in seen:
            continue
        seen.add(p)
        order.append(p)
        queue.extend(kids.get(p, []))
    return order


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    state = data[data.rfind(b")") + 2:].split()[0]
    return state not in (b"Z", b"X")


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def freeze(pid, rounds=50):
    """SIGSTOP the whole tree, re-enumerating until it is stable. Returns the frozen pids."""
    frozen = []
    for _ in range(rounds):
        fresh = [p for p in descendants(pid) if p not in frozen]
        if not fresh:
            break
        for p in fresh:
            _signal(p, signal.SIGSTOP)
        frozen.extend(fresh)
        time.sleep(0.01)
    return frozen


def stop_tree(pid, grace=30.0, no_refreeze=False):
    """Freeze, TERM leaves first, CONT, KILL after ``grace``. Returns pids still alive (should be [])."""
    if no_refreeze:
        frozen = descendants(pid)
        for p in frozen:
            _signal(p, signal.SIGSTOP)
    else:
        frozen = freeze(pid)
    for p in reversed(frozen):  # leaves up
        _signal(p, signal.SIGTERM)
    for p in frozen:
        _signal(p, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in frozen):
            break
        time.sleep(0.05)
    left = [p for p in frozen if _alive(p)]
    for p in left:
        _signal(p, signal.SIGKILL)
    return [p for p in frozen if _alive(p)]


if __name__ == "__main__":
    target = int(sys.argv[1])
    grace = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    left = stop_tree(target, grace)
    print("stopped" if not left else f"left {left}")
