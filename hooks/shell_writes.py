"""The files a shell command writes, read from the parsed command tree (Bash and Monitor).
Shared by W01 (hooks/write_scope.py) and G01's shell side (hooks/shell_protection_guards.py).

- ``redirect_targets``: redirections `>`, `>>`, `>|`, `&>`, `&>>`, `<>` (`>&2`, `2>&1` are not files);
- ``command_writes``: those and what the program writes, from the writer table
  (hooks/shell_writers.py and its parsers' families, hooks/writers_*.py: tee, cp/mv/ln/rsync, git,
  tar/unzip, patch, curl/wget, sed -i ...);
- ``place_writes`` / ``placed_of``: each write placed (hooks/write_paths.py: tilde, the hook's
  variables, the directory the command runs in, links made earlier in the command, symbolic links
  on disk); ``Placed.full`` is None when a target cannot be placed (a variable the hook does not
  know, a directory changed to at run time);

Decisions (documented in docs/bash-guards.md): `mkdir` is not a write (an empty directory changes
no file and git does not track it; what is later written into it is checked).

Light at import: no `re`, `fnmatch`, `pathlib`; the writers' dispatch (hooks/shell_writers.py) loads
only for a command that names a program of the writer table (hooks/writer_table.py), and of the
parsers only the family that program needs (hooks/writers_git.py for git ...); the path module only
for a command that writes.
"""
from __future__ import annotations

from swarmgate.hooks.writer_table import Target, writes_files

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Iterator

    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis, SimpleCommand


REDIRECT_WRITE_OPS = (">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|")
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-")


def redirect_targets(cmd: SimpleCommand) -> list:
    """[(path, how)] the files the command's redirections write."""
    out = []
    for r in getattr(cmd, "redirects", ()) or ():
        op = getattr(r, "op", "")
        target = getattr(r, "target", None)
        if op in REDIRECT_WRITE_OPS and isinstance(target, str) and target:
            if op in (">&", "&>") and (target.isdigit() or target == "-"):
                continue
            if target not in _NOT_FILES:
                out.append((target, f"redirection `{op} {target}`"))
    return out


def command_writes(cmd: SimpleCommand, extra: dict | None = None) -> list:
    """Every ``Target`` (hooks/shell_writers.py) the simple command writes: its redirections and
    what its program writes (the writer table; ``extra``: ``[bash] writers``)."""
    out = [Target(p, how) for p, how in redirect_targets(cmd)]
    # the parsers load only for a program the table names (hooks/writer_table.py): not for ls, grep, pytest
    if cmd.words and ((extra and cmd.name in extra) or writes_files(cmd.name)):
        from swarmgate.hooks.shell_writers import targets
        out += [t for t in targets(cmd, extra) if t.path and t.path not in _NOT_FILES]
    found = getattr(cmd, "find", None)
    if found is not None and out:   # run by find -exec: `{}` is the files under find's start points
        from swarmgate.hooks.writers_find import placed_under_roots
        out = placed_under_roots(out, *found)
    return out


def command_write_targets(cmd: SimpleCommand) -> list:
    """[(path, how)] files a simple command writes, as written (not resolved)."""
    return [(t.path, t.how) for t in command_writes(cmd)]


def is_static(path: str) -> bool:
    """Whether ``path`` can be placed once the hook's known variables and the tilde are expanded."""
    from swarmgate.hooks.write_paths import expand_known, is_placeable
    return is_placeable(expand_known(path))


def resolve(path: str, cwd: str, repo: str, root: str = "") -> tuple[str, str | None]:
    """(absolute normalised path, path relative to the work root ``root`` when inside it, else to
    the repo, else None when outside both). ``root`` defaults to the repo (hooks/agent_worktree.py)."""
    from swarmgate import lean_path as posixpath

    from swarmgate.hooks.agent_worktree import relative
    from swarmgate.hooks.write_paths import expand_known

    base = cwd or root or repo
    path = expand_known(path, base)
    full = posixpath.normpath(path if path.startswith("/") else posixpath.join(base, path))
    return full, relative(full, root or repo, repo)


def shell_writes(analysis: Analysis, cwd: str) -> Iterator[tuple[SimpleCommand, str, str, str | None]]:
    """Yield (cmd, path, how, cwd_of_cmd) for every write in the analysed command.

    The directory a command runs in is the tree's (``cd DIR`` with a constant
    DIR is followed); when the tree could not tell (``cd "$X"``), it is None and
    relative targets cannot be placed.
    """
    for cmd in analysis.commands:
        here = getattr(cmd, "cwd", cwd) if hasattr(cmd, "cwd") else cwd
        for path, how in command_write_targets(cmd):
            yield cmd, path, how, here


class Placed:
    """One write of the command, placed: ``path`` and ``how`` as found, ``tree`` (a directory written
    into), ``here`` (the directory it runs in, None when unknown), ``full`` (the lexical absolute path,
    None when it cannot be placed) and ``names`` (every absolute path it reaches: ``full``, through
    links made earlier in the command and through symbolic links on disk)."""
    __slots__ = ("cmd", "path", "how", "tree", "here", "full", "names")

    def __init__(self, cmd, path, how, tree, here, full, names) -> None:
        self.cmd, self.path, self.how, self.tree, self.here, self.full, self.names = \
            cmd, path, how, tree, here, full, names

    def __repr__(self) -> str:
        return f"Placed({self.path!r}, full={self.full!r}, tree={self.tree})"


def place_writes(analysis: Analysis, cwd: str, extra: dict | None = None) -> list:
    """Every write of the analysed command as ``Placed``, in order; links made by ``ln``/``cp -l/-s``
    earlier in the command are followed for the writes after them (hooks/write_paths.py)."""
    links = None
    out: list = []
    prev = None
    for cmd in analysis.commands:
        here = getattr(cmd, "cwd", cwd) if hasattr(cmd, "cwd") else cwd
        found = command_writes(cmd, extra)
        if found and links is None:   # write_paths only for a command that writes
            from swarmgate.hooks.write_paths import Links, absolute, candidates, expand_known, is_placeable
            links = Links()
        for t in found:
            p = expand_known(t.path, here, prev)
            full = absolute(p, here) if is_placeable(p) else None
            names = candidates(full, links) if full else []
            out.append(Placed(cmd, t.path, t.how, t.tree, here, full, names))
            if t.link is not None and full:
                source, symbolic = t.link
                src = expand_known(source, here, prev)
                if is_placeable(src):
                    from swarmgate import lean_path as posixpath
                    # a symbolic link's relative target is relative to the link's directory
                    target = absolute(src, posixpath.dirname(full) if symbolic else here)
                    if target:
                        links.add(full, target)
        if cmd.name in ("cd", "pushd", "popd"):
            prev = here
    return out


def writes_of(event: HookEvent, analysis: Analysis) -> list:
    """[(cmd, path, how, cwd_of_cmd)] every write of the event's analysed command, built once per event."""
    return [(w.cmd, w.path, w.how, w.here) for w in placed_of(event, analysis)]


def placed_of(event: HookEvent, analysis: Analysis, config=None) -> list:
    """Every write of the event's analysed command, placed (``place_writes``), built once per event."""
    cwd = event.cwd or event.repo
    extra = None
    specs = config["bash"].get("writers") if config is not None else None
    if specs:
        from swarmgate.hooks.shell_writers import compile_config
        extra = compile_config(specs)
    return event.derived("bash.placed-writes", lambda: place_writes(analysis, cwd, extra))
