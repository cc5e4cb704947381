"""The installed git pre-commit hook: real commits, including `commit -a` and `commit --only`."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swarmgate.gate import git_hook

ROOT = Path(__file__).resolve().parents[2]


def commit(repo, *args: str):
    return subprocess.run(["git", "commit", "-q", "-m", "msg", *args], cwd=repo.path, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def hooked(bad_repo):
    msg = git_hook.install(bad_repo.path)
    assert "installed" in msg
    return bad_repo


def test_install_writes_an_executable_hook_calling_gate_staged_by_absolute_path(hooked):
    hook = hooked.path / ".git" / "hooks" / "pre-commit"
    text = hook.read_text()
    assert os.access(hook, os.X_OK)
    assert git_hook.MARKER in text
    exec_line = [line for line in text.splitlines() if line.startswith("exec ")][0]
    assert exec_line.split()[1].startswith("/") or exec_line.split()[1].startswith("'/")
    assert "already installed" in git_hook.install(hooked.path)
    assert hook.read_text() == text


def test_plain_commit_runs_the_gate(hooked):
    hooked.stage_blob("data/a.txt", b"BAD\n")
    hooked.write("data/a.txt", "good\n")
    cp = commit(hooked)
    assert cp.returncode != 0 and "RED: no-bad" in cp.stdout + cp.stderr
    assert hooked.git("rev-list", "--count", "HEAD").strip() == "1"
    hooked.stage_blob("data/a.txt", b"fine\n")
    cp = commit(hooked)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_commit_all_checks_the_worktree_content_it_commits(hooked):
    # staged BAD, worktree good: `git commit -a` commits the worktree version, so the gate must pass
    hooked.stage_blob("data/a.txt", b"BAD\n")
    hooked.write("data/a.txt", "good again\n")
    cp = commit(hooked, "-a")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert hooked.git("show", "HEAD:data/a.txt") == "good again\n"
    # staged good, worktree BAD: plain commit passes, `commit -a` must be refused
    hooked.write("data/a.txt", "BAD in the worktree\n")
    hooked.stage_blob("data/a.txt", b"staged fine\n")
    index_before = hooked.index_bytes()
    cp = commit(hooked, "-a")
    assert cp.returncode != 0 and "RED: no-bad" in cp.stdout + cp.stderr
    assert hooked.git("show", "HEAD:data/a.txt") == "good again\n"
    assert hooked.git("show", ":data/a.txt") == "staged fine\n"        # the user's index is intact
    assert hooked.index_bytes() == index_before
    assert (hooked.path / "data/a.txt").read_text() == "BAD in the worktree\n"


def test_commit_only_checks_head_plus_the_named_paths(hooked):
    hooked.write("data/b.txt", "b\n")
    hooked.git("add", "data/b.txt")
    hooked.git("commit", "-q", "--no-verify", "-m", "b")
    hooked.stage_blob("data/a.txt", b"BAD staged, not part of this commit\n")
    hooked.write("data/a.txt", "good\n")
    hooked.write("data/b.txt", "b changed\n")
    cp = commit(hooked, "--only", "data/b.txt")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert hooked.git("show", "HEAD:data/b.txt") == "b changed\n"
    assert hooked.git("show", "HEAD:data/a.txt") == "good\n"
    assert "BAD staged" in hooked.git("show", ":data/a.txt")         # still staged for later
    # and --only with a bad worktree file is refused
    hooked.write("data/b.txt", "BAD b\n")
    cp = commit(hooked, "--only", "data/b.txt")
    assert cp.returncode != 0 and "RED: no-bad" in cp.stdout + cp.stderr


def test_existing_hook_is_chained_and_restored(bad_repo):
    hooks = bad_repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    mine = hooks / "pre-commit"
    mine.write_text("#!/bin/sh\necho user hook ran >&2\ntest ! -e \"$(git rev-parse --show-toplevel)/block\"\n")
    mine.chmod(0o755)
    msg = git_hook.install(bad_repo.path)
    assert "pre-commit.legacy" in msg
    assert (hooks / "pre-commit.legacy").read_text().startswith("#!/bin/sh\necho user hook ran")
    bad_repo.stage_blob("data/a.txt", b"ok\n")
    cp = commit(bad_repo)
    assert cp.returncode == 0 and "user hook ran" in cp.stderr
    bad_repo.write("block", "")
    bad_repo.stage_blob("data/a.txt", b"ok2\n")
    cp = commit(bad_repo)
    assert cp.returncode != 0                                      # the user's hook still guards
    assert "back in place" in git_hook.uninstall(bad_repo.path)
    assert mine.read_text().startswith("#!/bin/sh\necho user hook ran")
    assert not (hooks / "pre-commit.legacy").exists()


def test_refuses_when_legacy_slot_is_taken(bad_repo):
    hooks = bad_repo.path / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit.legacy").write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(git_hook.HookError, match="merge them by hand"):
        git_hook.install(bad_repo.path)
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


def test_core_hooks_path_is_honoured(bad_repo):
    bad_repo.git("config", "core.hooksPath", ".githooks")
    git_hook.install(bad_repo.path)
    assert (bad_repo.path / ".githooks" / "pre-commit").exists()
    assert not (bad_repo.path / ".git" / "hooks" / "pre-commit").exists()
    assert "removed" in git_hook.uninstall(bad_repo.path)
    assert not (bad_repo.path / ".githooks" / "pre-commit").exists()


def test_pre_commit_hooks_yaml_declares_gate_staged():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: gate-staged" in text
    assert "entry: gate-staged" in text
    assert "pass_filenames: false" in text and "always_run: true" in text
    assert "language: python" in text
