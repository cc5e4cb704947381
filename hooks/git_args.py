"""Reading git's command line: the subcommand, its arguments and `-c key=value` settings,
and whether a git command switches off the repository's hooks (G01).
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


_GIT_VALUE_OPTS = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                             "--config-env", "--super-prefix"))
_COMMIT_VALUE_LETTERS = "mFCctuS"


def _git_subcommand(args: list[str]) -> tuple[str | None, list[str], list[str]]:
    """(subcommand, its arguments, the `-c k=v` settings) of `git ARGS`."""
    i, n = 0, len(args)
    settings = []
    while i < n:
        a = args[i]
        if a in _GIT_VALUE_OPTS:
            if a == "-c" and i + 1 < n:
                settings.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-"):
            if a.startswith("--config-env=") or a.startswith("-c") and len(a) > 2:
                settings.append(a.split("=", 1)[-1] if a.startswith("--") else a[2:])
            i += 1
            continue
        return a, list(args[i + 1:]), settings
    return None, [], settings


def c_dir(args: list[str]) -> str:
    """The directory `git -C A -C B ...` works in, relative to the caller's ("" when none)."""
    from swarmgate import lean_path as posixpath

    out = ""
    i, n = 0, len(args)
    while i < n and args[i].startswith("-"):
        if args[i] in _GIT_VALUE_OPTS:
            if args[i] == "-C" and i + 1 < n:
                out = posixpath.join(out, args[i + 1]) if out else args[i + 1]
            i += 2
            continue
        i += 1
    return out


def git_subcommand(args: list[str]) -> tuple[str | None, list[str]]:
    """(subcommand, its arguments) of `git ARGS`."""
    sub, rest, _settings = _git_subcommand(args)
    return sub, rest


def skips_git_hooks(cmd: SimpleCommand) -> str | None:
    """Why this git command switches off the repository's git hooks, or None."""
    if not cmd.words or cmd.name != "git":
        return None
    sub, rest, settings = _git_subcommand(list(cmd.args))
    for kv in settings:
        if kv.lower().startswith("core.hookspath"):
            return f"`git -c {kv}` points git at other hooks"
    if sub == "config":
        ops = [a for a in rest if not a.startswith("-")]
        if ops and ops[0].lower() == "core.hookspath" and (len(ops) > 1 or "--unset" in rest
                                                           or "--unset-all" in rest):
            return "`git config core.hooksPath` points git at other hooks"
        return None
    if sub in ("commit", "merge", "push", "cherry-pick", "revert", "am", "rebase"):
        for a in rest:
            if a == "--":
                break
            if a == "--no-verify":
                return f"`git {sub} --no-verify` skips the hooks"
            if sub == "commit" and a.startswith("-") and not a.startswith("--"):
                for ch in a[1:]:
                    if ch == "n":
                        return "`git commit -n` skips the hooks"
                    if ch in _COMMIT_VALUE_LETTERS:
                        break
    return None
