"""The writer table: programs that write, move or remove files, and how to find what they write.

One table, as data (hooks/writer_table.py: ``TABLE``, each entry built into a ``Writer`` on first
lookup, and ``SPECIAL``), read by hooks/shell_writes.py for W01 and G01; loaded only for a command
that names a program of the table; extensible by config (``[bash] writers``, see ``from_config``).
An entry says, for one program name:

- ``operands``: which operands are written: ``"all"``, ``"last"`` (a destination), ``"first"``,
  ``"none"``; ``leading``: operands before them that are not paths (``chmod MODE``, ``chown
  OWNER``);
- ``options``: options that take a value, each ``"file"`` (the value is a file written: ``dd
  of=``, ``curl -o``, ``sort -o``), ``"tree"`` (a directory written into: ``wget -P``, ``pip
  install --target``) or ``"value"`` (a value that is no target: ``truncate -s``);
- ``read_only``: options with which the program writes nothing (``-n`` dry runs, ``--stdout``);
- ``recursive``: options with which an operand that is a directory is written as a whole
  (``rm -r``, ``chmod -R``): the target is the tree;
- ``needs``: options (any one) without which nothing is written (``mount --bind``);
- ``trees``: every operand is a directory written as a whole (``rmdir``);

A target is a **file** (that path is written) or a **tree** (anything under the directory may be
written: an archive extracted there, ``rm -r``, ``git checkout -- DIR``). Programs whose
semantics no entry can say have a function (``SPECIAL``; ``_PARSERS`` here names it as
"module:function"), one module per family, imported on the first use of one of its parsers so that a
command loads only the family it names (``git status``: hooks/writers_git.py alone):

- hooks/writers_git.py: git's writing subcommands (checkout, restore, rm, mv, clean, apply/am,
  worktree add, clone, config --file, archive, format-patch);
- hooks/writers_copies.py: cp/mv/install/ln/rsync (destination directories, sources moved away,
  links recorded);
- hooks/writers_archives.py: tar, unzip, 7z, cpio (the members of a readable archive) and the
  compressors;
- hooks/writers_text.py: programs that edit files in place (patch, sed/perl/awk in place, ex/vim/ed
  scripts, dd, sqlite3, apply_patch), and the readers of a command's input (here-documents, ``<
  FILE``, patch files) that ``git apply``/``am`` use too;
- hooks/writers_fetch.py: curl and wget (the default output name);
- hooks/writers_find.py: find -delete and -fprint, and `{}` of what find -exec runs (under the start points);
- hooks/writers_installers.py: pip/npm into a prefix, ``python -m pip``.

This module keeps what every family needs: ``Writer``, ``parse_args``, the table's reader, the
dispatch (``targets``), ``in_dir``/``isdir_at``, and ``[bash] writers`` (``from_config``).
Parsing only: the guards judge the targets. Light at import: no ``re``.
"""
from __future__ import annotations

from swarmgate.hooks.writer_table import TABLE, Target, parser_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Callable

    from swarmgate.hooks.bash_results import SimpleCommand


class Writer:
    """How to find what one program writes (see the module doc)."""
    __slots__ = ("name", "operands", "leading", "options", "read_only", "recursive", "needs", "verb", "trees")

    def __init__(self, name: str, *, operands: str = "all", leading: int = 0, options: dict | None = None,
                 read_only=(), recursive=(), needs=(), verb: str = "", trees: bool = False) -> None:
        self.name = name
        self.operands = operands
        self.leading = leading
        self.options = dict(options or {})
        self.read_only = tuple(read_only)
        self.recursive = tuple(recursive)
        self.needs = tuple(needs)
        self.verb = verb or name
        self.trees = trees


def parse_args(args: list[str], value_opts) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(options as (name, value or None), operands). ``--opt=value``; ``-oVALUE`` and ``-o VALUE``
    for the value options listed; short flags cluster (``-rf``); ``--`` ends the options."""
    opts: list = []
    ops: list = []
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "--":
            ops.extend(args[i + 1:])
            break
        if a.startswith("--"):
            k = a.find("=")
            if k > 0:
                opts.append((a[:k], a[k + 1:]))
            elif a in value_opts and i + 1 < n:
                opts.append((a, args[i + 1]))
                i += 1
            else:
                opts.append((a, None))
        elif a.startswith("-") and len(a) > 1 and not a[1:].lstrip("-").isdigit() or (
                a.startswith("-") and len(a) > 1 and a in value_opts):
            j = 1
            while j < len(a):
                o = "-" + a[j]
                if o in value_opts:
                    if j + 1 < len(a):
                        opts.append((o, a[j + 1:]))
                    elif i + 1 < n:
                        opts.append((o, args[i + 1]))
                        i += 1
                    else:
                        opts.append((o, None))
                    break
                opts.append((o, None))
                j += 1
        else:
            ops.append(a)
        i += 1
    return opts, ops


def _table(w: Writer, args: list[str]) -> list[Target]:
    opts, ops = parse_args(args, {o for o, k in w.options.items()})
    names = {o for o, _ in opts}
    if any(o in names for o in w.read_only):
        return []
    if w.needs and not any(o in names for o in w.needs):
        return []
    out = [Target(v, f"`{w.name} {o} {v}`", tree=w.options[o] == "tree")
           for o, v in opts if v is not None and w.options.get(o) in ("file", "tree")]
    tree = w.trees or any(o in names for o in w.recursive)
    ops = ops[w.leading:] if w.leading and not (w.name in ("chown", "chgrp", "chmod")
                                                  and any(o.startswith("--reference") for o in names)) else ops
    picked = {"all": ops, "last": ops[-1:], "first": ops[:1], "none": []}.get(w.operands, ops)
    out += [Target(p, f"`{w.verb} {p}`", tree=tree) for p in picked]
    return out


# -- the table --------------------------------------------------------------------------------
_writers: dict[str, Writer] = {}


def writer(name: str) -> Writer | None:
    """The built-in ``Writer`` for ``name`` (hooks/writer_table.py's ``TABLE``), built on first lookup."""
    w = _writers.get(name)
    if w is None:
        spec = TABLE.get(name)
        if spec is None:
            return None
        w = _writers[name] = Writer(name, **spec)
    return w


# -- what the parsers of several families share ------------------------------------------------
def in_dir(base: str, p: str) -> str:
    """``p`` under the directory ``base`` (``-C DIR``, ``--output-dir``), or ``p`` when there is none."""
    from swarmgate import lean_path as posixpath
    return posixpath.join(base, p) if base else p


def isdir_at(cmd: SimpleCommand, p: str) -> bool:
    """Whether ``p`` is a directory now, read from the command's working directory (False when unknown)."""
    from swarmgate import lean_os as os
    base = getattr(cmd, "cwd", None)
    if not p.startswith("/") and not base:
        return False
    full = p if p.startswith("/") else os.path.join(base, p)
    if full.startswith("~"):
        from swarmgate.hooks.write_paths import expand_tilde
        full = expand_tilde(full)
    return os.path.isdir(full)


# the parsers hooks/writer_table.py's SPECIAL names, as "module:function" of this package: a family's
# module is imported on the first use of one of its parsers (``git status`` loads writers_git alone);
# those of _NAMED_PARSERS take the program's name
_PARSERS: dict[str, str] = {
    "git": "writers_git:git", "tar": "writers_archives:tar", "unzip": "writers_archives:unzip",
    "7z": "writers_archives:sevenzip", "cpio": "writers_archives:cpio", "patch": "writers_text:patch",
    "sed": "writers_text:sed", "perl": "writers_text:perl", "awk": "writers_text:awk", "dd": "writers_text:dd",
    "sqlite": "writers_text:sqlite", "apply_patch": "writers_text:apply_patch", "curl": "writers_fetch:curl",
    "wget": "writers_fetch:wget", "find": "writers_find:find", "python_pip": "writers_installers:python_pip",
}
_NAMED_PARSERS: dict[str, str] = {"copy": "writers_copies:copy", "editor": "writers_text:editor",
                                  "compress": "writers_archives:compress",
                                  "installer": "writers_installers:installer"}
_loaded: dict[str, Callable] = {}


def parser(key: str) -> Callable:
    """The parser function ``key`` (a value of hooks/writer_table.py's ``SPECIAL``) names, its module
    imported on first use."""
    fn = _loaded.get(key)
    if fn is None:
        module, _, name = (_PARSERS.get(key) or _NAMED_PARSERS[key]).partition(":")
        fn = _loaded[key] = getattr(__import__(f"swarmgate.hooks.{module}", None, None, (name,)), name)
    return fn


def targets(cmd: SimpleCommand, extra: dict | None = None) -> list[Target]:
    """What the simple command ``cmd`` writes besides its redirections (see the module doc);
    ``extra``: entries from ``[bash] writers`` (they win over the built-in table)."""
    name = cmd.name
    args = list(cmd.args)
    w = (extra or {}).get(name)
    if w is not None:
        return _table(w, args)
    key = parser_of(name)
    if key is not None:
        fn = parser(key)
        return fn(cmd, args) if key in _PARSERS else fn(cmd, name, args)
    w = writer(name)
    return _table(w, args) if w is not None else []


# -- config: `[bash] writers` -----------------------------------------------------------------
CONFIG_FIELDS = {"operands": ("all", "last", "first", "none"), "leading": "an integer 0-8",
                 "files": "a list of options", "trees": "a list of options", "values": "a list of options",
                 "read_only": "a list of options", "recursive": "a list of options", "needs": "a list of options"}


def from_config(raw) -> dict:
    """``[bash] writers`` (name -> {operands, leading, files, trees, values, read_only, recursive, needs})
    checked; raises ValueError naming the writer and the field."""
    if not isinstance(raw, dict):
        raise ValueError("expected a table of program name -> { operands = \"all\", files = [\"-o\"] }")
    out = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not name.strip() or "/" in name or " " in name:
            raise ValueError(f"writer name {name!r}: expected a command name (no spaces or slashes)")
        if not isinstance(spec, dict):
            raise ValueError(f"writer {name!r}: expected a table such as {{ operands = \"last\", files = [\"-o\"] }}")
        for field, value in spec.items():
            want = CONFIG_FIELDS.get(field)
            if want is None:
                raise ValueError(f"writer {name!r}: unknown field {field!r} (known: {', '.join(CONFIG_FIELDS)})")
            if field == "operands":
                ok = value in want
            elif field == "leading":
                ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 8
            else:
                ok = isinstance(value, list) and all(isinstance(x, str) and x.startswith("-") for x in value)
            if not ok:
                shown = " | ".join(want) if isinstance(want, tuple) else want
                raise ValueError(f"writer {name!r}: {field} must be {shown}, found {value!r}")
        out[name] = dict(spec)
    return out


_compiled: dict = {}


def compile_config(specs: dict | None) -> dict | None:
    """Writer entries from validated ``[bash] writers`` data (cached per process)."""
    if not specs:
        return None
    key = repr(sorted((k, sorted((f, repr(v)) for f, v in s.items())) for k, s in specs.items()))
    hit = _compiled.get(key)
    if hit is None:
        hit = {}
        for name, s in specs.items():
            options = {o: "file" for o in s.get("files", ())}
            options.update({o: "tree" for o in s.get("trees", ())})
            options.update({o: "value" for o in s.get("values", ())})
            hit[name] = Writer(name, operands=s.get("operands", "all"), leading=s.get("leading", 0),
                               options=options, read_only=s.get("read_only", ()),
                               recursive=s.get("recursive", ()), needs=s.get("needs", ()))
        _compiled[key] = hit
    return hit
