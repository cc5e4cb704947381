"""`swarmgate VERB ...`: the umbrella command.

`swarmgate hook EVENT` is the hot path (runs before every tool call): it is
dispatched before argparse or anything else is imported.
"""
from __future__ import annotations

import sys

from swarmgate.tool_table import verbs

# verb -> ("module:function", one line): from the one tool list (swarmgate/tool_table.py); each
# function takes argv (list[str]) and returns an exit code.
VERBS = verbs()


def _usage() -> str:
    lines = ["usage: swarmgate VERB [ARGS...]", "", "verbs:",
             "  hook [--client C] EVENT  answer one hook call of Claude Code, Codex CLI or Gemini CLI (JSON on stdin)"]
    for verb, (_, doc) in VERBS.items():
        lines.append(f"  {verb:<21} {doc}")
    return "\n".join(lines)


def _usage_error(message: str) -> int:
    from swarmgate.front_door import say

    return say("swarmgate", message)


def _hook_unjudged(event: str, msg: str) -> int:
    """Answer a hook call that cannot be judged, fail closed (hook_protocol.unjudged)."""
    import json

    print(msg, file=sys.stderr)
    try:
        from swarmgate.hook_protocol import unjudged
        out = unjudged(event, msg)
    except BaseException:  # noqa: BLE001 - the protocol module itself is broken: its shape, by hand
        out = ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": msg}}
               if event == "PreToolUse" else {"systemMessage": msg})
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


# the event on which each client asks before a tool runs: there, a hook that cannot judge refuses
# (kept here, not read from the dialect modules: this path runs when those may not import)
_TOOL_EVENT = {"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}


def _refuse(client: str, event: str, msg: str) -> int:
    """A definite answer without the hook engine, in the client's own shape: Claude Code's is
    hook_protocol.unjudged; under Codex and Gemini a tool call is refused by exit 2 with the
    reason on stderr (the one signal both honour without any JSON), anything else gets a note."""
    if client == "claude":
        return _hook_unjudged(event, msg)
    import json

    print(msg, file=sys.stderr)
    if event == _TOOL_EVENT[client]:
        return 2
    sys.stdout.write(json.dumps({"systemMessage": msg}) + "\n")
    return 0


def _hook_unavailable(event: str, why: str, client: str = "claude") -> int:
    """The hook engine itself cannot be imported (a broken checkout): still answer, fail closed."""
    return _refuse(client, event, f"swarmgate hook: the hook engine cannot be loaded ({why}); refusing to be "
                                  "safe. Run `swarmgate doctor` in the repository, or ./install.sh in the "
                                  "swarmgate checkout.")


def _hook(args: list[str]) -> int:
    """`swarmgate hook [--client claude|codex|gemini] EVENT` (the hot path)."""
    client = "claude"
    rest = args[1:]
    if rest[:1] == ["--client"] and len(rest) >= 2:
        client, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--client="):
        client, rest = rest[0].split("=", 1)[1], rest[1:]
    if client not in _TOOL_EVENT or len(rest) != 1:
        msg = ("swarmgate hook: expected exactly one EVENT and an optional --client claude|codex|gemini (e.g. "
               "`swarmgate hook PreToolUse`, `swarmgate hook --client codex PreToolUse`), got "
               + (" ".join(args[1:]) or "none") + "; fix the hook entry in the client's settings "
               "(`swarmgate install PATH --client NAME` rewrites it)")
        # still a definite answer for the client: a tool call is refused (fail closed)
        return _refuse(client if client in _TOOL_EVENT else "claude", rest[0] if rest else "", msg)
    # The hook runs before every tool call, often with PYTHONDONTWRITEBYTECODE set in the
    # agent's environment: then every call would recompile every module whose .pyc is
    # missing or stale (after a pull). Write bytecode here regardless (gitignored
    # __pycache__; silently skipped where the tree is read-only).
    sys.dont_write_bytecode = False
    try:
        from swarmgate.hook_engine import main as hook_main
    except BaseException as e:  # noqa: BLE001 - a broken install must not let tool calls through
        return _hook_unavailable(rest[0], f"{type(e).__name__}: {e}", client)
    if client == "claude":
        return hook_main(rest[0])
    return hook_main(rest[0], client)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:
        return _hook(args)
    if args[:1] in (["-h"], ["--help"], ["help"]):
        print(_usage())
        return 0
    if not args:
        return _usage_error("give a VERB (`swarmgate --help` lists them)")
    if args[0] in ("--version", "version"):
        from swarmgate import __version__
        print(f"swarmgate {__version__}")
        return 0
    if args[:1] == ["--selftest"]:
        args = ["selftest", *args[1:]]   # the umbrella's own self-test is all of them
    verb = args[0]
    if verb not in VERBS:
        what = "option" if verb.startswith("-") else "verb"
        return _usage_error(f"unknown {what} {verb!r} (`swarmgate --help` lists the verbs)")
    target = VERBS[verb][0]
    mod, func = target.split(":")
    import importlib
    try:
        module = importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("swarmgate"):
            return _usage_error(f"{verb}: not available in this build ({e.name} is missing)")
        raise
    return int(getattr(module, func)(args[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
