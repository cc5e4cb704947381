"""The session flow (seed 000): who did what, when, at what cost - built from flow_sources' data.

Pure: ``build(sources, advisory)`` returns a JSON-able dict (what `swarmgate
report --json` prints and flow_html renders):

- ``sessions``: per session, one lane per agent (the main agent, then each
  subagent in the order it was dispatched) with its events on one time axis:
  ``dispatch`` (in the main lane, and where the subagent's lane begins),
  ``start``, ``tool`` (each tool call, with its duration when its result came
  back; ``failed`` with its ``exit`` code when it ran and failed, as a
  command not found does with 127), ``refusal`` (a call a hook refused,
  with the guard codes), ``stop`` /
  ``stop-refused`` (the main agent's Stop), ``handback`` / ``handback-refused``
  (SubagentStop); and its token usage;
- ``tokens``: per agent type and in all, summed once per model turn
  (transcript entries that repeat a message id are counted once);
- ``record``: the round's task graph as planned (deps, batches) and as done
  (verdicts, each verify's latest result);
- ``runs``: the runner's jobs of these sessions: booked vs peak, exit code and
  its class (250 own cap and 254 pushed out marked);
- ``alerts``, ``latency`` (per hook event: n, median, p95, a histogram), and
  ``summary`` (log_summary.summarize: counts per guard code, each code by its own
  decision).
"""
from __future__ import annotations

import re
import statistics

from swarmgate.agents.handover import _blocks as blocks
from swarmgate.agents.handover import _text_of
from swarmgate.agents.records import unverified_closed
from swarmgate.flow_sources import parse_time
from swarmgate.log_summary import percentile, summarize

CODE_RE = re.compile(r"\[([A-Z][0-9]{2})\]")
DISPATCH_TOOLS = ("Agent", "Task")
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
LATENCY_BUCKETS_MS = (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
RUN_CLASSES = {0: "ok", 250: "oom (own cap)", 254: "pushed out", 253: "timeout", 252: "no turn",
               251: "not run (usage/cap set-up)", 245: "GPU out of memory"}


def codes_in(text: str) -> list[str]:
    return list(dict.fromkeys(CODE_RE.findall(text or "")))


def _time(value) -> float | None:
    return parse_time(value)


def _blocks(entry: dict) -> list:
    return blocks(entry)


def _text(content) -> str:
    return _text_of(content)


def summary_of(tool: str, ti: dict) -> str:
    if not isinstance(ti, dict):
        return ""
    if tool in ("Bash", "Monitor"):
        return str(ti.get("command") or "")
    if tool in DISPATCH_TOOLS:
        return f"{ti.get('subagent_type') or 'general-purpose'}: {ti.get('description') or ''}"
    for key in ("file_path", "notebook_path", "path", "pattern", "url", "query", "to", "prompt"):
        if isinstance(ti.get(key), str):
            return ti[key]
    return ""


def _short(text: str, n: int = 160) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[:n - 1] + "…"


EXIT_RE = re.compile(r"\bexit code[: ]+(-?\d+)", re.IGNORECASE)


def exit_of(text: str) -> int | None:
    """The exit code in a failed call's result ("Exit code 127\n..."); None when it names none."""
    m = EXIT_RE.search((text or "")[:200])
    return int(m.group(1)) if m else None


def _refused(text: str) -> bool:
    first = (text or "").strip().splitlines()[0].lower() if (text or "").strip() else ""
    return "hook error" in first or first.startswith("pretooluse:") or "swarmgate refused" in first \
        or "blocking because onfailure" in first


def read_lane(entries: list[dict]) -> dict:
    """Events, token usage and links of one transcript (pure)."""
    events: list[dict] = []
    calls: dict[str, dict] = {}
    usage: dict[str, dict] = {}
    turns = 0
    agent_links: dict[str, str] = {}  # dispatch tool_use id -> agent id (from the hand-back's toolUseResult)
    first = last = None
    for e in entries:
        t = _time(e.get("timestamp"))
        if t is not None:
            first = t if first is None else min(first, t)
            last = t if last is None else max(last, t)
        kind = e.get("type")
        msg = e.get("message") if isinstance(e.get("message"), dict) else {}
        if kind == "assistant":
            u = msg.get("usage")
            mid = str(msg.get("id") or e.get("requestId") or e.get("uuid") or len(usage))
            if isinstance(u, dict) and mid not in usage:
                usage[mid] = {k: int(u.get(k) or 0) for k in TOKEN_FIELDS}
                turns += 1
            for b in _blocks(e):
                if b.get("type") != "tool_use":
                    continue
                tool = str(b.get("name") or "?")
                ti = b.get("input") if isinstance(b.get("input"), dict) else {}
                ev = {"t": t, "kind": "dispatch" if tool in DISPATCH_TOOLS else "tool", "tool": tool,
                      "text": _short(summary_of(tool, ti)), "id": str(b.get("id") or ""), "end": None}
                if tool in DISPATCH_TOOLS:
                    ev["prompt"] = ti.get("prompt") if isinstance(ti.get("prompt"), str) else ""
                    ev["agent_type"] = ti.get("subagent_type") or "general-purpose"
                events.append(ev)
                calls[ev["id"]] = ev
        elif kind == "user":
            for b in _blocks(e):
                if b.get("type") == "tool_result":
                    call = calls.get(str(b.get("tool_use_id") or ""))
                    text = _text(b.get("content"))
                    if call is not None:
                        call["end"] = t
                        if b.get("is_error") and _refused(text):
                            call["refused"] = True
                            events.append({"t": t, "kind": "refusal", "tool": call["tool"], "codes": codes_in(text),
                                           "text": _short(text, 400), "of": call["id"]})
                        elif b.get("is_error"):  # ran and failed (127: not found), or was interrupted
                            call["failed"] = True
                            call["exit"] = exit_of(text)
                            call["error"] = _short(text, 300)
                    result = e.get("toolUseResult")
                    if isinstance(result, dict) and result.get("agentId") and call is not None:
                        agent_links[call["id"]] = str(result["agentId"])
                elif b.get("type") == "text" and "Stop hook feedback" in str(b.get("text")):
                    events.append({"t": t, "kind": "stop-refused", "codes": codes_in(b["text"]),
                                   "text": _short(b["text"], 400)})
    total = {k: sum(u[k] for u in usage.values()) for k in TOKEN_FIELDS}
    total["total"] = sum(total.values())
    total["turns"] = turns
    return {"events": events, "tokens": total, "links": agent_links, "first": first, "last": last}


def _add_tokens(into: dict, tokens: dict) -> None:
    for k, v in tokens.items():
        into[k] = into.get(k, 0) + v


def build_session(s: dict) -> dict:
    """Lanes of one session from its transcripts and its decisions (pure)."""
    decisions = s["decisions"]
    main = read_lane(s["main"]["entries"]) if s.get("main") else {"events": [], "tokens": {}, "links": {},
                                                                   "first": None, "last": None}
    lanes = [{"id": "main", "type": "main", "name": "main agent", "transcript": (s.get("main") or {}).get("path"),
              "events": main["events"], "tokens": main["tokens"]}]
    dispatch_by_id = {ev["id"]: ev for ev in main["events"] if ev["kind"] == "dispatch"}
    by_agent: dict[str, dict] = {}
    for sub in s.get("subagents", []):
        lane_data = read_lane(sub["entries"])
        meta = sub.get("meta") or {}
        tool_use = str(meta.get("toolUseId") or "")
        if not tool_use:
            tool_use = next((k for k, v in main["links"].items() if v == sub["id"]), "")
        d = dispatch_by_id.get(tool_use)
        if d is not None:
            d["agent"] = sub["id"]
        lane = {"id": sub["id"], "type": str(meta.get("agentType") or (d or {}).get("agent_type") or "subagent"),
                "name": str(meta.get("description") or ""), "transcript": sub["path"],
                "events": lane_data["events"], "tokens": lane_data["tokens"], "dispatch_id": tool_use or None}
        if d is not None:
            lane["events"].insert(0, {"t": d["t"], "kind": "dispatch", "text": d["text"], "from": "main"})
        by_agent[sub["id"]] = lane
    # the decision log: starts, hand-backs, stops, and lanes whose transcript could not be read
    for r in decisions:
        t = _time(r.get("time"))
        ev_name = r.get("event")
        aid = r.get("agent_id")
        dec = str(r.get("decision") or "")
        codes = [c for c, d in (r.get("findings") or {}).items() if d in ("deny", "block", "ask")] \
            or (list(r.get("codes") or []) if dec in ("deny", "block", "ask") else [])
        if ev_name in ("SubagentStart", "SubagentStop") and aid:
            lane = by_agent.get(aid)
            if lane is None:
                lane = by_agent[aid] = {"id": aid, "type": r.get("agent_type") or "subagent", "name": "",
                                        "transcript": None, "events": [], "tokens": {}, "dispatch_id": None}
            if ev_name == "SubagentStart":
                lane["events"].append({"t": t, "kind": "start", "text": f"{lane['type']} started"})
            else:
                kind = "handback-refused" if dec == "block" else "handback"
                lane["events"].append({"t": t, "kind": kind, "codes": codes,
                                       "text": _short(r.get("reason") or ("handed back" if kind == "handback"
                                                                          else "hand-back refused"), 400)})
        elif ev_name == "Stop" and not aid:
            kind = "stop-refused" if dec == "block" else "stop"
            if kind == "stop" or not any(e["kind"] == "stop-refused" and e.get("codes") == codes
                                         for e in main["events"]):
                lanes[0]["events"].append({"t": t, "kind": kind, "codes": codes,
                                           "text": _short(r.get("reason") or "stopped", 400)})
        elif ev_name == "PreToolUse" and dec in ("deny", "ask"):
            lane = lanes[0] if not aid else by_agent.get(aid)
            if lane is not None and not lane.get("transcript"):
                lane["events"].append({"t": t, "kind": "refusal", "tool": r.get("tool"), "codes": codes,
                                       "text": _short(r.get("reason") or "", 400)})
        elif ev_name == "PostToolUseFailure":  # a call that ran and failed; the log keeps no exit code
            lane = lanes[0] if not aid else by_agent.get(aid)
            if lane is not None and not lane.get("transcript"):
                lane["events"].append({"t": t, "kind": "tool", "tool": r.get("tool"), "id": "", "end": t,
                                       "text": _short(r.get("input") or ""), "failed": True, "exit": None})
    subs = sorted(by_agent.values(), key=lambda ln: min([e["t"] for e in ln["events"] if e.get("t")] or [0]))
    lanes += subs
    for lane in lanes:
        lane["events"].sort(key=lambda e: e.get("t") or 0)
        ts = [e["t"] for e in lane["events"] if e.get("t") is not None] + \
             [e["end"] for e in lane["events"] if e.get("end") is not None]
        lane["first"], lane["last"] = (min(ts), max(ts)) if ts else (None, None)
        lane["refusals"] = sum(1 for e in lane["events"] if e["kind"] in ("refusal", "stop-refused",
                                                                            "handback-refused"))
        lane["tool_calls"] = sum(1 for e in lane["events"] if e["kind"] in ("tool", "dispatch") and e.get("id"))
        lane["failed"] = sum(1 for e in lane["events"] if e.get("failed"))
    ts = [x for ln in lanes for x in (ln["first"], ln["last"]) if x is not None]
    ts += [t for r in decisions if (t := _time(r.get("time"))) is not None]
    return {"id": s["id"], "start": min(ts) if ts else None, "end": max(ts) if ts else None, "lanes": lanes}


def tokens_by_type(sessions: list[dict]) -> dict:
    per_type: dict[str, dict] = {}
    total: dict = {}
    for s in sessions:
        for lane in s["lanes"]:
            if not lane["tokens"]:
                continue
            _add_tokens(per_type.setdefault(lane["type"], {}), lane["tokens"])
            _add_tokens(total, lane["tokens"])
    return {"by_type": dict(sorted(per_type.items())), "total": total}


def run_class(code) -> str:
    try:
        c = int(code)
    except (TypeError, ValueError):
        return "unknown"
    return RUN_CLASSES.get(c, "failed" if c else "ok")


def runs_of(runs: list[dict], sessions: list[str], start: float | None, end: float | None) -> list[dict]:
    """This report's runner jobs: its sessions', and session-less ones that overlap its time."""
    out = []
    for r in runs:
        mine = r.get("session") in sessions
        during = not r.get("session") and start is not None and end is not None and \
            float(r.get("ended") or 0) >= start and float(r.get("started") or 0) <= end
        if mine or during:
            out.append(dict(r, **{"class": run_class(r.get("exit")), "marked": r.get("exit") in (250, 254)}))
    return sorted(out, key=lambda r: float(r.get("started") or 0))


def alerts_of(alerts: list[dict], sessions: list[str], start: float | None, end: float | None) -> list[dict]:
    out = []
    for a in alerts:
        t = float(a.get("time") or 0)
        if a.get("session") in sessions or (not a.get("session") and start is not None and end is not None
                                            and start - 60 <= t <= end + 60):
            out.append({k: a.get(k) for k in ("time", "kind", "source", "message", "session")})
    return out


def latency_of(decisions: list[dict]) -> dict:
    per: dict[str, list[float]] = {}
    for r in decisions:
        try:
            per.setdefault(str(r.get("event") or "?"), []).append(float(r.get("latency_ms")))
        except (TypeError, ValueError):
            continue
    out = {}
    for ev, xs in sorted(per.items()):
        hist = []
        lo = 0
        for hi in LATENCY_BUCKETS_MS + (None,):
            n = sum(1 for x in xs if x >= lo and (hi is None or x < hi))
            hist.append([lo, hi, n])
            lo = hi
        out[ev] = {"n": len(xs), "median_ms": round(statistics.median(xs), 2), "p95_ms": round(percentile(xs, 95), 2),
                   "max_ms": round(max(xs), 2), "histogram": hist}
    return out


def graph_of(record: dict | None, verify: dict, snapshot: dict, path: str | None) -> dict | None:
    if not record:
        return None

    unverified = {t["id"]: why for t, why in unverified_closed(record, snapshot or {}, verify or {})}
    tasks = []
    for t in record["tasks"]:
        spec = record.get("verify", {}).get(t["id"])
        v = None
        if spec:
            last = (verify or {}).get(t["id"])
            if last and last.get("command") == spec["command"]:
                v = {"command": spec["command"], "class": last.get("class"), "exit": last.get("exit"),
                     "attempts": last.get("attempts"), "duration_s": last.get("duration_s")}
            else:
                v = {"command": spec["command"], "class": "not run"}
        tasks.append({"id": t["id"], "description": t.get("description") or "", "deps": list(t["deps"]),
                      "batch": t.get("batch"), "verdict": t.get("verdict") or "open", "note": t.get("note") or "",
                      "verify": v, "unverified": unverified.get(t["id"])})
    return {"path": path, "round": record.get("round"), "goal": record.get("goal"), "exit": record.get("exit"),
            "session": record.get("session"), "tasks": tasks}


def build(src: dict, advisory=frozenset()) -> dict:
    sessions = [build_session(s) for s in src["sessions"]]
    ids = [s["id"] for s in sessions]
    starts = [s["start"] for s in sessions if s["start"] is not None]
    ends = [s["end"] for s in sessions if s["end"] is not None]
    start, end = (min(starts), max(ends)) if starts and ends else (None, None)
    decisions = [r for s in src["sessions"] for r in s["decisions"]]
    return {
        "repo": src["repo"], "generated": src["generated"], "round": src.get("round"), "session_ids": ids,
        "start": start, "end": end, "sessions": sessions, "tokens": tokens_by_type(sessions),
        "record": graph_of(src.get("record"), src.get("verify") or {}, src.get("snapshot") or {},
                           src.get("record_path")),
        "runs": runs_of(src.get("runs") or [], ids, start, end),
        "alerts": alerts_of(src.get("alerts") or [], ids, start, end),
        "latency": latency_of(decisions),
        "summary": summarize(decisions, 10, advisory),
        "problems": list(src.get("problems") or []),
    }
