"""The writers' parser for git (hooks/shell_writers.py dispatches here): the paths git's writing
subcommands write in the work tree (checkout/restore of paths, rm, mv, clean, apply/am of a patch,
worktree add, clone, config --file, archive --output, format-patch -o), placed under ``-C DIR`` and
the checkout's top for ``:/`` pathspecs and patch paths.

Imported on the first git command only (``git status`` loads this module and no other family); the
patch readers of hooks/writers_text.py load for ``git apply``/``am`` alone. Parsing only: the guards
judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writers import isdir_at, parse_args
from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


def git(cmd: SimpleCommand, args: list[str]) -> list[Target]:
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
                          or (cmd is not None and isdir_at(cmd, p))))
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
        from swarmgate.hooks.writers_text import patch_file_paths, patch_texts   # the patch readers
        texts = patch_texts(cmd, ops)
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
