"""Process identity that survives pid reuse: pid + start time (/proc/PID/stat field 22); and what
/proc says of a process (its parent, its command line)."""
from __future__ import annotations

from swarmgate import lean_os as os


def start_time(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError, OSError):
        return None
    # comm (field 2) may hold spaces and parentheses: split after the last ')'
    rest = data[data.rfind(b")") + 2:].split()
    try:
        return int(rest[19])  # field 22 overall; rest starts at field 3
    except (IndexError, ValueError):
        return None


def parent_pid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()
    try:
        return int(rest[1])
    except (IndexError, ValueError):
        return None


def cmdline(pid: int) -> list[str]:
    """The argv of ``pid`` (/proc/PID/cmdline, its first 64 KiB), [] when it cannot be read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(64 * 1024)
    except OSError:
        return []
    return [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]


def is_alive(pid: int, start: int | None) -> bool:
    """True when ``pid`` exists and (if given) still has the same start time."""
    if pid <= 0:
        return False
    now = start_time(pid)
    if now is None:
        return False
    if start is not None and now != start:
        return False  # pid reused by another process
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        state = data[data.rfind(b")") + 2:].split()[0]
        if state in (b"Z", b"X"):
            return False
    except OSError:
        return False
    return True


def identity(pid: int | None = None) -> dict:
    """{"pid": .., "start": ..} for ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "start": start_time(pid)}


def holder_alive(record: dict) -> bool:
    """Liveness of a record carrying ``pid`` and ``start``."""
    try:
        pid = int(record.get("pid", 0))
    except (TypeError, ValueError):
        return False
    start = record.get("start")
    try:
        start = int(start) if start is not None else None
    except (TypeError, ValueError):
        return False
    return is_alive(pid, start)


# the shells Claude Code may run a hook command through (session_process walks up past them)
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox", "ash"})


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().decode(errors="replace").strip()
    except OSError:
        return ""


def session_process(pid: int | None = None) -> dict:
    """{"pid", "start"} of the process that runs this hook (the Claude Code session).

    Starts at the parent of this process (or ``pid``) and walks up past shells
    (at most 4), because Claude Code may run the hook command through `sh -c`.
    """
    cur = os.getppid() if pid is None else pid
    for _ in range(4):
        if _comm(cur) not in _SHELLS:
            break
        parent = parent_pid(cur)
        if not parent or parent <= 1:
            break
        cur = parent
    return {"pid": cur, "start": start_time(cur)}
