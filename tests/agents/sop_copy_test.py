"""The upstream rules copy: stamp check (SessionStart, gate stage 1) and sync with verification."""
from __future__ import annotations

import os
import subprocess

import pytest

from swarmgate.agents import sop
from swarmgate.config import defaults, load_config
from tests.agents.support import tool


def write(root, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.fixture
def upstream(tmp_path):
    up = tmp_path / "upstream"
    write(up, {"VERSION": "1.4.0\n", "rules/dispatch.md": "dispatch how\n", "rules/sub/deep.md": "deep\n",
               ".git/HEAD": "ref: refs/heads/main\n"})
    return up


def cli(repo, *args):
    return subprocess.run([tool("swarmgate"), "sop", "--repo", str(repo), *args], capture_output=True, text=True)


def test_no_copy_is_nothing_to_check(repo):
    ok, msg = sop.stamp_status(str(repo), defaults())
    assert ok and "nothing to check" in msg


@pytest.mark.parametrize("files, expect", [
    ({".claude/sop/VERSION": "2\n", ".claude/sop-version": "2\n"}, (True, "stamp matches")),
    ({".claude/sop/VERSION": "2\n", ".claude/sop-version": "1\n"},
     (False, "is at 2, the stamp .claude/sop-version says 1")),
    ({".claude/sop/VERSION": "2\n"}, (False, "there is no stamp")),
    ({".claude/sop/x.md": "x\n", ".claude/sop-version": "1\n"}, (False, "VERSION is missing")),
    ({".claude/sop/VERSION": "\n", ".claude/sop-version": "1\n"}, (False, "VERSION is missing or empty")),
])
def test_stamp_status(repo, files, expect):
    write(repo, files)
    ok, msg = sop.stamp_status(str(repo), defaults())
    assert ok is expect[0] and expect[1] in msg
    if not ok:
        assert msg.startswith("rules changed: read them before you run")


def test_a_symlinked_copy_is_red(repo, upstream):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "sop").symlink_to(upstream)
    ok, msg = sop.stamp_status(str(repo), defaults())
    assert not ok and "symlink" in msg


def test_sync_copies_exactly_verifies_and_stamps(repo, upstream):
    write(repo, {".claude/sop/VERSION": "1.3.0\n", ".claude/sop/rules/removed-upstream.md": "old\n",
                 ".claude/sop-version": "1.3.0\n"})
    p = cli(repo, "sync", "--from", str(upstream))
    assert p.returncode == 0, p.stderr
    assert "verified identical" in p.stdout
    copy = repo / ".claude" / "sop"
    assert not (copy / "rules" / "removed-upstream.md").exists()
    assert (copy / "rules" / "sub" / "deep.md").read_text() == "deep\n"
    assert not (copy / ".git").exists()
    assert (repo / ".claude" / "sop-version").read_text() == "1.4.0\n"
    assert sop.compare_trees(str(upstream), str(copy)) == []
    assert cli(repo, "check").returncode == 0


def test_sync_reads_upstream_from_the_config(repo, upstream):
    config = f'[sop]\nupstream = "{upstream}"\npath = "rules-copy"\nstamp = "rules-copy.stamp"\n'
    write(repo, {".claude/swarmgate.toml": config})
    assert cli(repo, "sync").returncode == 0
    assert (repo / "rules-copy" / "VERSION").is_file() and (repo / "rules-copy.stamp").read_text() == "1.4.0\n"
    ok, _ = sop.stamp_status(str(repo), load_config(str(repo)))
    assert ok


def test_sync_without_upstream_or_version_is_refused(repo, tmp_path):
    p = cli(repo, "sync")
    assert p.returncode == 1 and "[sop] upstream" in p.stderr
    bare = tmp_path / "bare"
    write(bare, {"a.md": "a\n"})
    p = cli(repo, "sync", "--from", str(bare))
    assert p.returncode == 1 and "no VERSION" in p.stderr
    assert not (repo / ".claude" / "sop").exists()


def test_check_red_then_stamp_after_reading(repo):
    write(repo, {".claude/sop/VERSION": "7\n", ".claude/sop-version": "6\n"})
    p = cli(repo, "check")
    assert p.returncode == 1 and "rules changed: read them before you run" in p.stderr
    assert cli(repo, "stamp").returncode == 0
    assert cli(repo, "check").returncode == 0


def test_compare_trees_reports_like_diff_rq(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, {"same": "1", "differs": "x", "only-a": "1", "d/kind": "file"})
    write(b, {"same": "1", "differs": "y", "only-b": "1"})
    (b / "d").mkdir()
    (b / "d" / "kind").mkdir()
    os.symlink("same", a / "link")
    os.symlink("differs", b / "link")
    diffs = sop.compare_trees(str(a), str(b))
    text = "\n".join(diffs)
    assert f"Only in {a}: only-a" in text and f"Only in {b}: only-b" in text
    assert f"Files {a}/differs and {b}/differs differ" in text
    assert "different kinds" in text and "Links differ" in text
    assert "same" not in text.replace("link", "")


def test_selftest(repo):
    p = subprocess.run([tool("swarmgate"), "sop", "--selftest"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sop-sync-keeps-deleted -> sync-removes-deleted-files" in p.stdout
