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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:
        from swarmgate.hook_entry import hook
        return hook(args[1:])
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
