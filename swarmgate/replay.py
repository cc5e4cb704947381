"""`swarmgate replay TRANSCRIPT... [--junit FILE] [--json]`: re-judge recorded sessions.

Every tool call of the given transcripts (a session's transcript brings its
subagents' transcripts along: ``<session>/subagents/agent-*.jsonl``) is judged
again with the current guards and config, through the engine's own path
(``hook_engine.judge_recorded``, the function H02 uses): derive and judge only,
nothing recorded, locked or started. A subagent's calls are judged as its
(``agentId``; the type from its ``.meta.json``), the main agent's as the main
agent's, each in the cwd it ran in.

Not judged: the guards whose verdict is about the live state of a session now,
not about the call (``LIVE_STATE``: D07 counts the subagents running now, D16
the scratch locks held now, M01 the agents that have handed back now); a
recorded call judged against today's state says nothing about it. Advisory
guards report and never refuse, so they are not judged either.

For CI and for tuning a config before switching a guard from "warn" to "deny":
``--junit FILE`` writes JUnit XML, one test suite per transcript, one test case
per tool call, one failure per call a guard refuses now (warn-mode findings
count: the point is to see what "deny" would do). Exit 0 when nothing is
refused now, 1 when something is, 251 on a usage error (a transcript that
cannot be read, a bad config).
"""
from __future__ import annotations

import glob
import json
import os
import sys
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from swarmgate import guard as G
from swarmgate.agents.handover import read_entries
from swarmgate.config import ConfigError, find_repo, load_config
from swarmgate.flow_model import _blocks, _refused, _text, summary_of
from swarmgate.front_door import entry
from swarmgate.hook_engine import judge_recorded
from swarmgate.hooks import registry
from swarmgate.statefile import StateError, write_text_atomic
from swarmgate.tool_parser import ToolParser

REFUSING = (G.DENY, G.ASK, G.WARN)
LIVE_STATE = ("D07", "D16", "M01")


def replay_guards() -> list:
    """The registered guards a recorded call is judged by (see the module doc)."""
    return [g for g in registry.guards() if not g.advisory and "PreToolUse" in g.events
            and g.code not in LIVE_STATE]


def expand(paths: list[str]) -> list[str]:
    """The transcripts named, each session's followed by its subagents' (each once, in order)."""
    out: list[str] = []
    for p in paths:
        p = os.path.abspath(p)
        if p not in out:
            out.append(p)
        if p.endswith(".jsonl") and os.path.basename(os.path.dirname(p)) != "subagents":
            for sub in sorted(glob.glob(os.path.join(p[:-len(".jsonl")], "subagents", "agent-*.jsonl"))):
                if sub not in out:
                    out.append(sub)
    return out


def identity(path: str, entries: list[dict]) -> dict:
    """{"session", "agent_id", "agent_type"} of a transcript (agent fields None for a main agent)."""
    session = next((str(e["sessionId"]) for e in entries if e.get("sessionId")), "")
    agent = next((str(e["agentId"]) for e in entries if e.get("agentId")), None)
    if agent is None and os.path.basename(os.path.dirname(path)) == "subagents":
        agent = os.path.basename(path)[len("agent-"):-len(".jsonl")]
    atype = None
    if agent is not None:
        try:
            with open(path[:-len(".jsonl")] + ".meta.json", encoding="utf-8") as f:
                meta = json.load(f)
            atype = meta.get("agentType") if isinstance(meta, dict) else None
        except (OSError, ValueError):
            pass
        atype = atype or "subagent"
    return {"session": session, "agent_id": agent, "agent_type": atype}


def calls_of(entries: list[dict]) -> list[dict]:
    """Every tool call: {"id", "tool", "input", "cwd", "refused_then"} (pure)."""
    calls: list[dict] = []
    by_id: dict[str, dict] = {}
    for e in entries:
        for b in _blocks(e):
            if b.get("type") == "tool_use" and e.get("type") == "assistant":
                c = {"id": str(b.get("id") or f"call{len(calls)}"), "tool": str(b.get("name") or "?"),
                     "input": b.get("input") if isinstance(b.get("input"), dict) else {},
                     "cwd": e.get("cwd") or "", "refused_then": False}
                calls.append(c)
                by_id[c["id"]] = c
            elif b.get("type") == "tool_result":
                c = by_id.get(str(b.get("tool_use_id") or ""))
                if c is not None and b.get("is_error") and _refused(_text(b.get("content"))):
                    c["refused_then"] = True
    return calls


def judge_transcript(path: str, config, repo: str, guards: list) -> dict:
    """{"path", "session", "agent_id", "agent_type", "calls": [{..., "findings": [...]}]}."""
    entries, _bad = read_entries(path)
    who = identity(path, entries)
    out = dict(who, path=path, calls=[])
    for c in calls_of(entries):
        payload = {"session_id": who["session"], "transcript_path": path, "cwd": c["cwd"] or repo,
                   "hook_event_name": "PreToolUse", "tool_name": c["tool"], "tool_input": c["input"],
                   "tool_use_id": c["id"]}
        if who["agent_id"]:
            payload.update(agent_id=who["agent_id"], agent_type=who["agent_type"])
        found = [f for f in judge_recorded(payload, config, repo, guards, timed=False, failures=True)
                 if f.decision in REFUSING]
        out["calls"].append({"id": c["id"], "tool": c["tool"], "what": summary_of(c["tool"], c["input"]),
                             "refused_then": c["refused_then"],
                             "findings": [{"code": f.code, "decision": f.decision, "message": f.render()}
                                          for f in found]})
    return out


def junit(results: list[dict]) -> str:
    """JUnit XML: a suite per transcript, a case per call, a failure per call refused now (pure)."""
    total = sum(len(r["calls"]) for r in results)
    failed = sum(1 for r in results for c in r["calls"] if c["findings"])
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="swarmgate replay" tests="{total}" failures="{failed}" errors="0">']
    for r in results:
        who = r["agent_id"] and f"{r['agent_type']} {r['agent_id']}" or "main agent"
        nfail = sum(1 for c in r["calls"] if c["findings"])
        suite = quoteattr(f"{r['session'] or '?'} {who}")
        lines.append(f'  <testsuite name={suite} tests="{len(r["calls"])}" failures="{nfail}" errors="0" '
                     f'file={quoteattr(r["path"])}>')
        for i, c in enumerate(r["calls"], 1):
            name = f"{i:03d} {c['tool']}: {' '.join(str(c['what']).split())[:150]}"
            classname = f"swarmgate.replay.{(r['agent_type'] or 'main').replace('.', '_')}"
            lines.append(f"    <testcase classname={quoteattr(classname)} name={quoteattr(name)}>")
            if c["findings"]:
                codes = ",".join(dict.fromkeys(f["code"] for f in c["findings"]))
                then = "refused then too" if c["refused_then"] else "ran then"
                message = quoteattr(f"{codes} refuse it now ({then})")
                lines.append(f"      <failure type={quoteattr(codes)} message={message}>"
                             + escape("\n".join(f["message"] for f in c["findings"])) + "</failure>")
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


@entry("replay")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(prog="swarmgate replay",
                                description="Re-judge recorded sessions (subagents' transcripts included) with the "
                                            "current guards and config; JUnit XML for CI.")
    p.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT", help="a session's or a subagent's .jsonl")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML: one failure per call a guard refuses now")
    p.add_argument("--json", action="store_true", help="print every call and its findings as JSON")
    p.add_argument("--repo", help="the repository whose config and guards judge (default: the one around here)")
    args = p.parse_args(argv)


    repo = os.path.abspath(args.repo) if args.repo else find_repo()
    try:
        config = load_config(repo)
    except ConfigError as e:
        print(f"swarmgate replay: {e}", file=sys.stderr)
        return 251
    guards = replay_guards()
    results = []
    for path in expand(args.transcripts):
        if not os.path.isfile(path):
            print(f"swarmgate replay: {path}: no such transcript", file=sys.stderr)
            return 251
        try:
            results.append(judge_transcript(path, config, repo, guards))
        except (OSError, StateError, ValueError) as e:
            print(f"swarmgate replay: {path}: cannot be read ({e})", file=sys.stderr)
            return 251
    refused = [(r, c) for r in results for c in r["calls"] if c["findings"]]
    if args.junit:
        try:
            write_text_atomic(args.junit, junit(results))
        except (OSError, StateError) as e:
            print(f"swarmgate replay: cannot write {args.junit}: {e}", file=sys.stderr)
            return 251
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
    else:
        for r in results:
            who = f"{r['agent_type']} {r['agent_id']}" if r["agent_id"] else "main agent"
            mine = [c for c in r["calls"] if c["findings"]]
            print(f"{r['path']}: {who}, {len(r['calls'])} call(s) re-judged, {len(mine)} refused now")
            for c in mine:
                codes = ", ".join(dict.fromkeys(f["code"] for f in c["findings"]))
                print(f"  {codes}: {c['tool']} `{' '.join(str(c['what']).split())[:120]}`"
                      f" ({'refused then too' if c['refused_then'] else 'ran then'})")
        print(f"{sum(len(r['calls']) for r in results)} call(s) in {len(results)} transcript(s); "
              f"{len(refused)} refused by the current guards and config")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
