"""The writers' parser for find (hooks/shell_writers.py dispatches here): the start points of
``-delete`` (trees) and the files of ``-fprint``/``-fprint0``/``-fprintf``/``-fls``.

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


def find(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    starts = []
    for a in args:
        if a.startswith(("-", "(", "!")) or a in (")",):
            break
        starts.append(a)
    out = []
    if "-delete" in args:
        out += [Target(s, f"`find {s} -delete`", tree=True) for s in (starts or ["."])]
    for i, a in enumerate(args[:-1]):
        if a in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            out.append(Target(args[i + 1], f"`find {a} {args[i + 1]}`"))
    return out
