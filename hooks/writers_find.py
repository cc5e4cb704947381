"""The writers' parser for find (hooks/shell_writers.py dispatches here): the start points of
``-delete`` (trees) and the files of ``-fprint``/``-fprint0``/``-fprintf``/``-fls``; and
``placed_under_roots``: the writes of the command an ``-exec``/``-execdir``/``-ok``/``-okdir`` runs,
``{}`` read as the files find yields (hooks/shell_writes.py asks it for a command the reader marked
with find's roots, hooks/bash_walker.py ``_find``).

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand

_VALUE_OPTS = ("-D",)   # find's options before the start points: -H -L -P, -D DEBUG, -O LEVEL


def roots(args: list[str]) -> list[str]:
    """find's start points (``.`` when none is given): the operands before the expression, after
    the leading options ``-H``, ``-L``, ``-P``, ``-D OPTS``, ``-ON``."""
    i, n = 0, len(args)
    while i < n and (args[i] in ("-H", "-L", "-P", "-D") or (args[i][:2] == "-O" and args[i][2:].isdigit())):
        i += 2 if args[i] in _VALUE_OPTS else 1
    starts = []
    for a in args[i:]:
        if a.startswith(("-", "(", "!")) or a in (")", ","):
            break
        starts.append(a)
    return starts or ["."]


def find(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    out = []
    if "-delete" in args:
        out += [Target(s, f"`find {s} -delete`", tree=True) for s in roots(args)]
    for i, a in enumerate(args[:-1]):
        if a in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            out.append(Target(args[i + 1], f"`find {a} {args[i + 1]}`"))
    return out


def _ups(path: str) -> int:
    """How many ``..`` segments ``path`` has (0: it stays under where it starts)."""
    return path.split("/").count("..")


def _climbed(base: str, ups: int) -> str:
    from swarmgate import lean_path as posixpath
    return posixpath.normpath("/".join([base] + [".."] * ups))


def placed_under_roots(targets: list[Target], starts: tuple, execdir: bool) -> list[Target]:
    """``targets`` (what the command ``-exec`` runs writes, as written) with ``{}`` read as the
    files find yields under each start point ``R`` (the start point itself or anything under it):

    - a word that begins with ``{}`` (``{}``, ``{}.bak``, ``{}/x``): the tree ``R``;
    - ``{}`` later in a word (``/backup/{}``): the tree of that word with ``{}`` read as ``R``
      (``/backup/R``); under ``-execdir``, where ``{}`` is ``./NAME``, the tree of the word with
      ``{}`` read as ``.``, placed as the next item says;
    - under ``-execdir``/``-okdir`` the command runs in the directory of each file: ``R``'s parent
      (for ``R`` itself) or a directory under ``R``; a relative word is read there (its path under
      ``R``'s parent, and the tree ``R``);
    - a word that climbs with ``..`` (``{}/..``, a relative ``../x`` under ``-execdir``): the tree
      as high as it can climb from the shallowest file (``R``'s parent for ``{}/..``).
    """
    from swarmgate import lean_path as posixpath

    out: list[Target] = []
    for t in targets:
        p = t.path
        k = p.find("{}")
        if k < 0 and (not execdir or p.startswith("/")):
            out.append(t)
            continue
        how = t.how
        for r in starts:
            if k == 0:
                m = _ups(p[2:].replace("{}", r))
                out.append(Target(_climbed(r, m) if m else r, how, tree=True))
                continue
            if not execdir:
                m = _ups(p[k + 2:].replace("{}", r))
                out.append(Target(_climbed(p[:k] + r, m), how, tree=True))
                continue
            word = p.replace("{}", ".")
            parent = posixpath.dirname(posixpath.normpath(r)) or "."
            m = _ups(word)
            if word.startswith("/"):
                out.append(Target(_climbed(word, 0) if not m else _climbed(word.split("/..")[0] or "/", m),
                                  how, tree=True))
                continue
            if m:
                out.append(Target(_climbed(parent, m), how, tree=True))
            else:
                out.append(Target(posixpath.normpath(posixpath.join(parent, word)), how, tree=t.tree or k > 0))
                out.append(Target(r, how, tree=True))
    return out
