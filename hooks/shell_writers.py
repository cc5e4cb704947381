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
semantics no entry can say have a function (``SPECIAL``, ``_PARSERS`` here): git, tar, unzip, 7z,
cpio, cp/mv/install/ln/rsync (destination directories, sources moved away, links recorded), patch and
``git apply``/``am`` (the paths the patch names, read from the patch file or here-document),
curl and wget (the default output name), sed/perl/awk in place, dd, ex/vim scripts, sqlite3,
find -delete, the compressors, pip/npm into a prefix, mount --bind, apply_patch.

Parsing only: the guards judge the targets. Light at import: no ``re``.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writes import Target
from swarmgate.hooks.writer_table import COMPRESS_SUFFIX, TABLE, parser_of

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
_COPY_VALUES = ("-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "-Z", "--context")
_RSYNC_VALUES = ("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from", "--exclude-from",
                 "--include-from", "--log-file", "--chmod", "--chown", "--rsync-path", "--password-file",
                 "--port", "--timeout", "-T", "--temp-dir", "--partial-dir", "--backup-dir", "--suffix",
                 "--compare-dest", "--copy-dest", "--link-dest", "-B", "--block-size", "--bwlimit", "--info",
                 "--debug", "--out-format", "--max-size", "--min-size", "--usermap", "--groupmap", "--iconv",
                 "--modify-window", "--sockopts", "--outbuf", "--stop-after", "--stop-at", "--checksum-choice",
                 "--compress-choice", "--compress-level", "--skip-compress", "--max-delete", "--protocol")

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


def _git(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """git's writing subcommands: the paths they write in the work tree."""
    from swarmgate.hooks.git_args import c_dir, git_subcommand

    sub, rest = git_subcommand(args)
    if sub is None:
        return []
    base = c_dir(args)
    out = _git_sub(sub, rest, cmd)
    if not out:
        return out
    from swarmgate import lean_path as posixpath
    here = getattr(cmd, "cwd", None)
    where = posixpath.join(here, base) if here else (base if base.startswith("/") else None)
    top = None
    if where:
        from swarmgate.hooks.agent_worktree import checkout_of
        top = checkout_of(posixpath.normpath(where))
    for t in out:
        if t.path.startswith(_TOP):
            rest_p = t.path[len(_TOP):].lstrip("/")
            t.path = posixpath.join(top, rest_p) if top else posixpath.join(base or ".", rest_p)
        elif base:
            t.path = posixpath.join(base, t.path)
    return out


_TOP = "\x00top"   # the repository's top level (git apply/am paths, `:/` pathspecs)


def _git_paths(ops: list[str], how: str, cmd: SimpleCommand | None = None) -> list[Target]:
    out = []
    for p in ops:
        if p.startswith((":/", ":(top)")):
            tail = p.split(")", 1)[1] if p.startswith(":(") else p[2:]
            out.append(Target(_TOP + "/" + tail if tail else _TOP, how, tree=True))
            continue
        if p.startswith(":"):
            continue   # other pathspec magic: not placed
        wild = any(c in p for c in "*?[")
        out.append(Target(p, how, tree=wild or p in (".", "./") or p.endswith("/")
                          or (cmd is not None and _isdir_at(cmd, p))))
    return out


def _git_sub(sub: str, rest: list[str], cmd: SimpleCommand) -> list[Target]:
    if sub == "checkout":
        opts, ops = parse_args(rest, {"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"})
        names = {o for o, _ in opts}
        if names & {"-b", "-B", "--orphan"} or "-p" in names or "--patch" in names:
            return []
        if "--" in rest:
            after = rest[rest.index("--") + 1:]
            return _git_paths(after, f"`git checkout -- {' '.join(after)}`", cmd)
        if len(ops) == 1 and not _on_disk(cmd, ops[0]):
            return []   # a branch switch: which files change is git's knowledge (docs/threat-model.md)
        paths = [p for p in ops if _on_disk(cmd, p)] if len(ops) > 1 and not _on_disk(cmd, ops[0]) else \
            [p for p in ops if _on_disk(cmd, p) or p == "."]
        return _git_paths(paths, f"`git checkout {' '.join(ops)}`", cmd)
    if sub == "restore":
        opts, ops = parse_args(rest, {"-s", "--source", "--pathspec-from-file", "--conflict"})
        names = {o for o, _ in opts}
        if ("-S" in names or "--staged" in names) and not ("-W" in names or "--worktree" in names):
            return []
        return _git_paths(ops, f"`git restore {' '.join(ops)}`", cmd)
    if sub == "rm":
        opts, ops = parse_args(rest, {"--pathspec-from-file"})
        names = {o for o, _ in opts}
        if "--cached" in names or "-n" in names or "--dry-run" in names:
            return []
        return _git_paths(ops, f"`git rm {' '.join(ops)}`", cmd)
    if sub == "mv":
        opts, ops = parse_args(rest, set())
        if "-n" in {o for o, _ in opts} or len(ops) < 2:
            return []
        return _git_paths(ops, f"`git mv {' '.join(ops)}`", cmd)
    if sub == "clean":
        opts, ops = parse_args(rest, {"-e", "--exclude"})
        names = {o for o, _ in opts}
        if "-n" in names or "--dry-run" in names or "-i" in names or "--interactive" in names:
            return []
        if not ops:
            return [Target(".", "`git clean`", tree=True)]
        return _git_paths(ops, f"`git clean {' '.join(ops)}`", cmd)
    if sub in ("apply", "am"):
        opts, ops = parse_args(rest, {"-p", "--directory", "--exclude", "--include", "-C", "--whitespace",
                                      "--build-fake-ancestor", "--patch-format", "--resolvemsg"})
        names = {o for o, _ in opts}
        if names & {"--cached", "--stat", "--numstat", "--summary", "--check", "--abort", "--skip", "--quit",
                    "--show-current-patch", "--continue"} and not names & {"--index", "--apply"}:
            return []
        strip = next((int(v) for o, v in opts if o == "-p" and v and v.isdigit()), 1)
        prefix = next((v for o, v in opts if o == "--directory" and v), "")
        texts = _patch_texts(cmd, ops)
        out = []
        for text in texts:
            for p in patch_file_paths(text, strip):
                out.append(Target((_TOP + "/" + (prefix.rstrip("/") + "/" if prefix else "") + p),
                                  f"`git {sub}` of a patch that writes {p}"))
        return out
    if sub == "worktree" and rest[:1] == ["add"]:
        opts, ops = parse_args(rest[1:], {"-b", "-B", "--reason"})
        return [Target(ops[0], f"`git worktree add {ops[0]}`", tree=True)] if ops else []
    if sub == "clone":
        opts, ops = parse_args(rest, {"-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference",
                                      "--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude",
                                      "-c", "--config", "-j", "--jobs", "--template", "--filter",
                                      "--reference-if-able", "--server-option", "--bundle-uri"})
        if len(ops) >= 2:
            return [Target(ops[1], f"`git clone` into {ops[1]}", tree=True)]
        if ops:
            name = ops[0].rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
            name = name[:-4] if name.endswith(".git") else name
            return [Target(name, f"`git clone` into {name}", tree=True)] if name else []
        return []
    if sub == "config":
        opts, _ops = parse_args(rest, {"-f", "--file", "--blob", "--type", "--default", "--comment"})
        names = {o for o, _ in opts}
        if names & {"-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch"}:
            return []
        return [Target(v, f"`git config --file {v}`") for o, v in opts if o in ("-f", "--file") and v]
    if sub == "archive":
        opts, _ops = parse_args(rest, {"-o", "--output", "--prefix", "--format", "--remote", "--exec"})
        return [Target(v, f"`git archive --output {v}`") for o, v in opts if o in ("-o", "--output") and v]
    if sub == "format-patch":
        opts, _ops = parse_args(rest, {"-o", "--output-directory", "--subject-prefix", "--suffix", "-v",
                                       "--reroll-count", "--in-reply-to", "--to", "--cc", "--from"})
        return [Target(v, f"`git format-patch -o {v}`", tree=True) for o, v in opts
                if o in ("-o", "--output-directory") and v]
    return []


def _on_disk(cmd: SimpleCommand, p: str) -> bool:
    from swarmgate import lean_os as os
    if p in (".", "./") or p.startswith(":"):
        return True
    base = getattr(cmd, "cwd", None) or ""
    full = p if p.startswith("/") or not base else os.path.join(base, p)
    return os.path.lexists(full) or any(c in p for c in "*?[")


def _stdin_text(cmd: SimpleCommand) -> str | None:
    """A here-document/here-string body, or the text of a readable `< FILE` (bounded)."""
    for r in getattr(cmd, "redirects", ()) or ():
        op = getattr(r, "op", "")
        if op in ("<<", "<<-") and isinstance(getattr(r, "heredoc", None), str):
            return r.heredoc
        if op == "<<<":
            return r.target
        if op == "<" and getattr(r, "fd", None) in (None, 0):
            return _read_file(cmd, r.target)
    return None


def _read_file(cmd: SimpleCommand, path: str, limit: int = 1 << 20) -> str | None:
    from swarmgate import lean_os as os
    base = getattr(cmd, "cwd", None)
    if not path or "$" in path or (not path.startswith("/") and not base):
        return None
    full = path if path.startswith("/") else os.path.join(base, path)
    try:
        from swarmgate.bounded_read import read_text
        return read_text(full, limit)
    except (OSError, ValueError):
        return None


def _patch_texts(cmd: SimpleCommand, files: list[str]) -> list[str]:
    texts = [t for t in (_read_file(cmd, f) for f in files if f != "-") if t]
    if not files or "-" in files:
        t = _stdin_text(cmd)
        if t:
            texts.append(t)
    return texts


def patch_file_paths(text: str, strip: int = 1) -> list[str]:
    """The paths a unified/git diff writes (new and old names, renames, deletions), ``strip``
    leading components removed (``-pN``); /dev/null left out."""
    out: list[str] = []
    for line in text.splitlines():
        path = None
        if line.startswith(("+++ ", "--- ")):
            path = line[4:].split("\t", 1)[0].strip()
            if path.startswith('"') and path.endswith('"'):
                path = path[1:-1]
            if path == "/dev/null":
                continue
            parts = path.split("/")
            path = "/".join(parts[strip:]) if strip < len(parts) else parts[-1]
        elif line.startswith(("rename from ", "rename to ", "copy to ")):
            path = line.split(" ", 2)[2].strip()
        elif line.startswith("diff --git "):
            bits = line[11:].split(" ")
            for b in bits:
                if "/" in b:
                    parts = b.split("/")
                    q = "/".join(parts[strip:]) if strip < len(parts) else parts[-1]
                    if q and q not in out:
                        out.append(q)
            continue
        if path and path not in out:
            out.append(path)
    return out


def _patch(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    opts, ops = parse_args(args, {"-p", "--strip", "-i", "--input", "-o", "--output", "-d", "--directory",
                                  "-D", "--ifdef", "-B", "--prefix", "-F", "--fuzz", "-r", "--reject-file",
                                  "-V", "--version-control", "-Y", "--basename-prefix", "-z", "--suffix",
                                  "-g", "--get", "--quoting-style"})
    names = {o for o, _ in opts}
    if names & {"--dry-run", "-C", "--check"}:
        return []
    d = next((v for o, v in opts if o in ("-d", "--directory") and v), "")
    out_file = [v for o, v in opts if o in ("-o", "--output") and v]
    if out_file:
        return [Target(v, f"`patch -o {v}`") for v in out_file]
    if ops:
        return [Target(_join(d, ops[0]), f"`patch {ops[0]}`")]
    strip_v = next((v for o, v in opts if o in ("-p", "--strip") and v), None)
    inputs = [v for o, v in opts if o in ("-i", "--input") and v]
    texts = [t for t in (_read_file(cmd, f) for f in inputs) if t] if inputs else \
        [t for t in (_stdin_text(cmd),) if t]
    out = []
    for text in texts:
        strips = [int(strip_v)] if strip_v and strip_v.isdigit() else [0, 1]
        for s in strips:
            for p in patch_file_paths(text, s):
                t = Target(_join(d, p), f"`patch` of a patch that writes {p}")
                if all(x.path != t.path for x in out):
                    out.append(t)
    if not texts:
        return [Target(d or ".", "`patch` with a patch it reads at run time", tree=True)]
    return out


def _join(base: str, p: str) -> str:
    from swarmgate import lean_path as posixpath
    return posixpath.join(base, p) if base else p


def _copy(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
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
            into = dest.endswith("/") or _isdir_at(cmd, dest) or len(sources) > 1
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
        tree = recursive and (not base or _isdir_at(cmd, s) or name == "rsync")
        t = Target(target, f"`{name}` destination {target}", tree=tree)
        if link:
            t.link = (s, name == "ln" and bool(names & {"-s", "--symbolic"}) or bool(names & {"-s", "--symbolic-link"}))
        out.append(t)
        if name == "mv" or (name == "rsync" and "--remove-source-files" in names):
            out.append(Target(s, f"`{name}` moves {s} away", tree=_isdir_at(cmd, s)))
    if not sources and into:
        out.append(Target(dest, f"`{name}` into {dest}", tree=True))
    return out


def _isdir_at(cmd: SimpleCommand, p: str) -> bool:
    from swarmgate import lean_os as os
    base = getattr(cmd, "cwd", None)
    if not p.startswith("/") and not base:
        return False
    full = p if p.startswith("/") else os.path.join(base, p)
    if full.startswith("~"):
        from swarmgate.hooks.write_paths import expand_tilde
        full = expand_tilde(full)
    return os.path.isdir(full)


_TAR_VALUES = {"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b",
               "--blocking-factor", "-H", "--format", "-I", "--use-compress-program", "--exclude", "-K",
               "--starting-file", "-N", "--newer", "--after-date", "-V", "--label", "-g",
               "--listed-incremental", "--owner", "--group", "--mode", "--mtime", "--strip-components",
               "--transform", "--xform", "-L", "--tape-length", "-F", "--info-script", "--new-volume-script",
               "--suffix", "--backup", "--to-command", "--checkpoint-action", "--rsh-command", "--rmt-command",
               "--volno-file", "--record-size", "--sort", "--occurrence", "--newer-mtime", "--hole-detection"}


def _tar(cmd: SimpleCommand, args: list[str]) -> list[Target]:
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
                d = _join(d, v) if d != "." else v
        strip = next((int(v) for o, v in opts if o == "--strip-components" and v and v.isdigit()), 0)
        members = _archive_members(cmd, archive, "tar") if archive and archive != "-" else None
        if members is None or names & {"--transform", "--xform"}:
            return [Target(d, f"`tar -x` into {d} (members not listed)", tree=True)]
        out = []
        for m in members:
            parts = m.lstrip("/").split("/")[strip:]
            if parts and parts != [""]:
                p = "/".join(parts)
                out.append(Target(_join(d, p), f"`tar -x` of {m} into {d}"))
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


def _unzip(cmd: SimpleCommand, args: list[str]) -> list[Target]:
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
            out.append(Target(_join(d, p), f"`unzip` of {m} into {d}"))
    return out


def _sevenzip(cmd: SimpleCommand, args: list[str]) -> list[Target]:
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


def _cpio(cmd: SimpleCommand, args: list[str]) -> list[Target]:
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


def _url_name(url: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0]
    if "://" in path:
        path = path.split("://", 1)[1]
        path = path.split("/", 1)[1] if "/" in path else ""
    return path.rstrip("/").rsplit("/", 1)[-1] if path.strip("/") else ""


def _curl(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    values = {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--output-dir", "--trace",
              "--trace-ascii", "--stderr", "--libcurl", "-K", "--config", "-d", "--data", "--data-binary",
              "--data-raw", "--data-urlencode", "-H", "--header", "-X", "--request", "-u", "--user", "-A",
              "--user-agent", "-e", "--referer", "-b", "--cookie", "-F", "--form", "-x", "--proxy", "--cert",
              "--key", "--cacert", "--resolve", "--connect-to", "-m", "--max-time", "--connect-timeout",
              "-w", "--write-out", "-T", "--upload-file", "--retry", "-r", "--range", "-Y", "-y", "-z",
              "--time-cond", "--limit-rate", "--url", "-E", "--interface", "--retry-delay", "--retry-max-time"}
    opts, ops = parse_args(args, values)
    names = {o for o, _ in opts}
    odir = next((v for o, v in opts if o == "--output-dir" and v), "")
    out = [Target(_join(odir, v), f"`curl {o} {v}`") for o, v in opts
           if o in ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
                    "--stderr", "--libcurl") and v and v != "-"]
    urls = ops + [v for o, v in opts if o == "--url" and v]
    if names & {"-O", "--remote-name", "--remote-name-all"}:
        for u in urls:
            n = _url_name(u)
            if n:
                out.append(Target(_join(odir, n), f"`curl -O {u}` writes {n}"))
    return out


def _wget(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    values = {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
              "--directory-prefix", "-i", "--input-file", "-t", "--tries", "-T", "--timeout", "-w", "--wait",
              "-U", "--user-agent", "--user", "--password", "--header", "-e", "--execute", "-l", "--level",
              "--limit-rate", "-Q", "--quota", "-B", "--base", "--post-data", "--post-file", "--load-cookies",
              "--save-cookies", "--referer", "--accept", "-A", "-R", "--reject", "-D", "--domains",
              "--exclude-domains", "-I", "-X", "--cut-dirs", "--ca-certificate", "--certificate",
              "--private-key", "--bind-address"}
    opts, ops = parse_args(args, values)
    names = {o for o, _ in opts}
    if names & {"--spider"}:
        return []
    d = next((v for o, v in opts if o in ("-P", "--directory-prefix") and v), "")
    out = [Target(v, f"`wget {o} {v}`") for o, v in opts
           if o in ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies")
           and v and v != "-"]
    if names & {"-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites"}:
        out.append(Target(d or ".", f"`wget` mirrors into {d or '.'}", tree=True))
    elif not any(o in ("-O", "--output-document") for o, _ in opts):
        for u in ops:
            n = _url_name(u) or "index.html"
            out.append(Target(_join(d, n), f"`wget {u}` writes {n}"))
    return out


def _sed(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    from swarmgate.hooks.shell_writes import sed_inplace_files
    return [Target(p, f"`sed -i` on {p}") for p in sed_inplace_files(args)]


def _perl(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    from swarmgate.hooks.shell_writes import perl_inplace_files
    return [Target(p, f"`perl -i` on {p}") for p in perl_inplace_files(args)]


def _awk(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """gawk -i inplace PROGRAM FILES (the inplace extension edits FILES)."""
    inplace = any(a == "inplace" and i > 0 and args[i - 1] in ("-i", "--include") for i, a in enumerate(args)) \
        or "-iinplace" in args or "--include=inplace" in args
    if not inplace:
        return []
    opts, ops = parse_args(args, {"-i", "--include", "-f", "--file", "-v", "--assign", "-F",
                                  "--field-separator", "-E", "--exec", "-l", "--load"})
    has_f = any(o in ("-f", "--file", "-E", "--exec") for o, _ in opts)
    files = ops if has_f else ops[1:]
    return [Target(p, f"`awk -i inplace` on {p}") for p in files if "=" not in p]


def _dd(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    return [Target(a[3:], f"`dd {a}`") for a in args if a.startswith("of=")]


_EDITOR_WRITES = ("w", "wq", "x", "up", "update", "sav", "saveas", "wall", "wa", "xa", "xall", "wqa", "wn", "exit")


def _editor(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
    """ex/vim/vi/nvim/ed run as scripts (``-c CMD``, ``+CMD``, ``-s``/``-es``, ``-S FILE``, a script on
    stdin): the files named are written when a command of the script writes."""
    silent_flag = name in ("ex", "ed") or any(a in ("-e", "-es", "-E", "-Es") for a in args)
    values = {"-c", "--cmd", "-S", "-u", "-U", "-i", "-T", "-w", "-W", "--listen"} | (set() if silent_flag else {"-s"})
    scripts, files = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a in values and name != "ed" and i + 1 < len(args):
            if a in ("-c", "--cmd"):
                scripts.append(args[i + 1])
            elif a in ("-S", "-s"):
                t = _read_file(cmd, args[i + 1])
                scripts.append(t if t is not None else "w")   # a script we cannot read may write
            i += 2
            continue
        if a.startswith("+") and len(a) > 1:
            scripts.append(a[1:])
        elif not a.startswith("-"):
            files.append(a)
        i += 1
    feed = _stdin_text(cmd)
    if feed:
        scripts.append(feed)
    writes = False
    for s in scripts:
        for piece in s.replace("|", "\n").splitlines():
            w = piece.strip().lstrip(":%").strip().split(" ", 1)[0].rstrip("!")
            w = w.lstrip("0123456789,.$")
            if w in _EDITOR_WRITES or (name == "ed" and w in ("w", "wq", "W")):
                writes = True
    if not writes:
        return []
    return [Target(p, f"`{name}` script writes {p}") for p in files]


def _sqlite(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """sqlite3 DB [SQL]: the database file, when the SQL writes (or cannot be read: it comes on stdin)."""
    opts, ops = parse_args(args, {"-cmd", "-separator", "-newline", "-nullvalue", "-init", "-vfs", "-mmap",
                                  "-pagecache", "-lookaside", "-maxsize", "-A"})
    if not ops:
        return []
    db = ops[0]
    if db == ":memory:":
        return []
    sql = " ".join(ops[1:] + [v for o, v in opts if o == "-cmd" and v]).lower()
    feed = _stdin_text(cmd)
    if not ops[1:] and feed is not None:
        sql = feed.lower()
    elif not ops[1:]:
        sql = "?"   # SQL typed on stdin at run time
    writing = ("insert", "update", "delete", "drop", "create", "alter", "replace", "vacuum", "attach",
               "pragma", ".restore", ".import", ".read", ".load", ".save", ".backup", "reindex", "?")
    if "-readonly" in {o for o, _ in opts} or not any(w in sql for w in writing):
        return []
    return [Target(db, f"`sqlite3 {db}` writes the database")]


def _find(cmd: SimpleCommand, args: list[str]) -> list[Target]:
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


def _compress(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
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


def _installer(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
    """pip/npm/uv pip installing into a directory (``--target``, ``--prefix``, ``--root``, ``-t``),
    or into the environment of the program named by its path (``/venv/bin/pip install``)."""
    from swarmgate import lean_path as posixpath
    words = list(cmd.words)
    sub_at = next((i for i, a in enumerate(args) if a in ("install", "uninstall", "i", "add", "remove", "rm",
                                                         "ci", "update", "sync")), None)
    if sub_at is None:
        return []
    rest = args[sub_at + 1:]
    opts, _ops = parse_args(rest, {"-t", "--target", "--prefix", "--root", "-r", "--requirement", "-c",
                                   "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
                                   "--python", "-p"})
    out = [Target(v, f"`{name}` installs into {v}", tree=True) for o, v in opts
           if o in ("-t", "--target", "--prefix", "--root") and v]
    if name in ("npm", "pnpm", "yarn") and "-g" not in {o for o, _ in opts} and not out:
        return []
    exe = words[0] if words else ""
    if not out and "/" in exe and name.startswith("pip"):
        out.append(Target(posixpath.dirname(posixpath.dirname(exe)), f"`{exe}` installs into its environment",
                          tree=True))
    return out


def _python_pip(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """``/venv/bin/python -m pip install ...``: the interpreter's environment."""
    if len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "pip3"):
        return _installer(cmd, "pip", args[2:])
    return []


def _apply_patch(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    from swarmgate.hooks.shell_writes import patch_targets
    return [Target(p, f"`apply_patch` on {p}") for p in patch_targets(cmd, args)]


# the parsers hooks/writer_table.py's SPECIAL names; those that take the program's name get it
_PARSERS: dict[str, Callable] = {
    "git": _git, "tar": _tar, "unzip": _unzip, "7z": _sevenzip, "cpio": _cpio, "patch": _patch, "curl": _curl,
    "wget": _wget, "sed": _sed, "perl": _perl, "awk": _awk, "dd": _dd, "sqlite": _sqlite, "find": _find,
    "apply_patch": _apply_patch, "python_pip": _python_pip,
}
_NAMED_PARSERS: dict[str, Callable] = {"copy": _copy, "editor": _editor, "compress": _compress,
                                       "installer": _installer}


def targets(cmd: SimpleCommand, extra: dict | None = None) -> list[Target]:
    """What the simple command ``cmd`` writes besides its redirections (see the module doc);
    ``extra``: entries from ``[bash] writers`` (they win over the built-in table)."""
    name = cmd.name
    args = list(cmd.args)
    w = (extra or {}).get(name)
    if w is not None:
        return _table(w, args)
    parser = parser_of(name)
    if parser is not None:
        fn = _PARSERS.get(parser)
        return fn(cmd, args) if fn is not None else _NAMED_PARSERS[parser](cmd, name, args)
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
