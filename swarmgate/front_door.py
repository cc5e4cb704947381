"""The one way into every console tool (SPEC §1, §7, §9).

Each tool's entry function is wrapped by ``entry(NAME)`` (NAME as in tool_table.TOOLS), so a
console script, `swarmgate NAME` and a test calling ``main([...])`` all start the same way:

1. ``--selftest`` among the options (before any ``--``) runs the tool's self-test suite
   (the harness's ``report``, behind this door as the tool `selftest`);
2. a break switch set outside a self-test refuses with 251 (tool_start.tool_start);
3. the tool runs; a usage error (``UsageError``, raised by tool_parser.ToolParser for anything
   argparse rejects) or a set-up error (``ConfigError``: a config file that cannot be used;
   ``StateError``: a state file that cannot be used or written, a full disk, a read-only or failing
   filesystem, a quota, named with its path and errno) is printed as ONE line naming the tool, and
   the exit code is 251. Nothing else is caught: a bug still shows its traceback.

Light at import time: run-with-memory-cap and the tools the hook imports load this module.
"""
from __future__ import annotations

import sys

from swarmgate import tool_table
from swarmgate.config import ConfigError
from swarmgate.statefile import StateError
from swarmgate.tool_start import tool_start

USAGE_EXIT = 251  # exit_codes.Exit.USAGE; a literal here keeps the runner's start light


class UsageError(Exception):
    """A command line the tool cannot act on. ``prog`` is the (sub)command that rejected it."""

    def __init__(self, message: str, prog: str | None = None) -> None:
        super().__init__(message)
        self.prog = prog


def say(prog: str, message: str) -> int:
    """Print a usage or set-up error as one line and return 251."""
    line = " ".join(str(message).split())  # one line, whatever the message held
    print(f"{prog}: {line}", file=sys.stderr)
    return USAGE_EXIT


def _prog(name: str) -> str:
    tool = tool_table.get(name)
    return tool.prog if tool else name


def _options(args: list[str]) -> list[str]:
    """The tool's own options: what comes before `--` (after it is the command a tool runs)."""
    return args[:args.index("--")] if "--" in args else args


def start(name: str, args: list[str]) -> int | None:
    """Steps 1 and 2 above: the exit code to stop with, or None to run the tool."""
    prog = _prog(name)
    tool = tool_table.get(name)
    if "--selftest" in _options(args):
        if tool is None or tool.suite is None:
            print(f"{prog}: no self-test suite of its own (it has no protection a break switch could "
                  f"turn off); `swarmgate selftest` runs every suite")
            return 0
        from swarmgate.selftest import report  # noqa: PLC0415 - the harness is heavy; it imports no front door

        return run("selftest", report, [name])   # as `swarmgate selftest NAME`: through this door again
    return tool_start(prog)


def run(name: str, func, argv) -> int:
    """Run ``func(args)`` as the tool ``name`` behind the front door."""
    args = list(sys.argv[1:] if argv is None else argv)
    stop = start(name, args)
    if stop is not None:
        return stop
    try:
        return int(func(args) or 0)
    except UsageError as e:
        return say(e.prog or _prog(name), str(e))
    except ConfigError as e:
        return say(_prog(name), str(e))
    except StateError as e:   # a state file that cannot be used or written: set-up, one line (issue 26)
        return say(_prog(name), str(e))
    except BrokenPipeError:   # `swarmgate explain ... | head`: the reader left, as with any Unix filter
        import os  # noqa: PLC0415 - only here

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second error at exit
        except OSError:
            pass
        return 141   # 128 + SIGPIPE, what a shell reports for a filter killed by the pipe


def entry(name: str):
    """Decorator for a tool's entry function ``main(argv) -> int``."""
    def wrap(func):
        def main(argv=None) -> int:
            return run(name, func, argv)

        main.__name__ = func.__name__
        main.__qualname__ = func.__qualname__
        main.__doc__ = func.__doc__
        main.__module__ = func.__module__
        main.__wrapped__ = func
        main.tool_name = name
        return main
    return wrap
