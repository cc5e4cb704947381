"""Authorizations for heavy runs (issue 10, docs/exec-shims.md): who may start a heavy program.

The exec-time shim (hooks/exec_check.py) lets a heavy argv run only inside a run cgroup of
`run-with-memory-cap` that is **marked**. A run is marked only when it consumed a **grant**:

1. the PreToolUse hook, in the act phase of a main agent's shell call that B01 and B02 let
   through (prefix + runner), records one grant per runner the call starts: bound to the exact
   command after the runner's `--`, single use, expiring when the call can no longer start it
   (the Bash call's timeout);
2. the runner (hosts/runner.py), after admission, consumes a grant whose argv equals its own
   command and marks its cgroup; a runner inside a subagent's containment cgroup never
   consumes one (so a subagent cannot take the main agent's grant while it is outstanding);
3. the shim accepts a heavy call only when its own cgroup is that run's cgroup or below it and
   the runner that made the mark is still alive.

Nothing a subagent types creates a grant (B01 refuses its heavy commands before the act phase),
and a mark cannot be inherited outside the run's cgroup. Everything is state under
SWARMGATE_STATE_DIR (protected by G01): an agent that deliberately forges these files defeats
this layer, which is the stated limit of the threat model (docs/threat-model.md).

Files: ``<state>/grants/<id>.json`` (one grant each, atomic writes, a lock for consumption) and
``<state>/grants/marks/<run cgroup name>.json`` (one mark per marked run).
"""
from __future__ import annotations

from swarmgate import lean_os as os
import time

GRANTS = "grants"
MARKS = "marks"
DEFAULT_TTL_S = 120.0
MAX_TTL_S = 7200.0


def grants_dir() -> str:
    from swarmgate.state_paths import state_dir_text

    return os.path.join(state_dir_text(), GRANTS)


def marks_dir() -> str:
    return os.path.join(grants_dir(), MARKS)


def _lock_path() -> str:
    return os.path.join(grants_dir(), "grants.lock")


def record(argvs: list[list[str]], *, session: str, agent: str | None, source: str, ttl_s: float,
           pattern: str = "", now: float | None = None, errors: list[str] | None = None) -> list[str]:
    """One grant per argv; returns their ids. Never raises for a state-dir problem: a grant that could
    not be written is left out (and why, the path and the errno, appended to ``errors``)."""
    from swarmgate.statefile import StateError, write_json_atomic

    now = time.time() if now is None else now
    ttl = max(1.0, min(float(ttl_s), MAX_TTL_S))
    ids = []
    for argv in argvs:
        if not argv:
            continue
        gid = f"{time.time_ns():x}-{os.getpid()}-{os.urandom(3).hex()}"
        rec = {"id": gid, "argv": [str(w) for w in argv], "session": session, "agent": agent,
               "source": source, "pattern": pattern, "created": round(now, 3), "expires": round(now + ttl, 3)}
        try:
            write_json_atomic(os.path.join(grants_dir(), gid + ".json"), rec, durable=False)
        except (OSError, StateError) as e:
            if errors is not None:
                errors.append(str(e))
            continue
        ids.append(gid)
    return ids


def _grant_files() -> list[str]:
    try:
        return sorted(n for n in os.listdir(grants_dir()) if n.endswith(".json"))
    except OSError:
        return []


def consume(argv: list[str], now: float | None = None) -> dict | None:
    """Take (delete) the oldest live grant whose argv equals ``argv``; drop expired grants on
    the way. None when there is none. Under a lock, so two runners never take one grant."""
    from swarmgate.statefile import StateError, locked, read_json

    now = time.time() if now is None else now
    want = [str(w) for w in argv]
    try:
        from swarmgate.statefile import ensure_dir
        ensure_dir(grants_dir())
        with locked(_lock_path(), 10):
            for name in _grant_files():
                path = os.path.join(grants_dir(), name)
                rec = read_json(path, None, report=lambda _m: None)
                if not isinstance(rec, dict) or float(rec.get("expires") or 0) < now:
                    _unlink(path)
                    continue
                if rec.get("argv") == want:
                    _unlink(path)
                    return rec
    except (OSError, StateError):
        return None
    return None


def outstanding(now: float | None = None) -> list[dict]:
    """Live grants (for `swarmgate status`, tests)."""
    from swarmgate.statefile import read_json

    now = time.time() if now is None else now
    out = []
    for name in _grant_files():
        rec = read_json(os.path.join(grants_dir(), name), None, report=lambda _m: None)
        if isinstance(rec, dict) and float(rec.get("expires") or 0) >= now:
            out.append(rec)
    return out


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def mark_path(cgroup_path: str) -> str:
    return os.path.join(marks_dir(), os.path.basename(cgroup_path.rstrip("/")) + ".json")


def mark(cgroup_path: str, holder: dict, grant: dict) -> None:
    """Mark a run's cgroup: heavy programs may run inside it while ``holder`` (the runner) lives."""
    from swarmgate.statefile import write_json_atomic

    write_json_atomic(mark_path(cgroup_path), {
        "cgroup": cgroup_path, "pid": holder["pid"], "start": holder.get("start"),
        "grant": grant.get("id"), "argv": grant.get("argv"), "session": grant.get("session"),
        "source": grant.get("source"), "since": round(time.time(), 3)}, durable=False)


def unmark(cgroup_path: str) -> None:
    _unlink(mark_path(cgroup_path))


def mark_of(cgroup_path: str | None) -> dict | None:
    """The live mark covering ``cgroup_path`` (a process's own cgroup): a mark whose cgroup is
    that path or one of its ancestors, whose runner is still alive. None otherwise."""
    from swarmgate.procinfo import is_alive
    from swarmgate.statefile import read_json

    if not cgroup_path:
        return None
    try:
        names = os.listdir(marks_dir())
    except OSError:
        return None
    for name in names:
        if not name.endswith(".json"):
            continue
        rec = read_json(os.path.join(marks_dir(), name), None, report=lambda _m: None)
        if not isinstance(rec, dict):
            continue
        cg = str(rec.get("cgroup") or "")
        if not cg or not (cgroup_path == cg or cgroup_path.startswith(cg.rstrip("/") + "/")):
            continue
        start = rec.get("start")
        if isinstance(rec.get("pid"), int) and is_alive(rec["pid"], start if isinstance(start, int) else None):
            return rec
    return None
