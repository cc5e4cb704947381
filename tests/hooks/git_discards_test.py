"""hooks/git_discards.py: which git commands drop uncommitted changes or overwrite remote branches."""
from __future__ import annotations

import pytest

from swarmgate.hooks.git_discards import discard, forced_pushes, is_match


@pytest.mark.parametrize("args,paths,untracked", [
    (["reset", "--hard"], None, False), (["reset", "--hard", "HEAD~1"], None, False),
    (["checkout", "--", "."], ["."], False), (["checkout", "-f"], None, False),
    (["restore", "src/a.py"], ["src/a.py"], False), (["stash"], None, False), (["stash", "-u"], None, True),
    (["stash", "push", "--", "src"], ["src"], False), (["clean", "-fd"], None, True),
    (["-C", "sub", "reset", "--hard"], None, False), (["pull"], None, False), (["switch", "main"], None, False),
])
def test_discards(args, paths, untracked):
    d = discard(args)
    assert d is not None and d.paths == paths and d.untracked is untracked


@pytest.mark.parametrize("args", [
    ["status"], ["reset"], ["reset", "--soft", "HEAD~1"], ["checkout", "-b", "new"], ["restore", "--staged", "x"],
    ["stash", "list"], ["clean", "-n"], ["clean", "-d"], ["switch", "-c", "topic"], ["commit", "-m", "x"],
])
def test_keeps(args):
    assert discard(args) is None


def test_stash_drop_is_about_the_shared_stash():
    d = discard(["stash", "drop"])
    assert d.stash and not d.tracked


@pytest.mark.parametrize("args,current,want", [
    (["push", "--force", "origin", "main"], "x", ["main"]), (["push", "origin", "+main"], None, ["main"]),
    (["push", "origin", ":release/1"], None, ["release/1"]), (["push", "-f"], "main", ["main"]),
    (["push", "--delete", "origin", "old"], None, ["old"]), (["push", "-f", "origin", "HEAD:main"], "t", ["main"]),
    (["push", "origin", "main"], "main", []), (["push", "-u", "origin", "HEAD"], "main", []),
])
def test_forced_pushes(args, current, want):
    assert [b for b, _ in forced_pushes(args, current)] == want


def test_protected_globs():
    assert is_match("release/2.0", ["main", "release/*"]) and not is_match("feature/x", ["main", "release/*"])
