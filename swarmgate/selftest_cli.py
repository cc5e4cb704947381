"""`swarmgate selftest [NAMES...] [-q]`: the self-test harness (swarmgate/selftest.py) as a tool.

Names are guard codes, `guards` (every guard) and tool names (their suites); none runs every suite.
An unknown name is a usage error (251). A tool's own ``--selftest`` runs its suite through the
front door without this parser (swarmgate/front_door.py).
"""
from __future__ import annotations

from swarmgate.front_door import UsageError, entry
from swarmgate.selftest import known_names, report
from swarmgate.tool_parser import ToolParser


@entry("selftest")
def main(argv: list[str] | None = None) -> int:
    p = ToolParser(prog="swarmgate selftest",
                   description="Run the self-tests: every cell green, every break switch turns its cells red.")
    p.add_argument("names", nargs="*", help="suites to run (guard codes, `guards`, tool names); default all")
    p.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    args = p.parse_args(argv)
    known = known_names()
    for n in args.names:
        if n not in known:
            raise UsageError(f"unknown suite {n!r} (known: {', '.join(known)})")
    return report(args.names, args.quiet)
