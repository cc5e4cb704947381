"""Exclusive scratch-directory locks taken at dispatch (D16), released at SubagentStop.

One JSON record per directory under ``<state>/locks/scratch/<escaped path>.json``:
``{"path", "session", "dispatch" (tool_use_id), "name", "type", "pid", "start", "since"}``
where pid + start are the dispatching session's process. Every check-and-take
runs under one lock (``<state>/locks/scratch/.lock``) so two dispatches racing
for a directory cannot both get it, and a dispatch naming several directories
takes all of them or none.

A holder is live while its session process is the same live process (pid and
start time, so a reused pid reads as dead) AND the agent its dispatch became is
still running in that session's state, or the dispatch is younger than the
pending window (it has not reached SubagentStart yet). Anything else is stale
and is taken over; the lock of an agent that handed back is released at its
SubagentStop and would read as stale even if that release were missed.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from pathlib import Path



def _dir() -> Path:
    from swarmgate import state_paths
    return state_paths.locks_dir() / "scratch"


def normal_path(path: str, base: str) -> str:
    p = os.path.expanduser(path)
    if not os.path.isabs(p):
        p = os.path.join(base or "/", p)
    return os.path.realpath(p)


def record_name(norm: str) -> str:
    """File name of the lock record of a normalised path: the path escaped (one-to-one:
    letters, digits, `-_.` kept, every other byte as %XX), a digest when that is too long."""
    out = []
    for b in norm.encode("utf-8", "surrogateescape"):
        c = chr(b)
        out.append(c if (c.isascii() and (c.isalnum() or c in "-_.")) else f"%{b:02X}")
    name = "".join(out)
    if len(name) > 200:
        import hashlib
        name = name[:120] + "~" + hashlib.sha256(norm.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return name + ".json"


def record_path(norm: str) -> Path:
    return _dir() / record_name(norm)


def holder_status(rec: dict, now: float, window: float) -> tuple[bool, str]:
    """(live, description of the holder) for a lock record."""
    from swarmgate.hooks import session_state as S

    who = (f"session {rec.get('session') or '?'} (pid {rec.get('pid')}), dispatch "
           f"{rec.get('name') or rec.get('dispatch') or '?'} of type {rec.get('type') or '?'}")
    if not S.proc_alive({"pid": rec.get("pid"), "start": rec.get("start")}):
        return False, who + ": its session process is gone or its pid was reused"
    st = S.load(str(rec.get("session") or ""))
    d = S.dispatch_by_id(st, str(rec.get("dispatch") or ""))
    if d is not None and d.get("agent"):
        a = st["agents"].get(d["agent"]) or {}
        if a.get("stopped"):
            return False, who + f": agent {d['agent']} has handed back"
        return True, who + f", running as agent {d['agent']}"
    age = now - float(rec.get("since") or 0)
    if age < window:
        return True, who + f", dispatched {age:.0f}s ago and not started yet"
    return False, who + f": dispatched {age:.0f}s ago and never started"


def _scan(paths: list, owner: dict, base: str, window: float, t: float) -> tuple[list, list, list]:
    """(conflicts, stale, to take) for ``paths``: live holders other than ``owner``, stale
    holders that would be taken over, and (normalised path, record path) of every path free."""
    from swarmgate.statefile import read_json

    conflicts, stale, todo = [], [], []
    for p in paths:
        norm = normal_path(p, base)
        rp = record_path(norm)
        rec = read_json(rp, None)
        if isinstance(rec, dict):
            same = (rec.get("session") == owner.get("session")
                    and rec.get("dispatch") == owner.get("dispatch"))
            if not same:
                live, who = holder_status(rec, t, window)
                if live:
                    conflicts.append((p, who))
                    continue
                stale.append((p, who))
        todo.append((norm, rp))
    return conflicts, stale, todo


def conflicts(paths: list, owner: dict, base: str, window: float, now: float | None = None) -> list:
    """[(path, holder description)] of live holders of ``paths`` other than ``owner``, read
    without taking the lock (D16's judgement; ``acquire`` checks again under it)."""
    return _scan(paths, owner, base, window, time.time() if now is None else now)[0]


def acquire(paths: list, owner: dict, base: str, window: float, now: float | None = None,
            take: bool = True) -> tuple[list, list]:
    """Take every path in ``paths`` for ``owner`` (all or none).

    Returns (conflicts, taken_over): conflicts = [(path, holder description)] of live
    holders (then nothing is taken); taken_over = [(path, stale holder description)].
    ``take=False`` only checks.
    """
    from swarmgate.statefile import ensure_dir, locked, write_json_atomic

    t = time.time() if now is None else now
    ensure_dir(_dir())
    with locked(_dir() / ".lock", timeout=10.0):
        found, stale, todo = _scan(paths, owner, base, window, t)
        if found or not take:
            return found, stale
        for norm, rp in todo:
            write_json_atomic(rp, {**owner, "path": norm, "since": t})
    return [], stale


def release(session: str, dispatch: str, paths: list, base: str) -> list:
    """Remove the locks on ``paths`` held by (session, dispatch); returns the paths released."""
    from swarmgate.statefile import ensure_dir, locked, read_json

    out: list = []
    if not paths:
        return out
    ensure_dir(_dir())
    with locked(_dir() / ".lock", timeout=10.0):
        for p in paths:
            norm = normal_path(p, base)
            rp = record_path(norm)
            rec = read_json(rp, None)
            if isinstance(rec, dict) and rec.get("session") == session and rec.get("dispatch") == dispatch:
                try:
                    os.unlink(rp)
                    out.append(p)
                except OSError:
                    pass
    return out


def held(session: str | None = None) -> list:
    """Every lock record (of ``session`` when given)."""
    from swarmgate.statefile import read_json

    d = _dir()
    out: list = []
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return out
    for n in names:
        if not n.endswith(".json"):
            continue
        rec = read_json(d / n, None)
        if isinstance(rec, dict) and (session is None or rec.get("session") == session):
            out.append(rec)
    return out
