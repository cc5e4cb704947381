"""swarmgate.lean_path gives posixpath's answers (it is posixpath without os, for the hook's path)."""
from __future__ import annotations

import os
import posixpath

from hypothesis import given, settings
from hypothesis import strategies as st

from swarmgate import lean_path

PARTS = st.lists(st.sampled_from(["", "/", "//", "///", ".", "..", "a", "b.c", "~", "~root", "~nosuchuser", "x y",
                                  "é"]), max_size=7)


def _text(parts: list[str]) -> str:
    return "/".join(parts)


@settings(max_examples=400, deadline=None)
@given(PARTS, PARTS)
def test_pure_functions_agree_with_posixpath(a, b):
    p, q = _text(a), _text(b)
    for name in ("isabs", "split", "basename", "dirname", "normpath", "abspath"):
        assert getattr(lean_path, name)(p) == getattr(posixpath, name)(p), (name, p)
    assert lean_path.join(p, q) == posixpath.join(p, q)
    assert lean_path.join(p, q, p) == posixpath.join(p, q, p)
    assert lean_path.join(p) == posixpath.join(p)
    if p and "\0" not in p:
        assert lean_path.relpath(p) == posixpath.relpath(p)
        assert lean_path.relpath(p, q or None) == posixpath.relpath(p, q or None)


@settings(max_examples=100, deadline=None)
@given(PARTS)
def test_expanduser_agrees_with_posixpath(a):
    p = _text(a)
    assert lean_path.expanduser(p) == posixpath.expanduser(p)


def test_relpath_of_nothing_is_an_error_as_in_posixpath():
    for fn in (lean_path.relpath, posixpath.relpath):
        try:
            fn("")
            raise AssertionError("relpath('') must raise")
        except ValueError:
            pass


def test_expanduser_without_home_asks_the_password_database(monkeypatch):
    monkeypatch.delenv("HOME")
    assert lean_path.expanduser("~/x") == posixpath.expanduser("~/x") != "~/x"


def test_file_tests_and_realpath_agree_on_a_real_tree(tmp_path, monkeypatch):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "f.txt").write_text("x")
    os.symlink("d", tmp_path / "to-d")
    os.symlink("d/f.txt", tmp_path / "to-f")
    os.symlink("nowhere", tmp_path / "dangling")
    os.symlink("loop-b", tmp_path / "loop-a")
    os.symlink("loop-a", tmp_path / "loop-b")
    os.symlink("../to-d/e", tmp_path / "d" / "e" / "up")
    os.mkfifo(tmp_path / "fifo")
    monkeypatch.chdir(tmp_path / "d")
    names = ["d", "d/f.txt", "to-d", "to-f", "dangling", "loop-a", "loop-a/x", "d/e/up", "d/e/up/up/..", "fifo",
             "missing", "to-d/../to-f", "d/./e//..", "", "\0bad"]
    for name in names:
        for p in (str(tmp_path / name), name, f"../{name}"):
            for fn in ("exists", "lexists", "isfile", "isdir", "islink"):
                assert getattr(lean_path, fn)(p) == getattr(posixpath, fn)(p), (fn, p)
            if posixpath.isfile(p) and "\0" not in p:
                assert lean_path.getsize(p) == posixpath.getsize(p)
            if "\0" not in p:
                assert lean_path.realpath(p) == posixpath.realpath(p), p
    assert lean_path.realpath(tmp_path / "to-f") == posixpath.realpath(tmp_path / "to-f")   # a path-like
    for strict_case in ("loop-a", "dangling"):
        try:
            posixpath.realpath(tmp_path / strict_case, strict=True)
        except OSError as e:
            want = type(e)
        try:
            lean_path.realpath(tmp_path / strict_case, strict=True)
            raise AssertionError("strict realpath of a loop or a dangling link must raise")
        except OSError as e:
            assert type(e) is want
