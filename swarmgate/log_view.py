"""`swarmgate log` and `swarmgate report`: the decision log, read back.

`swarmgate log [--session S] [--agent A] [--code C] [--decision D] [--event E]
[--client C] [--last N] [--json] [--repo PATH]` prints the decisions as a table
(or JSON lines); `swarmgate report [--client C] [--repo PATH] [--json]` counts
decisions per guard code, per agent type and per client (Claude Code, Codex
CLI, Gemini CLI), gives the latency median and p95 per event, and the commands
refused most often.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from swarmgate import decision_log
from swarmgate.clients import CLIENTS
from swarmgate.config import ConfigError, find_repo, load_config
from swarmgate.flow_html import render
from swarmgate.flow_sources import gather
from swarmgate.front_door import entry
from swarmgate.log_summary import summarize
from swarmgate.statefile import StateError, write_text_atomic
from swarmgate.tool_parser import ToolParser

DECISIONS = ("allow", "deny", "ask", "context", "block", "warn")


def _repo(arg: str | None) -> str:
    return os.path.abspath(arg) if arg else find_repo()


def _common(p: ToolParser) -> None:
    p.add_argument("--repo", default=None, help="the repository whose log to read (default: this one)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _agent(r: dict) -> str:
    if r.get("agent_type") or r.get("agent_id"):
        return f"{r.get('agent_type') or '?'}" + (f" ({str(r['agent_id'])[:8]})" if r.get("agent_id") else "")
    return "main"


def _read(repo: str) -> list[dict] | None:
    """The log's records; None (after one line on stderr) when it cannot be read safely."""
    try:
        return decision_log.read(repo)
    except (OSError, StateError) as e:
        print(f"swarmgate: cannot read the decision log: {e}", file=sys.stderr)
        return None


def _no_log(repo: str) -> str:
    return (f"no decisions logged in {decision_log.log_path(repo)} yet "
            f"(wire the repository with `swarmgate install {repo}`)")


@entry("log")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(prog="swarmgate log", description="The decision log as a table, with filters.")
    p.add_argument("--session", help="session id (a prefix is enough)")
    p.add_argument("--agent", help="agent type or id; `main` for the main agent")
    p.add_argument("--code", help="guard code, e.g. G01")
    p.add_argument("--decision", choices=DECISIONS, help="decision")
    p.add_argument("--event", help="hook event, e.g. PreToolUse")
    p.add_argument("--client", choices=CLIENTS, help="the coding-agent client that asked")
    p.add_argument("--last", type=int, default=50, metavar="N",
                   help="only the last N matching records (0: all; default 50)")
    _common(p)
    args = p.parse_args(argv)
    if args.last < 0:
        p.error("--last must be >= 0")
    repo = _repo(args.repo)
    everything = _read(repo)
    if everything is None:
        return 1
    records = decision_log.select(everything, session=args.session, agent=args.agent,
                                  code=args.code, decision=args.decision, event=args.event, client=args.client)
    if args.last:
        records = records[-args.last:]
    if args.json:
        for r in records:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    if not records:
        print(_no_log(repo) if not everything else "no decision matches these filters")
        return 0

    cols = ("time", "client", "session", "agent", "event", "tool", "codes", "decision", "ms", "input")
    rows = []
    for r in records:
        dec = str(r.get("decision", ""))
        tool = str(r.get("tool") or "") + (f" ({r['client_tool']})" if r.get("client_tool") else "")
        rows.append((str(r.get("time", ""))[5:].replace("T", " ").rstrip("Z"), decision_log.client_of(r),
                     str(r.get("session", ""))[:8], _agent(r), str(r.get("event", "")), tool,
                     ",".join(r.get("codes") or []), dec, f"{float(r.get('latency_ms') or 0):.0f}",
                     _one_line(r.get("input"))))
    widths = [max([len(col)] + [len(row[i]) for row in rows]) for i, col in enumerate(cols)]
    width = terminal_width()
    room = width - sum(widths[:-1]) - (3 * len(cols) + 1)  # what is left for the input
    con = Console(width=width, highlight=False)
    if room < MIN_INPUT:  # the ten columns do not fit: two lines a record
        con.print(f"decisions in {decision_log.log_path(repo)}", overflow="fold")
        for line in narrow_lines(records, width):
            con.print(line, no_wrap=True, overflow="crop")
        return 0
    t = Table(title=f"decisions in {decision_log.log_path(repo)}", show_lines=False)
    for i, col in enumerate(cols):
        last = col == "input"  # the input takes what is left, cut with …
        t.add_column(col, no_wrap=True, overflow="ellipsis", min_width=None if last else widths[i],
                     max_width=min(room, widths[i]) if last else widths[i])
    for row in rows:
        dec = row[7]
        t.add_row(*row[:7], f"[{STYLE[dec]}]{dec}[/]" if dec in STYLE else dec, *row[8:])
    con.print(t)
    return 0


MIN_INPUT = 40  # the table only where its input column gets this many characters; else two lines a record
STYLE = {"deny": "bold red", "block": "bold red", "ask": "yellow", "context": "cyan", "warn": "yellow"}


def terminal_width() -> int:
    """The width to draw for: COLUMNS, else the terminal's, else 80 (a pipe, a file)."""
    return max(shutil.get_terminal_size((80, 24)).columns, 40)


def _one_line(text: object, limit: int = 400) -> str:
    return " ".join(str(text or "").split())[:limit]


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, with … where it was cut."""
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


def narrow_lines(records: Sequence[dict], width: int) -> list:
    """The log for a narrow terminal (pure): per record one line of time, agent, event, tool,
    decision, codes and latency, and under it the input, indented, cut to the width. The
    session and client are shown only when the records hold more than one of them. Every line
    fits in ``width`` columns (rich Text, so the decision keeps its colour)."""
    sessions = {str(r.get("session", "")) for r in records}
    clients = {decision_log.client_of(r) for r in records}
    days = {str(r.get("time", ""))[:10] for r in records}
    heads, tails = [], []
    for r in records:
        dec = str(r.get("decision", ""))
        stamp = str(r.get("time", "")).replace("T", " ").rstrip("Z")
        stamp = stamp[5:19] if len(days) > 1 else stamp[11:19]
        head = [stamp]
        if len(clients) > 1:
            head.append(decision_log.client_of(r))
        if len(sessions) > 1:
            head.append(str(r.get("session", ""))[:8])
        head.append(_fit(_agent(r), 24))
        tool = str(r.get("tool") or "") + (f" ({r['client_tool']})" if r.get("client_tool") else "")
        head.append(" ".join(x for x in (str(r.get("event", "")), tool) if x))
        codes = ",".join(r.get("codes") or [])
        heads.append("  ".join(head))
        tails.append((dec, f"{' ' + codes if codes else ''} {float(r.get('latency_ms') or 0):.0f}ms"))
    # the decisions start in one column: after the longest head, or where the longest tail still fits
    at = min(max(len(h) for h in heads) + 2, width - max(len(d) + len(t) for d, t in tails)) if heads else 0
    out = []
    for r, head, (dec, tail) in zip(records, heads, tails):
        left = _fit(head, max(at - 2, 10))
        line = Text(left + " " * max(at - len(left), 2))
        line.append(dec, style=STYLE.get(dec, ""))
        line.append(tail)
        line.truncate(width)
        out.append(line)
        text = _one_line(r.get("input"))
        if text:
            out.append(Text("    " + _fit(text, width - 4), style="dim"))
    return out


# --- report ---

def advisory_codes() -> frozenset:
    """Codes of the registered guards that never refuse (empty when the registry cannot load)."""
    try:
        from swarmgate.hooks import registry  # noqa: PLC0415 - a broken guard module is caught below
        return frozenset(g.code for g in registry.guards() if g.advisory)
    except Exception:  # noqa: BLE001 - a report must not fail on a broken guard module
        return frozenset()


@entry("report")
def report_main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(prog="swarmgate report",
                                description="Counts per guard code and decision, hook latency per event, "
                                            "the commands refused most often; --html / --json: the session "
                                            "flow (agents on a time axis, the round's graph, runner jobs, "
                                            "alerts, tokens, hook latency).")
    p.add_argument("--session", help="only this session (a prefix is enough); the flow's default: the latest")
    p.add_argument("--client", choices=CLIENTS, help="only the decisions of this client")
    p.add_argument("--round", dest="round_name", metavar="ROUND",
                   help="the flow of this round's record (its session, its graph)")
    p.add_argument("--top", type=int, default=10, help="how many refused commands to list (default 10)")
    p.add_argument("--html", metavar="FILE", help="write the session flow as one self-contained HTML page")
    p.add_argument("--transcripts", metavar="DIR",
                   help="Claude Code's projects directory (default ~/.claude/projects)")
    _common(p)
    args = p.parse_args(argv)
    repo = _repo(args.repo)
    everything = _read(repo)
    if everything is None:
        return 1
    records = decision_log.select(everything, session=args.session, client=args.client)
    advisory = advisory_codes()
    s = summarize(records, args.top, advisory)
    if args.html or args.json:
        model = _flow(repo, args, advisory)
        if model is None:
            return 251
        if args.html:
            try:
                write_text_atomic(args.html, render(model))
            except (OSError, StateError) as e:
                print(f"swarmgate report: cannot write {args.html}: {e}", file=sys.stderr)
                return 251
            lanes = sum(len(x["lanes"]) for x in model["sessions"])
            print(f"wrote {args.html}: {len(model['sessions'])} session(s), {lanes} lane(s), "
                  f"{len(model['runs'])} runner job(s), {len(model['alerts'])} alert(s)"
                  + (f"; could not read: {'; '.join(model['problems'])}" if model["problems"] else ""),
                  file=sys.stderr if args.json else sys.stdout)
        if args.json:
            print(json.dumps({**s, "flow": model}, indent=1, ensure_ascii=False, default=str))
        return 0
    if not records:
        print(_no_log(repo))
        return 0

    con = Console()
    con.print(f"{s['total']} decisions in {decision_log.log_path(repo)}: "
              + ", ".join(f"{k} {v}" for k, v in s["decisions"].items()))
    decs = sorted({d for row in s["codes"].values() for d in row})
    t = Table(title="decisions per guard code (each code's own decision)",
              caption="`-`: no guard had anything to say; the combined decisions are counted above")
    t.add_column("code")
    for d in decs:
        t.add_column(d, justify="right")
    for code, row in s["codes"].items():
        t.add_row(code, *[str(row.get(d, "")) for d in decs])
    con.print(t)
    t = Table(title="decisions per agent type")
    t.add_column("agent")
    for d in decs:
        t.add_column(d, justify="right")
    for agent, row in s["agents"].items():
        t.add_row(agent, *[str(row.get(d, "")) for d in decs])
    con.print(t)
    t = Table(title="decisions per client (combined decisions)")
    t.add_column("client")
    client_decs = sorted({d for row in s["clients"].values() for d in row})
    for d in client_decs:
        t.add_column(d, justify="right")
    for client, row in s["clients"].items():
        t.add_row(client, *[str(row.get(d, "")) for d in client_decs])
    con.print(t)
    t = Table(title="hook latency per event")
    for col in ("event", "n", "median ms", "p95 ms"):
        t.add_column(col, justify="left" if col == "event" else "right")
    for ev, v in s["latency"].items():
        t.add_row(ev, str(v["n"]), f"{v['median_ms']:.1f}", f"{v['p95_ms']:.1f}")
    con.print(t)
    if s["top_refused"]:
        t = Table(title="refused most often")
        t.add_column("count", justify="right")
        t.add_column("input", overflow="fold")
        for row in s["top_refused"]:
            t.add_row(str(row["count"]), row["input"])
        con.print(t)
    return 0


def _flow(repo: str, args, advisory) -> dict | None:
    """The session-flow model (flow_sources + flow_model), or None after one line on stderr."""
    from swarmgate.flow_model import build  # noqa: PLC0415 - only the flow report needs the model

    try:
        config = load_config(repo)
    except ConfigError as e:
        print(f"swarmgate report: {e}", file=sys.stderr)
        return None
    src = gather(repo, config, session=args.session, round_name=args.round_name, projects=args.transcripts,
                 console=Console(stderr=True))
    return build(src, advisory)


if __name__ == "__main__":
    sys.exit(main())
