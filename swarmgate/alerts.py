"""Alert records: one format that the runner, the host tools and swarm-watch write
and SessionStart surfaces.

Each alert is one JSON line in <state>/alerts/alerts.jsonl:
{"id", "time" (epoch s), "kind", "source", "message", "session"?, ...fields}. The session is the
writer's agent session when it does not name one (CLAUDE_CODE_SESSION_ID / SWARMGATE_SESSION_ID in
its environment): a runner's or core-usage's alert belongs to the session that ran it.
Readers track what they have seen per reader (e.g. per session) with a cursor
file holding the last id read, so "unread alerts" is cheap and survives crashes.
"""
from __future__ import annotations

import os
import time

from swarmgate import state_paths
from swarmgate.statefile import append_jsonl, read_jsonl, read_text, write_text_atomic


def _log_path() -> str:
    return os.path.join(str(state_paths.alerts_dir()), "alerts.jsonl")


def _cursor_path(reader: str) -> str:
    return os.path.join(str(state_paths.alerts_dir()), "read", state_paths.safe_name(reader))


def write_alert(kind: str, message: str, *, source: str = "", **fields) -> dict:
    """Append an alert; returns the record. Never raises for a state-dir problem."""
    rec = {"id": f"{time.time_ns():x}-{os.getpid()}", "time": round(time.time(), 3),
           "kind": kind, "source": source, "message": message}
    if not fields.get("session"):   # whose it is: the agent session that wrote it, when there is one
        from swarmgate.hosts.ledger import session_of
        fields["session"] = session_of()
    rec.update({k: v for k, v in fields.items() if v is not None})
    try:
        append_jsonl(_log_path(), rec)
    except Exception:  # noqa: BLE001 - an alert must never break the tool writing it
        pass
    return rec


def all_alerts(since: float = 0.0) -> list[dict]:
    return [a for a in read_jsonl(_log_path()) if float(a.get("time", 0) or 0) >= since]


def unread(reader: str, mark: bool = True, since: float = 0.0) -> list[dict]:
    """Alerts written after the reader's cursor; ``mark`` moves the cursor to the newest."""
    try:
        cursor = float((read_text(_cursor_path(reader)) or "0").strip() or 0)
    except (ValueError, OSError):
        cursor = 0.0
    fresh = [a for a in all_alerts(max(since, 0.0)) if float(a.get("time", 0) or 0) > cursor]
    if mark and fresh:
        mark_read(reader, max(float(a["time"]) for a in fresh))
    return fresh


def mark_read(reader: str, up_to: float) -> None:
    """Move the reader's cursor to ``up_to`` (the time of the newest alert it has seen)."""
    try:
        write_text_atomic(_cursor_path(reader), repr(up_to))
    except Exception:  # noqa: BLE001
        pass
