"""The writers' parsers for archives (hooks/shell_writers.py dispatches here): tar, unzip, 7z and
cpio (with -x the members of a readable local archive land under the directory, else the directory is
a tree target; creating one writes the archive file) and the compressors (gzip FILE replaces FILE
with FILE.gz; the suffixes are hooks/writer_table.py's ``COMPRESS_SUFFIX``).

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writers import in_dir, parse_args
from swarmgate.hooks.writer_table import Target
from swarmgate.hooks.writer_table import COMPRESS_SUFFIX

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


_TAR_VALUES = {"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b",
               "--blocking-factor", "-H", "--format", "-I", "--use-compress-program", "--exclude", "-K",
               "--starting-file", "-N", "--newer", "--after-date", "-V", "--label", "-g",
               "--listed-incremental", "--owner", "--group", "--mode", "--mtime", "--strip-components",
               "--transform", "--xform", "-L", "--tape-length", "-F", "--info-script", "--new-volume-script",
               "--suffix", "--backup", "--to-command", "--checkpoint-action", "--rsh-command", "--rmt-command",
               "--volno-file", "--record-size", "--sort", "--occurrence", "--newer-mtime", "--hole-detection"}


def tar(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """tar: with -x the members land under -C DIR (the archive is listed when it can be read, else
    the directory is a tree target); with -c/-r/-u the archive file is written."""
    args = list(args)
    if args and not args[0].startswith("-"):      # old style: tar xvf FILE ...
        letters, rest = args[0], args[1:]
        args = []
        for ch in letters:
            args.append("-" + ch)
            if ch in "fCTXbHIKNVgLF" and rest:
                args.append(rest.pop(0))
        args += rest
    opts, ops = parse_args(args, _TAR_VALUES)
    names = {o for o, _ in opts}
    archive = next((v for o, v in opts if o in ("-f", "--file") and v), None)
    if names & {"-x", "--extract", "--get"}:
        if names & {"-O", "--to-stdout", "--to-command"}:
            return []
        d = "."
        for o, v in opts:
            if o in ("-C", "--directory") and v:
                d = in_dir(d, v) if d != "." else v
        strip = next((int(v) for o, v in opts if o == "--strip-components" and v and v.isdigit()), 0)
        members = _archive_members(cmd, archive, "tar") if archive and archive != "-" else None
        if members is None or names & {"--transform", "--xform"}:
            return [Target(d, f"`tar -x` into {d} (members not listed)", tree=True)]
        out = []
        for m in members:
            parts = m.lstrip("/").split("/")[strip:]
            if parts and parts != [""]:
                p = "/".join(parts)
                out.append(Target(in_dir(d, p), f"`tar -x` of {m} into {d}"))
        return out
    if names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate",
                "--delete"}:
        return [Target(archive, f"`tar` writes the archive {archive}")] if archive and archive != "-" else []
    return []


def _archive_members(cmd: SimpleCommand, archive: str, kind: str, limit: int = 64 << 20) -> list[str] | None:
    """The member names of a local archive that exists now (None when it cannot be listed: missing,
    made later in the command, too large, or unreadable)."""
    from swarmgate import lean_os as os
    base = getattr(cmd, "cwd", None)
    if not archive or "$" in archive or (not archive.startswith("/") and not base):
        return None
    full = archive if archive.startswith("/") else os.path.join(base, archive)
    try:
        st = os.stat(full)
    except OSError:
        return None
    if st.st_size > limit or not os.path.isfile(full):
        return None
    try:
        if kind == "zip":
            import zipfile
            with zipfile.ZipFile(full) as z:
                return z.namelist()
        import tarfile
        with tarfile.open(full) as t:
            return t.getnames()
    except Exception:  # noqa: BLE001 - any unreadable archive is "cannot be listed"
        return None


def unzip(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    opts, ops = parse_args(args, {"-d", "-x", "-P", "-O", "-I"})
    names = {o for o, _ in opts}
    if names & {"-l", "-t", "-c", "-p", "-v", "-Z", "-z"}:
        return []
    d = next((v for o, v in opts if o == "-d" and v), ".")
    if not ops:
        return []
    members = _archive_members(cmd, ops[0], "zip")
    if members is None:
        return [Target(d, f"`unzip` into {d} (members not listed)", tree=True)]
    junk = "-j" in names
    wanted = ops[1:]
    out = []
    for m in members:
        if wanted and m not in wanted:
            continue
        p = m.rsplit("/", 1)[-1] if junk else m
        if p:
            out.append(Target(in_dir(d, p), f"`unzip` of {m} into {d}"))
    return out


def sevenzip(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    if not args:
        return []
    verb, rest = args[0], args[1:]
    ops = [a for a in rest if not a.startswith("-")]
    if verb in ("x", "e"):
        d = next((a[2:] for a in rest if a.startswith("-o") and len(a) > 2), ".")
        return [Target(d, f"`7z {verb}` into {d}", tree=True)]
    if verb in ("a", "u", "d", "rn") and ops:
        return [Target(ops[0], f"`7z {verb}` writes the archive {ops[0]}")]
    return []


def cpio(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    opts, ops = parse_args(args, {"-D", "--directory", "-F", "--file", "-O", "-I", "-E", "--pattern-file",
                                  "-H", "--format", "-R", "--owner", "-M", "--message"})
    names = {o for o, _ in opts}
    d = next((v for o, v in opts if o in ("-D", "--directory") and v), ".")
    if names & {"-i", "--extract"} and not names & {"-t", "--list"}:
        return [Target(d, f"`cpio -i` into {d}", tree=True)]
    if names & {"-p", "--pass-through"} and ops:
        return [Target(ops[-1], f"`cpio -p` into {ops[-1]}", tree=True)]
    if names & {"-o", "--create"}:
        return [Target(v, f"`cpio -o` writes {v}") for o, v in opts if o in ("-O", "-F", "--file") and v]
    return []


def compress(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
    opts, ops = parse_args(args, {"-S", "--suffix", "-o", "--output", "-T", "--threads", "-b"})
    names = {o for o, _ in opts}
    if names & {"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"}:
        return []
    out = [Target(v, f"`{name} -o {v}`") for o, v in opts if o in ("-o", "--output") and v]
    if out:
        return out
    sfx = next((v for o, v in opts if o in ("-S", "--suffix") and v), COMPRESS_SUFFIX[name])
    decompress = name.startswith("un") or name == "gunzip" or names & {"-d", "--decompress", "--uncompress"}
    recursive = bool(names & {"-r", "--recursive"})
    for p in ops:
        if p == "-":
            continue
        other = p[:-len(sfx)] if decompress and p.endswith(sfx) else (p if decompress else p + sfx)
        out.append(Target(p, f"`{name} {p}`", tree=recursive))
        if other != p:
            out.append(Target(other, f"`{name} {p}` writes {other}", tree=recursive))
    return out
