"""Which live sessions work on a repository, and the teammates among them (D07 across sessions).

Several main sessions (a person's terminals) and agent teams (each teammate a Claude Code
session of its own, started by the team lead with `--agent-name`, `--team-name`,
`--parent-session-id`) work on one repository at once. D07's per-session cap does not see them;
``[dispatch] max_concurrent_repo`` caps the repository as a whole, so every session that works
here says so:

    <state>/repos/<key of the repository>/sessions/<session id>.json
        {"session", "repo", "proc": {"pid", "start"}, "seen",
         "teammate": {"name", "parent", "team", "busy"} | null}

written when the session dispatches (D07's act), when one of its subagents starts (C02's act),
and at every tool call of a teammate session. An entry counts while its process is the same
live process (a crashed session, or a pid reused, never blocks anyone); a teammate counts as one
running agent while it is busy (TeammateIdle makes it idle; a task given to it, TaskCreated with
its name, or any tool call of its own makes it busy again).

Which session is a teammate (its process's command line, or the payload) is hooks/teammates.py,
which the engine asks on every main-agent call; ``teammate_of`` is also importable from here.

The mutating functions take the repository lock (``<key>/.lock``), always before a session's own
lock, so two sessions dispatching at once cannot both take the last slot.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import time

from swarmgate.hooks.teammates import teammate_of  # noqa: F401 - R.teammate_of for team_guards

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from pathlib import Path

STALE_S = 7 * 24 * 3600.0   # an entry whose process is gone and not seen for this long is removed


def repo_key(repo: str) -> str:
    from swarmgate.digest import sha256_hex
    return sha256_hex(os.path.realpath(repo).encode("utf-8", "surrogateescape"))[:20]


def repo_dir(repo: str) -> Path:
    from swarmgate import state_paths
    return state_paths.state_dir() / "repos" / repo_key(repo)


def lock_path(repo: str) -> Path:
    return repo_dir(repo) / ".lock"


def _entry_path(repo: str, session_id: str) -> Path:
    from swarmgate.state_paths import safe_name
    return repo_dir(repo) / "sessions" / (safe_name(session_id) + ".json")


# --- the index -----------------------------------------------------------------------------------

def note(repo: str, session_id: str, proc: dict, teammate: dict | None = None, busy: bool | None = None,
         now: float | None = None, *, held: bool = False) -> None:
    """Record (or refresh) ``session_id`` as a live session of ``repo``; ``busy`` sets a teammate's state.
    ``held``: the caller holds the repository lock already (D07's act)."""
    from swarmgate.statefile import ensure_dir, locked

    if not repo or not session_id:
        return
    ensure_dir(_entry_path(repo, session_id).parent)
    if held:
        _write_entry(repo, session_id, proc, teammate, busy, now)
        return
    with locked(lock_path(repo), timeout=10.0):
        _write_entry(repo, session_id, proc, teammate, busy, now)


def _write_entry(repo: str, session_id: str, proc: dict, teammate: dict | None, busy: bool | None,
                 now: float | None) -> None:
    from swarmgate.statefile import read_json, write_json_atomic

    path = _entry_path(repo, session_id)
    old = read_json(path, None)
    old = old if isinstance(old, dict) else {}
    mate = old.get("teammate") if isinstance(old.get("teammate"), dict) else None
    if teammate:
        mate = {**(mate or {"busy": True}), **teammate}
    if mate is not None and busy is not None:
        mate["busy"] = bool(busy)
    write_json_atomic(path, {"session": session_id, "repo": os.path.realpath(repo), "proc": proc,
                             "seen": time.time() if now is None else now, "teammate": mate}, durable=False)


def mark_teammate(repo: str, name: str, busy: bool, now: float | None = None) -> bool:
    """Set the teammate called ``name`` (of any live session of ``repo``) busy or idle; True when found."""
    from swarmgate.statefile import locked, read_json, write_json_atomic

    found = False
    d = repo_dir(repo) / "sessions"
    if not name or not d.is_dir():
        return False
    with locked(lock_path(repo), timeout=10.0):
        for entry in sorted(os.listdir(d)):
            path = d / entry
            rec = read_json(path, None)
            mate = rec.get("teammate") if isinstance(rec, dict) else None
            if isinstance(mate, dict) and mate.get("name") == name:
                mate["busy"] = busy
                rec["seen"] = time.time() if now is None else now
                write_json_atomic(path, rec, durable=False)
                found = True
    return found


def live_sessions(repo: str, alive=None) -> list[dict]:
    """The index entries of ``repo`` whose session process lives (read without a lock)."""
    from swarmgate.hooks.session_state import proc_alive
    from swarmgate.statefile import read_json

    alive = alive or proc_alive
    d = repo_dir(repo) / "sessions"
    out: list[dict] = []
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return out
    now = time.time()
    for n in names:
        if not n.endswith(".json"):
            continue
        rec = read_json(d / n, None)
        if not isinstance(rec, dict) or not rec.get("session"):
            continue
        if alive(rec.get("proc")):
            out.append(rec)
        elif now - float(rec.get("seen") or 0) > STALE_S:
            try:
                os.unlink(d / n)   # a session gone for a week: nobody will read it again
            except OSError:
                pass
    return out


def count(repo: str, now: float, window: float, *, own: str = "", own_state: dict | None = None,
          alive=None) -> tuple[int, list[str]]:
    """(running agents of every live session of ``repo``, what they are), for D07's repository cap:
    each session's running subagents and its dispatches not started yet, and each busy teammate.
    ``own_state``: the caller's session state as it stands under its lock (else read from disk)."""
    from swarmgate.hooks import session_state as S

    total, parts = 0, []
    seen = set()
    for rec in live_sessions(repo, alive):
        sid = str(rec["session"])
        seen.add(sid)
        st = own_state if (sid == own and own_state is not None) else S.load(sid)
        run = S.running(st, alive or S.proc_alive)
        pend = S.pending(st, now, window, alive or S.proc_alive)
        n = len(run) + len(pend)
        mate = rec.get("teammate")
        if isinstance(mate, dict) and mate.get("busy"):
            n += 1
            parts.append(f"teammate {mate.get('name')} (session {sid[:8]})")
        if len(run) + len(pend):
            parts.append(f"session {sid[:8]}{' (yours)' if sid == own else ''}: {len(run)} running"
                         + (f", {len(pend)} dispatched" if pend else ""))
        total += n
    if own and own not in seen and own_state is not None:   # the caller, not indexed yet
        n = len(S.running(own_state, alive or S.proc_alive)) + len(S.pending(own_state, now, window,
                                                                              alive or S.proc_alive))
        if n:
            parts.append(f"session {own[:8]} (yours): {n} running or dispatched")
        total += n
    return total, parts


def teammates_of(repo: str, lead: str, alive=None) -> list[dict]:
    """Busy live teammates whose lead is session ``lead`` (they count against its own cap too)."""
    return [rec["teammate"] for rec in live_sessions(repo, alive)
            if isinstance(rec.get("teammate"), dict) and rec["teammate"].get("busy")
            and rec["teammate"].get("parent") == lead]
