"""`swarmgate explain [--agent TYPE] [--json] [--cwd DIR] -- COMMAND` (or `--event FILE`).

Prints what the hook would decide for one Bash command, and why: every command that
would run and how it was reached (through which wrapper, script, package.json script,
Makefile target ...), what could not be read, the interpreter programs and project files
read, and each guard's verdict with its reason and way out. The same code path as the
hook: the payload is parsed by hook_protocol, the config loaded as the hook loads it,
the guards are the registry's for the event and tool, and the engine's ``evaluate``
derives and judges (nothing is recorded, locked or started: no act phase, no decision
log line).

Exit codes: 0 explained (whatever the verdict), 251 usage or set-up error (a bad config,
an unreadable event file), one line on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from swarmgate import guard as G
from swarmgate.bounded_read import read_bytes
from swarmgate.config import ConfigError, load_config
from swarmgate.front_door import UsageError, entry
from swarmgate.hook_engine import combine, evaluate
from swarmgate.hook_protocol import HookInputError, parse_payload
from swarmgate.hooks import registry
from swarmgate.hooks.derivations import DerivationError, get
from swarmgate.tool_parser import ToolParser

USAGE_EXIT = 251


class _Parser(ToolParser):
    def error(self, message: str):  # one line, 251 at the front door (SPEC §9)
        raise UsageError(f"{message} (usage: swarmgate explain [--agent TYPE] [--json] "
                         "[--cwd DIR] -- COMMAND, or --event FILE)")


def _payload(args, command: str | None) -> tuple[str, dict]:
    if args.event:
        try:
            raw = read_bytes(args.event, 1 << 22).decode("utf-8", "surrogateescape")
            payload = json.loads(raw)
        except (OSError, ValueError) as e:
            raise _Usage(f"{args.event}: cannot be read as a hook payload ({e})") from None
        if not isinstance(payload, dict):
            raise _Usage(f"{args.event}: not a JSON object")
        return str(payload.get("hook_event_name") or "PreToolUse"), payload
    cwd = os.path.abspath(args.cwd or os.getcwd())
    payload = {"session_id": "explain", "transcript_path": "", "cwd": cwd, "hook_event_name": "PreToolUse",
               "tool_name": args.tool, "tool_input": {"command": command}}
    if args.agent and args.agent != "main":
        payload["agent_id"] = "explain"
        payload["agent_type"] = args.agent
    return "PreToolUse", payload


class _Usage(Exception):
    pass


def explain(event_name: str, payload: dict) -> dict:
    """The explanation of one hook payload, as data (what ``--json`` prints)."""

    event = parse_payload(event_name, json.dumps(payload))
    config = load_config(event.repo)
    guards = registry.guards_for(event_name, event.tool_name)
    findings = evaluate(event, config, guards)
    decision, reason, context = combine(event_name, findings, bool(event.payload.get("stop_hook_active")))
    out: dict = {
        "event": event_name, "tool": event.tool_name, "repo": event.repo, "cwd": event.cwd,
        "actor": event.actor if event.is_subagent else "main",
        "command": event.shell_command, "decision": decision, "reason": reason,
    }
    if event.shell_command is not None:
        try:
            an = get(event, config, "bash")
        except DerivationError as e:
            an, out["read_error"] = None, str(e)
        if an is not None:
            out.update(_analysis(an))
    by_code: dict = {}
    for f in findings:
        item = {"decision": f.decision, "message": f.message, "way_out": f.way_out}
        if getattr(f, "updated_input", None):
            item["updated_input"] = f.updated_input   # a rewrite: what runs instead
        by_code.setdefault(f.code, []).append(item)
    verdicts = []
    for g in guards:
        mode = config.guard_mode(g.code)
        fs = by_code.pop(g.code, [])
        strongest = next((d for d in (G.DENY, G.ASK, getattr(G, "REWRITE", "rewrite"), G.WARN, G.CONTEXT)
                          if any(x["decision"] == d for x in fs)),
                         None)
        verdicts.append({"code": g.code, "summary": g.summary, "mode": mode,
                         "verdict": "off" if mode == "off" else (strongest or "pass"), "findings": fs})
    for code, fs in by_code.items():   # findings of codes no listed guard carries (engine failures)
        verdicts.append({"code": code, "summary": "", "mode": "on", "verdict": fs[0]["decision"], "findings": fs})
    out["guards"] = verdicts
    if context:
        out["context"] = context
    return out


def _analysis(an) -> dict:
    cmds = []
    for c in an.commands:
        if not c.words:
            continue
        cmds.append({"words": list(c.words), "via": [v for v in c.via if v], "wrappers": list(c.wrappers),
                     "background": c.background, "cwd": c.cwd, "script": c.script,
                     "assignments": dict(c.assignments),
                     "unknown_words": [w for w, d in zip(c.words, c.dynamic) if d]})
    return {
        "parsed_by": an.parsed_by, "commands": cmds,
        "unverifiable": [{"reason": u.reason, "text": u.text} for u in an.unverifiable],
        "programs": [{"interpreter": p.interpreter, "source": p.source, "readable": p.code is not None,
                      "via": [v for v in p.via if v], "code": (p.code or "")[:400]} for p in an.programs],
        "scripts_read": list(an.scripts_read), "files_read": list(getattr(an, "files_read", [])),
        "loops": [{"kind": lp.kind, "breaks": lp.has_break, "text": lp.text[:200]} for lp in an.loops],
        "nested_background": list(an.nested_background), "problems": list(an.problems),
    }


def render(x: dict) -> str:
    """The explanation as text for a person."""
    lines = []
    who = "the main agent" if x["actor"] == "main" else f"subagent `{x['actor']}`"
    if x.get("command") is not None:
        lines.append(f"command ({x['tool']}, {who}, in {x['cwd']}):")
        lines.append(f"  {x['command']}")
    else:
        lines.append(f"{x['event']} {x.get('tool') or ''} from {who}")
    if "commands" in x:
        lines.append(f"read by: {x['parsed_by']}")
        lines.append("commands that would run:")
        for k, c in enumerate(x["commands"], 1):
            how = " → ".join(v for v in c["via"] if v not in ("list", "pipeline")) or "as typed"
            extra = []
            if c["assignments"]:
                extra.append("with " + " ".join(f"{k2}={v}" for k2, v in c["assignments"].items()))
            if c["background"]:
                extra.append("in the background" + (" (nested)" if c["background"] > 1 else ""))
            if c["unknown_words"]:
                extra.append("unknown: " + " ".join(c["unknown_words"]))
            lines.append(f"  {k:>2}. {' '.join(c['words'])}")
            lines.append(f"      reached: {how}" + (f"; {'; '.join(extra)}" if extra else ""))
        if not x["commands"]:
            lines.append("  (none)")
        for label, key in (("scripts read", "scripts_read"), ("files read", "files_read")):
            if x.get(key):
                lines.append(f"{label}: " + ", ".join(x[key]))
        if x.get("programs"):
            lines.append("interpreter programs (scanned by the guards):")
            for p in x["programs"]:
                lines.append(f"  - {p['interpreter']} ({p['source']}{'' if p['readable'] else ', unreadable'})"
                             + (f" via {' → '.join(p['via'])}" if p["via"] else ""))
        if x.get("unverifiable"):
            lines.append("cannot be read statically:")
            for u in x["unverifiable"]:
                lines.append(f"  - {u['reason']}")
    if x.get("read_error"):
        lines.append(f"the command could not be read: {x['read_error']}")
    lines.append("guards:")
    for g in x["guards"]:
        mode = "" if g["mode"] == "on" else f" [{g['mode']}]"
        lines.append(f"  {g['code']:<4} {g['verdict']:<7}{mode} {g['summary']}")
        for f in g["findings"]:
            if f.get("updated_input") is not None:
                cmd = f["updated_input"].get("command") if isinstance(f["updated_input"], dict) else None
                lines.append(f"       {f['decision']}: runs as " + (f"`{cmd}`" if cmd else "a changed tool input")
                             + (f" ({f['message']})" if f["message"] else ""))
                continue
            lines.append(f"       {f['decision']}: {f['message']}")
            if f["way_out"]:
                lines.append(f"       way out: {f['way_out']}")
    lines.append(f"decision: {x['decision']}")
    return "\n".join(lines)


@entry("explain")
def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    command = None
    if "--" in args_in:
        k = args_in.index("--")
        command = " ".join(args_in[k + 1:]) if len(args_in) > k + 2 else (args_in[k + 1] if len(args_in) > k + 1
                                                                           else "")
        args_in = args_in[:k]
    p = _Parser(prog="swarmgate explain",
                description="What the hook would decide for a Bash command, and why (nothing is run or recorded).")
    p.add_argument("--agent", metavar="TYPE", help="judge as a subagent of this type (default: the main agent)")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.add_argument("--cwd", metavar="DIR", help="the directory the command runs in (default: here)")
    p.add_argument("--tool", default="Bash", choices=("Bash", "Monitor"), help="the tool (default: Bash)")
    p.add_argument("--event", metavar="FILE", help="a whole hook payload (JSON) instead of COMMAND")
    p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    try:
        args = p.parse_args(args_in)
        if command is None and args.words:
            command = " ".join(args.words)
        if not args.event and not command:
            p.error("give the command after `--` (swarmgate explain -- cargo test --workspace) or --event FILE")
        if args.cwd and not os.path.isdir(args.cwd):
            p.error(f"--cwd {args.cwd}: no such directory")
    except SystemExit as e:   # --help (0) ends here, never as an exception
        return int(e.code or 0)
    try:
        event_name, payload = _payload(args, command)
        x = explain(event_name, payload)
    except (_Usage, ConfigError, HookInputError) as e:
        print(f"swarmgate explain: {e}", file=sys.stderr)
        return USAGE_EXIT
    if args.json:
        print(json.dumps(x, indent=2, ensure_ascii=False, default=str))
    else:
        print(render(x))
    return 0


if __name__ == "__main__":
    sys.exit(main())
