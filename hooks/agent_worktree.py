"""The git worktree an agent works in, and paths judged relative to it.

Claude Code 2.1.332 runs a subagent dispatched with ``isolation: "worktree"``
in a temporary linked worktree of the project (``.claude/worktrees/agent-<id>``,
branch ``worktree-agent-<id>``). In that agent's hook calls ``cwd`` is the
worktree and ``CLAUDE_PROJECT_DIR`` the project root, so the repository the
config, the state and the decision log belong to (``event.repo``) is not the
tree the agent's paths are in. Every path rule (W01, G01, H01, `scratch:`,
work-dir-owner) is judged relative to the **work root**: the linked worktree
of this repository that the agent's ``cwd`` lies in, else the repository.

A linked worktree is told by its ``.git`` *file* (``gitdir: <common>/worktrees/<name>``)
whose common directory (``<gitdir>/commondir``) is the repository's own: a
checkout of another repository, or a nested clone, is not this repository's
worktree. Only small files are read (no git process): this runs on the hook's
hot path. The client's own worktree hooks are not used (docs/lifecycle.md:
a WorktreeCreate hook replaces the client's creation of the worktree).

Pure functions; light at import.
"""
from __future__ import annotations

from swarmgate import lean_os as os
from swarmgate import lean_path as posixpath

_GITDIR = "gitdir:"


def _read_small(path: str, limit: int = 4096) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return ""
    try:
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def common_dir(checkout: str) -> str | None:
    """The git common directory of the checkout at ``checkout`` (its ``.git`` directory, or for a
    linked worktree the main repository's), real path; None when ``checkout`` has no ``.git``."""
    dot = os.path.join(checkout, ".git")
    if os.path.isdir(dot):
        return os.path.realpath(dot)
    text = _read_small(dot).strip()
    if not text.startswith(_GITDIR):
        return None
    gitdir = text[len(_GITDIR):].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.join(checkout, gitdir)
    common = _read_small(os.path.join(gitdir, "commondir")).strip()
    if not common:
        return os.path.realpath(gitdir)
    if not os.path.isabs(common):
        common = os.path.join(gitdir, common)
    return os.path.realpath(common)


def checkout_of(path: str) -> str | None:
    """The nearest ancestor of ``path`` (itself included) holding a ``.git`` entry, lexically."""
    d = posixpath.normpath(path)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = posixpath.dirname(d)
        if parent == d:
            return None
        d = parent


def linked_worktree(path: str, repo: str) -> str | None:
    """The linked worktree of ``repo`` that ``path`` lies in, other than ``repo`` itself; else None."""
    if not path or not repo or not os.path.isabs(path):
        return None
    top = checkout_of(path)
    if top is None:
        return None
    r = posixpath.normpath(repo)
    if top == r or os.path.isdir(os.path.join(top, ".git")):
        return None   # the repository itself, or a checkout with its own .git directory (not a linked worktree)
    mine = common_dir(top)
    return top if mine is not None and mine == common_dir(r) else None


def work_root(cwd: str, repo: str) -> str:
    """The directory path rules are judged relative to: the linked worktree of ``repo`` that
    ``cwd`` lies in, else ``repo``."""
    return linked_worktree(cwd, repo) or repo


def relative(full: str, root: str, repo: str) -> str | None:
    """``full`` (absolute, normalised) relative to the work root when it lies inside it, else
    relative to the repository, else None (outside both). A worktree agent's own tree comes
    first; the project's checkout is still the project's (its write table row applies there)."""
    for base in dict.fromkeys(b for b in (root, repo) if b):
        b = posixpath.normpath(base)
        if full == b:
            return "."
        if full.startswith(b.rstrip("/") + "/"):
            return full[len(b.rstrip("/")) + 1:]
    return None


def head_of(worktree: str, timeout: float = 5.0) -> str:
    """The commit checked out in ``worktree`` (`git rev-parse HEAD`), "" when it cannot be read."""
    import subprocess

    try:
        p = subprocess.run(["git", "-C", worktree, "rev-parse", "HEAD"], capture_output=True, text=True,
                           timeout=timeout, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return p.stdout.strip() if p.returncode == 0 else ""


def changes_of(worktree: str, base: str, timeout: float = 5.0) -> list[str] | None:
    """What ``worktree`` holds that its creation did not: uncommitted files (`git status
    --porcelain`) and commits since ``base`` (the HEAD recorded when the agent started), as
    lines; [] when clean (Claude Code removes a clean agent worktree after the hand-back);
    None when git cannot tell (then it counts as changed: never assume a tree is disposable)."""
    import subprocess

    out: list[str] = []
    try:
        p = subprocess.run(["git", "-C", worktree, "status", "--porcelain=v1", "--untracked-files=normal"],
                           capture_output=True, text=True, timeout=timeout, errors="replace")
        if p.returncode != 0:
            return None
        out += [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
        if base:
            q = subprocess.run(["git", "-C", worktree, "rev-list", "--count", f"{base}..HEAD"],
                               capture_output=True, text=True, timeout=timeout, errors="replace")
            if q.returncode != 0:
                return None
            n = int(q.stdout.strip() or 0)
            if n:
                out.append(f"{n} commit(s) since the agent started")
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return out


# A linked worktree as files, for guard cases (a case's cwd is relative to its repository):
# `.claude/worktrees/agent-a1` is a worktree of the case's repository, as Claude Code makes one.
CASE_WORKTREE = ".claude/worktrees/agent-a1"
CASE_FILES = {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/worktrees/agent-a1/commondir": "../..\n",
    ".git/worktrees/agent-a1/HEAD": "ref: refs/heads/worktree-agent-a1\n",
    f"{CASE_WORKTREE}/.git": "gitdir: ../../../.git/worktrees/agent-a1\n",
}
