"""The writers' parser for cp, mv, install, ln and rsync (hooks/shell_writers.py dispatches here): the
destination (DEST/NAME when DEST is an existing directory, ends in ``/``, takes several sources or
comes from ``-t DIR``), mv's sources (moved away), the links ``ln`` and ``cp -l/-s`` make.

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writers import isdir_at, parse_args
from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


_COPY_VALUES = ("-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "-Z", "--context")


_RSYNC_VALUES = ("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from", "--exclude-from",
                 "--include-from", "--log-file", "--chmod", "--chown", "--rsync-path", "--password-file",
                 "--port", "--timeout", "-T", "--temp-dir", "--partial-dir", "--backup-dir", "--suffix",
                 "--compare-dest", "--copy-dest", "--link-dest", "-B", "--block-size", "--bwlimit", "--info",
                 "--debug", "--out-format", "--max-size", "--min-size", "--usermap", "--groupmap", "--iconv",
                 "--modify-window", "--sockopts", "--outbuf", "--stop-after", "--stop-at", "--checksum-choice",
                 "--compress-choice", "--compress-level", "--skip-compress", "--max-delete", "--protocol")


def copy(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
    """cp/mv/install/ln/rsync: the destination (a file, or DEST/basename(SOURCE) for an existing
    directory or ``-t DIR``), mv's sources (moved away), links recorded for ``ln`` and ``cp -l/-s``."""
    from swarmgate import lean_path as posixpath

    values = set(_RSYNC_VALUES) if name == "rsync" else set(_COPY_VALUES) | {"-t", "--target-directory"}
    if name == "ln":
        values = {"-S", "--suffix", "-t", "--target-directory"}
    opts, ops = parse_args(args, values)
    names = {o for o, _ in opts}
    if name == "install" and names & {"-d", "--directory"}:
        return []   # install -d creates directories, like mkdir
    if name == "rsync" and names & {"-n", "--dry-run", "--list-only"}:
        return []
    tdir = next((v for o, v in opts if o in ("-t", "--target-directory") and v), None)
    if tdir is None and name != "rsync":
        tdir = next((o[2:] for o, _ in opts if o.startswith("-t") and len(o) > 2 and not o.startswith("--")), None)
    if tdir is not None:
        dest, sources, into = tdir, ops, True
    else:
        if len(ops) < 2 and not (name == "ln" and ops):
            return []
        if name == "ln" and len(ops) == 1:
            dest, sources, into = ".", ops, True
        else:
            dest, sources = ops[-1], ops[:-1]
            into = dest.endswith("/") or isdir_at(cmd, dest) or len(sources) > 1
            if "-T" in names or "--no-target-directory" in names:
                into = False
    if name == "rsync" and ":" in dest.split("/", 1)[0]:
        return []   # remote destination
    recursive = bool(names & {"-r", "-R", "-a", "--recursive", "--archive"}) or name == "rsync"
    link = name == "ln" or bool(names & {"-l", "--link", "-s", "--symbolic-link"}) and name == "cp"
    out: list[Target] = []
    for s in sources:
        if name == "rsync" and ":" in s.split("/", 1)[0]:
            base = posixpath.basename(s.rstrip("/")) if not s.endswith("/") else ""
        else:
            base = "" if s.endswith(("/", "/.")) or s in (".", "..") else posixpath.basename(s.rstrip("/"))
        target = posixpath.join(dest, base) if into and base else dest
        tree = recursive and (not base or isdir_at(cmd, s) or name == "rsync")
        t = Target(target, f"`{name}` destination {target}", tree=tree)
        if link:
            t.link = (s, name == "ln" and bool(names & {"-s", "--symbolic"}) or bool(names & {"-s", "--symbolic-link"}))
        out.append(t)
        if name == "mv" or (name == "rsync" and "--remove-source-files" in names):
            out.append(Target(s, f"`{name}` moves {s} away", tree=isdir_at(cmd, s)))
    if not sources and into:
        out.append(Target(dest, f"`{name}` into {dest}", tree=True))
    return out
