"""Break switches are honoured only under a fresh self-test marker of ours."""
from __future__ import annotations

import os
import time

from swarmgate import break_switch as bs


def test_no_switch_no_refusal():
    assert bs.refusal() is None
    assert not bs.broken("anything")


def test_switch_without_marker_is_refused_and_not_honoured(monkeypatch):
    monkeypatch.setenv("SWARMGATE_BREAK", "no-redact")
    assert not bs.broken("no-redact")
    msg = bs.refusal()
    assert "SWARMGATE_BREAK=no-redact" in msg and "selftest" in msg


def test_switch_with_a_valid_marker_is_honoured(monkeypatch):
    with bs.selftest_marker() as env:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("SWARMGATE_BREAK", "a,no-redact")
        assert bs.broken("no-redact") and bs.broken("a")
        assert not bs.broken("other")
        assert bs.refusal() is None
        path = bs._marker_path(env[bs.TOKEN_ENV])
        assert os.path.isfile(path)
    assert not os.path.exists(path)  # the marker is removed afterwards
    bs._cache.clear()
    assert not bs.broken("no-redact")  # the token is dead once the self-test ends


def test_foreign_token_is_rejected(monkeypatch):
    with bs.selftest_marker():
        monkeypatch.setenv(bs.TOKEN_ENV, "0123456789abcdef0123456789abcdef")  # not the marker's token
        monkeypatch.setenv("SWARMGATE_BREAK", "x")
        assert not bs.broken("x")
        assert bs.refusal() is not None


def test_short_token_is_rejected(monkeypatch):
    monkeypatch.setenv(bs.TOKEN_ENV, "abc")
    monkeypatch.setenv("SWARMGATE_BREAK", "x")
    assert not bs.broken("x")


def test_marker_with_the_wrong_content_is_rejected(monkeypatch):
    with bs.selftest_marker() as env:
        token = env[bs.TOKEN_ENV]
        with open(bs._marker_path(token), "w") as f:
            f.write("someone else's token\n")
        bs._cache.clear()
        monkeypatch.setenv(bs.TOKEN_ENV, token)
        monkeypatch.setenv("SWARMGATE_BREAK", "x")
        assert not bs.broken("x")


def test_stale_marker_is_rejected(monkeypatch):
    with bs.selftest_marker() as env:
        token = env[bs.TOKEN_ENV]
        old = time.time() - bs.MAX_AGE_S - 60
        os.utime(bs._marker_path(token), (old, old))
        bs._cache.clear()
        monkeypatch.setenv(bs.TOKEN_ENV, token)
        monkeypatch.setenv("SWARMGATE_BREAK", "x")
        assert not bs.broken("x")
        assert bs.refusal() is not None


def test_symlinked_marker_is_rejected(monkeypatch, tmp_path):
    token = "f" * 32
    real = tmp_path / "real-marker"
    real.write_text(token + "\n")
    path = bs._marker_path(token)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(real, path)
    monkeypatch.setenv(bs.TOKEN_ENV, token)
    monkeypatch.setenv("SWARMGATE_BREAK", "x")
    assert not bs.broken("x")
    # the same content as a regular file would be accepted: the symlink is what is refused
    os.unlink(path)
    os.rename(real, path)
    bs._cache.clear()
    assert bs.broken("x")
