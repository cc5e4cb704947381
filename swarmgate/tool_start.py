"""What every console tool does before it runs: a break switch set outside a self-test refuses
with 251 (SPEC §7). A tool's ``--selftest`` is the front door's (swarmgate/front_door.py).

Its own module so that break_switch (read by everything, hooks included) never imports the
front door.
"""
from __future__ import annotations


def tool_start(prog: str) -> int | None:
    """The exit code to stop with, or None to go on."""
    import sys

    from swarmgate.break_switch import refusal
    why = refusal()
    if why:
        from swarmgate.exit_codes import Exit
        print(f"{prog}: {why}", file=sys.stderr)
        return int(Exit.USAGE)
    return None
