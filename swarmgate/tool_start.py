"""What every console tool does first: `--selftest` runs its self-test suite; a break switch set
outside a self-test refuses with 251 (SPEC §7).

Its own module so that break_switch (read by everything, hooks included) never imports the
self-test harness, which imports break_switch.
"""
from __future__ import annotations


def tool_start(suite: str, selftest: bool, prog: str) -> int | None:
    """The exit code to stop with, or None to go on."""
    import sys

    if selftest:
        from swarmgate.selftest import main as selftest_main
        return selftest_main([suite])
    from swarmgate.break_switch import refusal
    why = refusal()
    if why:
        from swarmgate.exit_codes import Exit
        print(f"{prog}: {why}", file=sys.stderr)
        return int(Exit.USAGE)
    return None
