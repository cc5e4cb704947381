"""Which git commands drop work, read from their command line (L02, L03 in hooks/loss_guards.py).

- ``discard(args)``: what a git command does to uncommitted changes of its checkout, as a
  ``Discard`` (what, the pathspecs it limits itself to or None for all of it, whether untracked files
  go too), or None when it keeps them: ``reset --hard`` (and ``--merge``), ``checkout -- PATHS``,
  ``checkout -f``, ``checkout .``, ``restore`` of the work tree, ``stash`` (push, save, bare), ``stash
  drop`` / ``clear`` (the stash is the repository's, shared by every worktree), ``clean -f``, a branch
  switch (``checkout BRANCH``, ``switch``), ``pull``, ``merge``, ``rebase``, ``am``, ``cherry-pick``
  over a dirty tree, ``worktree remove --force``;
- ``forced_pushes(args, current)``: the remote branches a ``git push`` overwrites or deletes
  (``--force``, ``-f``, ``--force-with-lease``, ``+refspec``, ``--delete``, ``:branch``, ``--mirror``);
  ``current`` is the checked-out branch, what a bare ``git push -f`` pushes.

Pure: the checkout's state (git status, the branch) is read by the guard's caller.
"""
from __future__ import annotations

from swarmgate.hooks.git_args import git_subcommand


class Discard:
    __slots__ = ("what", "paths", "untracked", "tracked", "stash", "switch")

    def __init__(self, what: str, paths: list | None = None, untracked: bool = False, tracked: bool = True,
                 stash: bool = False, switch: bool = False) -> None:
        self.what = what            # for the refusal: `git reset --hard`
        self.paths = paths          # pathspecs it is limited to, None: the whole checkout
        self.untracked = untracked  # untracked files go too (clean, stash -u)
        self.tracked = tracked      # changes of tracked files go
        self.stash = stash          # drops stash entries (stash drop / clear / pop over a conflict)
        self.switch = switch        # `git checkout X`: X is a path when one is on disk, else a branch

    def __repr__(self) -> str:
        return f"Discard({self.what!r}, paths={self.paths!r})"


def _ops(rest: list) -> tuple[set, list, list | None]:
    """(option names, operands before `--`, operands after `--` or None)."""
    opts, ops, after = set(), [], None
    for k, a in enumerate(rest):
        if a == "--":
            after = list(rest[k + 1:])
            break
        if a.startswith("--"):
            opts.add(a.split("=", 1)[0])
        elif a.startswith("-") and len(a) > 1:
            opts.update("-" + ch for ch in a[1:])
        else:
            ops.append(a)
    return opts, ops, after


def discard(args: list) -> Discard | None:
    """What ``git ARGS`` does to the checkout's uncommitted changes (module doc)."""
    sub, rest = git_subcommand(args)
    if sub is None:
        return None
    opts, ops, after = _ops(rest)
    if sub == "reset":
        if "--hard" in opts or "--merge" in opts:
            return Discard(f"git reset {'--hard' if '--hard' in opts else '--merge'}")
        return None
    if sub == "checkout":
        if opts & {"-b", "-B", "--orphan", "-p", "--patch"} and after is None:
            return None
        if after is not None:
            return Discard("git checkout -- " + " ".join(after), after or None)
        if "-f" in opts or "--force" in opts:
            return Discard("git checkout --force")
        if not ops:
            return None
        if len(ops) > 1:
            return Discard("git checkout " + " ".join(ops), ops[1:])
        return Discard(f"git checkout {ops[0]}", [ops[0]], switch=True)   # a path, or a branch switch
    if sub == "restore":
        if ("-S" in opts or "--staged" in opts) and not ("-W" in opts or "--worktree" in opts):
            return None
        paths = (after or []) + ops
        return Discard("git restore " + " ".join(paths), paths or None)
    if sub == "switch":
        if opts & {"-c", "-C", "--create", "--force-create", "--orphan"} and not (opts & {"-f", "--discard-changes"}):
            return None
        return Discard("git switch " + " ".join(ops) + " (a branch switch over the changes)")
    if sub == "stash":
        action = ops[0] if ops else "push"
        if action in ("list", "show", "branch", "create", "store"):
            return None
        if action in ("drop", "clear"):
            return Discard(f"git stash {action}", tracked=False, stash=True)
        if action in ("pop", "apply"):
            return Discard(f"git stash {action} (over the changes)", tracked=True)
        if action in ("push", "save") or action.startswith("-"):
            untracked = bool(opts & {"-u", "--include-untracked", "-a", "--all"})
            paths = after
            return Discard("git stash" + (f" {action}" if ops else ""), paths or None, untracked=untracked)
        return None
    if sub == "clean":
        if opts & {"-n", "--dry-run"} or not opts & {"-f", "--force"}:
            return None
        paths = (after or []) + ops
        return Discard("git clean " + " ".join(sorted(opts)), paths or None, untracked=True, tracked=False)
    if sub in ("pull", "merge", "rebase", "am", "cherry-pick", "revert"):
        if sub in ("merge", "rebase", "cherry-pick", "revert", "am") and \
                opts & {"--abort", "--quit", "--continue", "--skip", "--show-current-patch"} and sub != "merge":
            return Discard(f"git {sub} --abort") if "--abort" in opts else None
        if sub == "merge" and "--abort" in opts:
            return Discard("git merge --abort")
        return Discard(f"git {sub} (over the changes)")
    if sub == "worktree" and ops[:1] == ["remove"] and opts & {"-f", "--force"}:
        return Discard("git worktree remove --force " + " ".join(ops[1:2]), ops[1:2] or None, untracked=True)
    return None


def is_match(branch: str, patterns) -> bool:
    from fnmatch import fnmatchcase
    return any(fnmatchcase(branch, p) for p in patterns)


def forced_pushes(args: list, current: str | None) -> list[tuple[str, str]]:
    """[(branch, how)] the remote branches ``git push ARGS`` overwrites or deletes."""
    sub, rest = git_subcommand(args)
    if sub != "push":
        return []
    opts, ops, after = _ops(rest)
    ops = ops + (after or [])
    force = bool(opts & {"-f", "--force", "--force-with-lease", "--force-if-includes"})
    delete = bool(opts & {"-d", "--delete"})
    if "--mirror" in opts:
        return [("every branch", "--mirror")]
    value_opts = ("--repo", "--receive-pack", "--exec", "--push-option", "-o")
    clean = []
    skip = False
    for a in rest:
        if skip:
            skip = False
            continue
        if a in value_opts:
            skip = True
            continue
        if a == "--":
            continue
        if not a.startswith("-"):
            clean.append(a)
    refspecs = clean[1:]
    out = []
    if not refspecs:
        if (force or delete) and current:
            out.append((current, "--force" if force else "--delete"))
        return out
    for spec in refspecs:
        plus = spec.startswith("+")
        s = spec[1:] if plus else spec
        src, _, dst = s.partition(":")
        if not _:
            dst = src
        dst = dst.removeprefix("refs/heads/")
        if src == "HEAD" and not _ and current:
            dst = current
        if delete or (_ and not src):
            out.append((dst, "--delete" if delete else f"`{spec}` (deletes it)"))
        elif force or plus:
            out.append((dst, "--force" if force else f"`{spec}`"))
    return out
