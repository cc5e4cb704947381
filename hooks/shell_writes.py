"""The files a shell command writes, read from the parsed command tree (Bash and Monitor).
Shared by W01 (hooks/write_scope.py) and G01's shell side (hooks/shell_protection_guards.py).

The shell writes recognised (``command_write_targets``):

- redirections `>`, `>>`, `>|`, `&>`, `&>>`, `<>` (`>&2`, `2>&1` are not files);
- `tee [-a] FILES`;
- `cp`, `mv`, `install`, `ln`, `rsync` destinations (last operand, or `-t DIR`);
- `sed -i` / `perl -i` on FILES;
- `dd of=FILE`; `truncate FILES`; `rm FILES`; `touch FILES`;
- `apply_patch` (Codex CLI's patch tool, also on the agent's PATH and intercepted by Codex in
  shell commands) on every path of the patch in its here-document, here-string or argument;
- `git apply`/`patch` are not followed (they write where the patch says), nor `apply_patch`
  reading its patch from a pipe or a file.

Decisions (documented in docs/bash-guards.md):
- `mkdir` is not a write: an empty directory changes no file and git does not
  track it; what is later written into it is checked.
- Paths are resolved against the command's working directory (the payload's
  `cwd`, followed through `cd DIR` earlier in the same command).
- A target that is a variable (`> "$OUT"`) or starts with `~` cannot be placed
  statically (``is_static``).

Light at import: no `re`, `fnmatch`, `pathlib` until a check runs.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Iterator

    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis, SimpleCommand


REDIRECT_WRITE_OPS = (">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|")
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-")


def _operands(args: list[str], opts_with_value: tuple[str, ...] = ()) -> list:
    """Non-option arguments (after `--`, everything is an operand)."""
    out = []
    skip = False
    dashdash = False
    for a in args:
        if skip:
            skip = False
            continue
        if dashdash:
            out.append(a)
            continue
        if a == "--":
            dashdash = True
            continue
        if a.startswith("-") and a != "-":
            if a in opts_with_value:
                skip = True
            continue
        out.append(a)
    return out


def _dest_of_copy(name: str, args: list[str]) -> list:
    """Destination of cp/mv/install/ln/rsync: `-t DIR`, `--target-directory=DIR`, else the last operand."""
    args = list(args)
    for i, a in enumerate(args):
        if a in ("-t",) and i + 1 < len(args):
            return [args[i + 1]]
        if a.startswith("--target-directory="):
            return [a.split("=", 1)[1]]
        if a.startswith("-t") and len(a) > 2 and name != "rsync" and not a.startswith("--"):
            return [a[2:]]
    with_value = {"cp": ("-S", "--suffix"), "mv": ("-S", "--suffix"),
                  "install": ("-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"),
                  "ln": ("-S", "--suffix"),
                  "rsync": ("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from",
                            "--exclude-from", "--include-from", "--log-file", "--chmod", "--chown",
                            "--rsync-path", "--password-file", "--port", "--timeout", "-T",
                            "--temp-dir", "--partial-dir", "--backup-dir", "--suffix")}.get(name, ())
    ops = _operands(args, with_value)
    if name == "install" and ("-d" in args or "--directory" in args):
        return []   # install -d creates directories, like mkdir
    if len(ops) < 2 and not (name == "ln" and ops):
        return []
    dest = ops[-1]
    if name == "rsync" and ":" in dest.split("/", 1)[0]:
        return []   # remote destination
    return [dest]


def sed_inplace_files(args: list[str]) -> list:
    """The files ``sed -i ...`` edits in place (none without -i)."""
    if not any(a == "-i" or (a.startswith("-i") and not a.startswith("--")) or a.startswith("--in-place")
               or (a.startswith("-") and not a.startswith("--") and "i" in a[1:] and "e" not in a[1:])
               for a in args):
        return []
    has_script_opt = any(a in ("-e", "-f", "--expression", "--file") or a.startswith(("--expression=", "--file="))
                         for a in args)
    ops = _operands(args, ("-e", "-f", "--expression", "--file", "-l", "--line-length"))
    return ops if has_script_opt else ops[1:]


def perl_inplace_files(args: list[str]) -> list:
    """The files ``perl -i ...`` edits in place (none without -i). perl's switches cluster
    (``-pi.bak``, ``-pe EXPR``, ``-i -pe EXPR``): ``e``/``E`` take the next word (the
    program), ``i`` takes the rest of its cluster (the backup suffix), ``M``/``I``/``m``
    the rest or the next word; without -e the first operand is the program file."""
    inplace = False
    has_e = False
    ops: list = []
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "--":
            ops.extend(args[i + 1:])
            break
        if not a.startswith("-") or a == "-":
            ops.append(a)
            i += 1
            continue
        if a.startswith("--"):
            i += 1
            continue
        j, take_next = 1, False
        while j < len(a):
            c = a[j]
            if c == "i":
                inplace = True
                break                     # the rest is the backup suffix
            if c in "eE":
                has_e = True
                take_next = j == len(a) - 1
                break                     # -eCODE or -e CODE
            if c in "MmIdDxCl0":
                if c in "MmI" and j == len(a) - 1:
                    take_next = True
                break                     # the rest is this switch's value
            j += 1
        i += 2 if take_next else 1
    if not inplace:
        return []
    return ops if has_e else ops[1:]


def _patch_targets(cmd: SimpleCommand, args: list[str]) -> list[str]:
    """The paths an apply_patch command writes: from the patch text it is given in the command."""
    from swarmgate.codex_protocol import patch_paths

    texts = [a for a in args if "*** " in a]
    texts += [r.heredoc for r in getattr(cmd, "redirects", ()) or ()
              if getattr(r, "op", "") in ("<<", "<<-", "<<<") and isinstance(getattr(r, "heredoc", None), str)]
    return [p for text in texts for p in patch_paths(text)]


def command_write_targets(cmd: SimpleCommand) -> list:
    """[(path, how)] files a simple command writes, as written (not resolved)."""
    out = []
    for r in getattr(cmd, "redirects", ()) or ():
        op = getattr(r, "op", "")
        target = getattr(r, "target", None)
        if op in REDIRECT_WRITE_OPS and isinstance(target, str) and target:
            if op in (">&",) and (target.isdigit() or target == "-"):
                continue
            if target.isdigit() and op in (">&", "&>"):
                continue
            out.append((target, f"redirection `{op} {target}`"))
    words = cmd.words
    if not words:
        return out
    name = cmd.name
    args = list(cmd.args)
    if name == "tee":
        for p in _operands(args):
            out.append((p, f"`tee {p}`"))
    elif name in ("cp", "mv", "install", "ln", "rsync"):
        for p in _dest_of_copy(name, args):
            out.append((p, f"`{name}` destination {p}"))
    elif name == "sed":
        for p in sed_inplace_files(args):
            out.append((p, f"`sed -i` on {p}"))
    elif name == "perl":
        for p in perl_inplace_files(args):
            out.append((p, f"`perl -i` on {p}"))
    elif name == "dd":
        for a in args:
            if a.startswith("of="):
                out.append((a[3:], f"`dd {a}`"))
    elif name == "truncate":
        for p in _operands(args, ("-s", "--size", "-r", "--reference")):
            out.append((p, f"`truncate {p}`"))
    elif name in ("apply_patch", "applypatch"):
        for p in _patch_targets(cmd, args):
            out.append((p, f"`{name}` on {p}"))
    elif name in ("rm", "touch", "shred", "unlink"):
        opts = ("-d", "--date", "-r", "--reference", "-t") if name == "touch" else \
            (("-n", "--iterations", "-s", "--size", "--random-source") if name == "shred" else ())
        for p in _operands(args, opts):
            out.append((p, f"`{name} {p}`"))
    return [(p, how) for p, how in out if p not in _NOT_FILES]


def is_static(path: str) -> bool:
    return bool(path) and not path.startswith(("$", "~")) and "$(" not in path and "`" not in path


def resolve(path: str, cwd: str, repo: str, root: str = "") -> tuple[str, str | None]:
    """(absolute normalised path, path relative to the work root ``root`` when inside it, else to
    the repo, else None when outside both). ``root`` defaults to the repo (hooks/agent_worktree.py)."""
    import posixpath

    from swarmgate.hooks.agent_worktree import relative

    base = cwd or root or repo
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


def writes_of(event: HookEvent, analysis: Analysis) -> list:
    """[(cmd, path, how, cwd_of_cmd)] every write of the event's analysed command, built once per event."""
    cwd = event.cwd or event.repo
    return event.derived("bash.writes", lambda: list(shell_writes(analysis, cwd)))
