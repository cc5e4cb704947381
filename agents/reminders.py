"""Reminders: what `remind` records and how a reminder reaches the agent that set it.

One JSON file per reminder, ``<state>/reminders/<session>/<id>.json``::

    {"id", "session", "agent" (a subagent's id, or null: the main agent), "created", "due",
     "message", "state": "pending" | "delivered" | "cancelled", "delivered": {"time", "how"}?}

Delivery (docs/client-surface.md):
- to an **idle main agent** by the wake waiter (agents/wake.py): an `asyncRewake` hook on Stop
  that, in an interactive session or one with streaming input, sleeps until the next reminder is
  due and exits 2 with it, which starts a new turn carrying the message;
- to an agent **at work**, at its next tool call (C05, PostToolUse context);
- a subagent's reminder goes to that subagent while it runs, else to the main agent.

Whether the session can be woken at all is read from the Claude Code process itself
(``wake_mode``): `claude -p` without `--input-format stream-json` cannot be (the hook would
hold the call, and nothing is woken), so there `remind` says so and nothing waits.

Pure functions and small file reads; light at import (C05 runs on the hook's hot path).
"""
from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

MAX_DELAY_S = 7 * 24 * 3600
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class ReminderError(Exception):
    """A reminder cannot be set, listed or cancelled; the message says why and what to do."""


def parse_when(text: str, now: float | None = None) -> float:
    """The due time of ``text``: a delay (`90`, `30s`, `10m`, `1h30m`, `2d`) or a clock time today or
    tomorrow (`14:30`, `14:30:15`). ReminderError names what is wrong."""
    t = time.time() if now is None else now
    w = (text or "").strip().lower()
    if not w:
        raise ReminderError("no time given: `remind 10m 'check the build'` (units s, m, h, d) or `remind 14:30 ...`")
    if ":" in w:
        parts = w.split(":")
        if len(parts) in (2, 3) and all(p.isdigit() for p in parts):
            h, m, sec = int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else 0
            if h < 24 and m < 60 and sec < 60:
                lt = time.localtime(t)
                due = time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, h, m, sec, 0, 0, -1))
                return due if due > t else due + 86400
        raise ReminderError(f"{text!r} is not a clock time (HH:MM or HH:MM:SS)")
    if w.isdigit():
        delay = int(w)
    else:
        delay, num = 0, ""
        for c in w:
            if c.isdigit():
                num += c
            elif c in _UNITS and num:
                delay += int(num) * _UNITS[c]
                num = ""
            else:
                raise ReminderError(f"{text!r} is not a delay: digits with units s, m, h, d (`90s`, `10m`, `1h30m`)")
        if num:
            raise ReminderError(f"{text!r} ends in a number without a unit (s, m, h or d)")
    if delay <= 0 or delay > MAX_DELAY_S:
        raise ReminderError(f"{text!r}: a reminder is due between 1 second and 7 days from now")
    return t + delay


# --- the store -----------------------------------------------------------------------------------

def session_dir(session: str) -> Path:
    from swarmgate import state_paths
    return state_paths.state_dir() / "reminders" / state_paths.safe_name(session)


def _path(session: str, rid: str) -> Path:
    from swarmgate.state_paths import safe_name
    return session_dir(session) / (safe_name(rid) + ".json")


def add(session: str, message: str, due: float, agent: str | None = None, now: float | None = None) -> dict:
    from swarmgate.statefile import ensure_dir, write_json_atomic

    t = time.time() if now is None else now
    rid = f"r{time.time_ns() % (36 ** 6):x}"[:8]
    rec = {"id": rid, "session": session, "agent": agent, "created": round(t, 3), "due": round(due, 3),
           "message": message, "state": "pending"}
    ensure_dir(session_dir(session))
    write_json_atomic(_path(session, rid), rec, durable=False)
    return rec


def load(session: str) -> list[dict]:
    """Every reminder of ``session`` (any state), oldest due first; unreadable files are skipped."""
    from swarmgate.statefile import read_json

    d = session_dir(session)
    out = []
    try:
        names = os.listdir(d)
    except OSError:
        return out
    for n in names:
        if n.endswith(".json"):
            rec = read_json(d / n, None)
            if isinstance(rec, dict) and rec.get("id") and isinstance(rec.get("due"), (int, float)):
                out.append(rec)
    out.sort(key=lambda r: float(r["due"]))
    return out


def sessions() -> list[str]:
    from swarmgate import state_paths
    try:
        return sorted(os.listdir(state_paths.state_dir() / "reminders"))
    except OSError:
        return []


def update(session: str, rid: str, **fields) -> dict | None:
    """Change one reminder under the session's reminder lock; None when there is none of that id."""
    from swarmgate.statefile import ensure_dir, locked, read_json, write_json_atomic

    ensure_dir(session_dir(session))
    with locked(session_dir(session) / ".lock", timeout=10.0):
        rec = read_json(_path(session, rid), None)
        if not isinstance(rec, dict):
            return None
        rec.update(fields)
        write_json_atomic(_path(session, rid), rec, durable=False)
        return rec


def take(session: str, rid: str, how: str, now: float | None = None) -> dict | None:
    """Mark a pending reminder delivered (once: two deliverers racing, one gets it)."""
    from swarmgate.statefile import ensure_dir, locked, read_json, write_json_atomic

    ensure_dir(session_dir(session))
    with locked(session_dir(session) / ".lock", timeout=10.0):
        rec = read_json(_path(session, rid), None)
        if not isinstance(rec, dict) or rec.get("state") != "pending":
            return None
        rec["state"] = "delivered"
        rec["delivered"] = {"time": round(time.time() if now is None else now, 3), "how": how}
        write_json_atomic(_path(session, rid), rec, durable=False)
        return rec


def claim_for(session: str, agent: str, since: float, command: str = "") -> list[str]:
    """Give subagent ``agent`` the unowned pending reminders created since ``since`` whose message's
    words all appear in ``command`` (the PostToolUse of the subagent's `remind` call: `remind` itself
    cannot tell which agent runs it)."""
    out = []
    for rec in load(session):
        words = str(rec.get("message") or "").split()
        if command and not all(w.strip("'\"") in command for w in words):
            continue
        if rec.get("state") == "pending" and not rec.get("agent") and float(rec.get("created") or 0) >= since:
            if update(session, rec["id"], agent=agent):
                out.append(rec["id"])
    return out


def due_for(session: str, agent: str | None, now: float, running: set | None = None) -> list[dict]:
    """Pending reminders of ``session`` due by ``now`` for ``agent`` (None: the main agent, who also
    gets those of subagents not in ``running``: they handed back before it was due)."""
    out = []
    for rec in load(session):
        if rec.get("state") != "pending" or float(rec["due"]) > now:
            continue
        owner = rec.get("agent")
        if owner == agent or (agent is None and owner and running is not None and owner not in running):
            out.append(rec)
    return out


def next_due(session: str, agent: str | None = None, running: set | None = None) -> float | None:
    """When the next pending reminder of ``agent`` (see due_for) is due; None when none is pending."""
    dues = [float(r["due"]) for r in load(session) if r.get("state") == "pending"
            and (r.get("agent") == agent or (agent is None and r.get("agent") and running is not None
                                             and r["agent"] not in running))]
    return min(dues) if dues else None


def text_of(rec: dict) -> str:
    when = time.strftime("%H:%M:%S", time.localtime(float(rec.get("created") or 0)))
    by = f" by subagent {rec['agent']}" if rec.get("agent") else ""
    return f"reminder {rec['id']} (set at {when}{by}): {rec.get('message')}"


# --- can this session be woken? -------------------------------------------------------------

def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [w.decode("utf-8", "replace") for w in f.read(256 * 1024).split(b"\0") if w]
    except OSError:
        return []


def client_pid(env=None) -> int | None:
    """The Claude Code process of this session: $CLAUDE_PID (Claude Code 2.1.332 sets it for hooks and
    for the commands of the Bash tool), None elsewhere."""
    env = os.environ if env is None else env
    v = env.get("CLAUDE_PID") or ""
    return int(v) if v.isdigit() and int(v) > 1 else None


def wake_mode(pid: int | None = None) -> str:
    """How the session runs: "interactive", "stream" (`-p --input-format stream-json`: woken while its
    input stays open), "print" (`-p` alone: nothing can wake it) or "unknown" (no Claude Code process)."""
    pid = client_pid() if pid is None else pid
    argv = _cmdline(pid) if pid else []
    if not argv:
        return "unknown"
    printing = any(a in ("-p", "--print") or a.startswith("--print=") for a in argv[1:])
    if not printing:
        return "interactive"
    for i, a in enumerate(argv):
        if (a == "--input-format" and i + 1 < len(argv) and argv[i + 1] == "stream-json") or \
                a == "--input-format=stream-json":
            return "stream"
    return "print"


def wakeable(mode: str) -> bool:
    return mode in ("interactive", "stream")
