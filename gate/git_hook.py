"""The git pre-commit hook that runs gate-staged.

``install(repo)`` writes ``<hooks dir>/pre-commit`` (the hooks dir git uses:
``git rev-parse --git-path hooks``, which honours ``core.hooksPath`` and
linked worktrees). The hook calls gate-staged by absolute path, so it works
whatever PATH the committer has.

An existing hook that is not ours is kept and chained, the way the
pre-commit framework does it: it is moved to ``pre-commit.legacy`` and our
hook runs it first (its failure stops the commit), then the gate. A second
install changes nothing; ``uninstall(repo)`` removes our hook and puts the
legacy one back. If both a foreign ``pre-commit`` and a ``pre-commit.legacy``
exist we refuse rather than guess.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

MARKER = "# installed by swarmgate (swarmgate install --git-hook)"
LEGACY = "pre-commit.legacy"


class HookError(Exception):
    pass


def hooks_dir(repo: str | Path) -> Path:
    cp = subprocess.run(["git", "rev-parse", "--git-path", "hooks"], cwd=str(repo), capture_output=True, text=True)
    if cp.returncode != 0:
        raise HookError(f"{repo} is not a git repository: {cp.stderr.strip()}")
    p = Path(cp.stdout.strip())
    return p if p.is_absolute() else (Path(repo) / p).resolve()


def gate_command() -> str:
    """The absolute command that runs gate-staged from this installation."""
    beside = Path(sys.executable).parent / "gate-staged"
    if beside.is_file() and os.access(beside, os.X_OK):
        return shlex.quote(str(beside))
    found = shutil.which("gate-staged")
    if found:
        return shlex.quote(os.path.abspath(found))
    return f"{shlex.quote(sys.executable)} -m swarmgate gate-staged"


def hook_text() -> str:
    return f"""#!/bin/sh
{MARKER}
# Runs the commit gate on exactly HEAD + the staged changes (GIT_INDEX_FILE is
# honoured, so `git commit -a` and `git commit --only` are checked as committed).
# To remove it: delete this file (and move pre-commit.legacy back to
# pre-commit if there is one), or `swarmgate install PATH --uninstall --git-hook`
# (which also unwires .claude/).
here=$(dirname "$0")
if [ -x "$here/{LEGACY}" ]; then
    "$here/{LEGACY}" "$@" || exit $?
fi
exec {gate_command()}
"""


def _ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(errors="replace")
    except OSError:
        return False


def install(repo: str | Path) -> str:
    """Write the pre-commit hook; return a one-line report of what was done."""
    d = hooks_dir(repo)
    d.mkdir(parents=True, exist_ok=True)
    hook = d / "pre-commit"
    legacy = d / LEGACY
    text = hook_text()
    note = ""
    if os.path.lexists(hook) and not _ours(hook):
        if os.path.lexists(legacy):
            raise HookError(f"{hook} exists and is not ours, and {legacy} is taken too: merge them by hand, "
                            f"or add `{gate_command()}` to your hook")
        os.replace(hook, legacy)
        note = f"; your previous hook was moved to {legacy} and runs first"
    elif os.path.lexists(hook) and hook.read_text(errors="replace") == text:
        return f"git hook {hook}: already installed, unchanged"
    tmp = d / ".pre-commit.swarmgate.tmp"
    tmp.write_text(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, hook)
    return f"git hook {hook}: installed (runs gate-staged before every commit){note}"


def uninstall(repo: str | Path) -> str:
    d = hooks_dir(repo)
    hook = d / "pre-commit"
    legacy = d / LEGACY
    if not os.path.lexists(hook) or not _ours(hook):
        return f"git hook {hook}: not ours, left alone"
    os.unlink(hook)
    if os.path.lexists(legacy):
        os.replace(legacy, hook)
        return f"git hook {hook}: removed; your previous hook is back in place"
    return f"git hook {hook}: removed"
