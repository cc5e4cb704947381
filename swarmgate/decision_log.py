"""The decision log: one JSON line per hook decision, in the repository.

.swarmgate/log/decisions.jsonl — time (UTC, milliseconds), client, session,
agent id and type, event, tool, guard codes, the combined decision, latency, and
``findings``: each code's own decision ({"B01": "deny", "R01": "context"}), so
an advisory report is never counted as a refusal because another guard
refused the same call. ``client`` is the coding-agent client that asked
(claude, codex, gemini; a record without it is Claude Code's, from before the
field existed); ``client_tool`` that client's own tool name where it differs
from swarmgate's (``apply_patch`` judged as an Edit); ``limits`` what the guards
could not see or did not run under that client (swarmgate.clients). The raw
material of `swarmgate log`,
`swarmgate report` and swarm-watch. Appends are single O_APPEND writes; a torn
line is skipped by readers.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import time

FIELDS = ("time", "client", "session", "agent_id", "agent_type", "event", "tool", "client_tool", "codes",
          "decision", "latency_ms", "input", "reason", "findings", "limits")


def log_path(repo: str) -> str:
    return os.path.join(str(repo), ".swarmgate", "log", "decisions.jsonl")


def record(repo: str, *, session: str, agent_id: str | None, agent_type: str | None, event: str,
           tool: str | None, codes: list, decision: str, latency_ms: float, input_text: str = "",
           reason: str = "", findings: dict | None = None, client: str = "claude",
           client_tool: str | None = None, limits: list | None = None, deferred: str = "") -> str:
    """Append one decision. Never raises: logging must not change a decision. Returns '' when the
    decision is logged, else why not (the path and the errno), for the answer to say so."""
    from swarmgate.statefile import append_jsonl

    now = time.time()
    rec = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z",
        "client": client,
        "session": session,
        "agent_id": agent_id,
        "agent_type": agent_type,
        "event": event,
        "tool": tool,
        "codes": codes,
        "decision": decision,
        "latency_ms": round(latency_ms, 2),
    }
    if client_tool:
        rec["client_tool"] = client_tool
    if input_text:
        rec["input"] = input_text[:300]
    if reason:
        rec["reason"] = reason[:500]
    if findings:
        rec["findings"] = findings
    if limits:
        rec["limits"] = [str(x)[:300] for x in limits]
    if deferred:   # what reading left to the exec-time layer (B01, [bash] unverifiable = "exec")
        rec["deferred"] = deferred[:500]
    try:
        append_jsonl(log_path(repo), rec)
    except Exception as e:  # noqa: BLE001 - a full or read-only disk, a planted symlink: skip the log
        return " ".join(str(e).split()) or type(e).__name__
    return ""


def read(repo: str) -> list[dict]:
    from swarmgate.statefile import read_jsonl
    return list(read_jsonl(log_path(repo)))


def client_of(record: dict) -> str:
    """The client a record came from (records written before the field existed are Claude Code's)."""
    return str(record.get("client") or "claude")


def select(records: list[dict], *, session: str | None = None, agent: str | None = None,
           code: str | None = None, decision: str | None = None, event: str | None = None,
           client: str | None = None) -> list[dict]:
    """Filter records; ``agent`` matches the agent id or type ("main" for the main agent)."""
    out = []
    for r in records:
        if client and client_of(r) != client:
            continue
        if session and not str(r.get("session", "")).startswith(session):
            continue
        if agent:
            actor = r.get("agent_type") or r.get("agent_id") or "main"
            if agent not in (actor, r.get("agent_id"), r.get("agent_type")):
                continue
        if code and code not in (r.get("codes") or []):
            continue
        if decision and r.get("decision") != decision:
            continue
        if event and r.get("event") != event:
            continue
        out.append(r)
    return out
