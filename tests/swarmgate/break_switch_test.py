"""Break switches are honoured only under a fresh self-test marker of ours."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from swarmgate import break_switch as bs
from swarmgate.procinfo import start_time
from swarmgate.state_paths import selftest_marker_dir
from swarmgate.statefile import ensure_private_dir
from tests.processes import terminate


@pytest.fixture(autouse=True)
def _no_marker_dir_left():
    yield
    try:
        os.rmdir(selftest_marker_dir())  # only when empty: another self-test may be running
    except OSError:
        pass


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


def _forge(token: str, pid: int, start=None) -> str:
    """A marker written by hand, as an agent would: the right place, token, a live pid."""
    ensure_private_dir(os.path.dirname(bs._marker_path(token)))
    path = bs._marker_path(token)
    with open(path, "w") as f:
        f.write(f"{token} {pid} {start_time(pid) if start is None else start}\n")
    os.chmod(path, 0o600)
    return path


def test_symlinked_marker_is_rejected(monkeypatch, tmp_path):
    token = "f" * 32
    real = tmp_path / "real-marker"
    real.write_text(f"{token} {os.getpid()} {start_time(os.getpid())}\n")
    os.chmod(real, 0o600)
    path = _forge(token, os.getpid())
    os.unlink(path)
    os.symlink(real, path)
    monkeypatch.setenv(bs.TOKEN_ENV, token)
    monkeypatch.setenv("SWARMGATE_BREAK", "x")
    try:
        assert not bs.broken("x")
        # the same content as a regular file would be accepted: the symlink is what is refused
        os.unlink(path)
        _forge(token, os.getpid())
        bs._cache.clear()
        assert bs.broken("x")
    finally:
        os.unlink(path)


def test_the_marker_location_comes_from_no_environment_variable(monkeypatch, tmp_path):
    """SWARMGATE_SELFTEST_MARKER_DIR (gone) and SWARMGATE_STATE_DIR both point at a directory the
    command controls, with a marker in it: nothing is honoured."""
    token = "a" * 32
    for d in (tmp_path / "m", tmp_path / "state" / "selftest"):
        d.mkdir(parents=True)
        (d / f"marker-{token}").write_text(f"{token} {os.getpid()} {start_time(os.getpid())}\n")
    monkeypatch.setenv("SWARMGATE_SELFTEST_MARKER_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv(bs.TOKEN_ENV, token)
    monkeypatch.setenv("SWARMGATE_BREAK", "x")
    assert not bs.broken("x") and bs.refusal() is not None
    assert not selftest_marker_dir().startswith(str(tmp_path))


def test_a_marker_must_name_this_process_or_an_ancestor(monkeypatch):
    """A marker copied from a running self-test (right token, its live pid) vouches only for that
    self-test's own process tree; a marker naming a dead or reused pid vouches for nothing."""
    token = "b" * 32
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = _forge(token, other.pid)  # a live process, but not one of ours
        monkeypatch.setenv(bs.TOKEN_ENV, token)
        monkeypatch.setenv("SWARMGATE_BREAK", "x")
        assert not bs.broken("x")
        _forge(token, os.getpid(), start=12345)  # our pid with another start time: a reused pid
        bs._cache.clear()
        assert not bs.broken("x")
        _forge(token, os.getppid())  # an ancestor: accepted (a tool run by the self-test)
        bs._cache.clear()
        assert bs.broken("x")
        os.unlink(path)
    finally:
        terminate(other)


def test_a_child_of_the_self_test_is_vouched_for_and_another_process_is_not(tmp_path):
    """Through real processes: a tool started by the self-test honours the switch; the same
    environment copied into a process the self-test did not start (an agent's shell) does not."""
    code = "from swarmgate import break_switch as b; print(b.broken('x'), b.refusal() is None)"
    with bs.selftest_marker() as env:
        full = {**os.environ, **env, "SWARMGATE_BREAK": "x"}
        child = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=60)
        assert child.stdout.split() == ["True", "True"], child.stderr
        # an unrelated process tree: detached from us with setsid + a double fork (reparented to init)
        out = tmp_path / "out"
        subprocess.run(["setsid", "sh", "-c", f"({sys.executable} -c \"{code}\" > {out} 2>&1 &)"], env=full,
                       timeout=60)
        deadline = __import__("time").monotonic() + 30
        while not (out.exists() and out.read_text().strip()) and __import__("time").monotonic() < deadline:
            __import__("time").sleep(0.05)
        assert out.read_text().split() == ["False", "False"], out.read_text()


def test_break_switch_imports_no_self_test_harness():
    code = ("import sys, swarmgate.break_switch as b; b.broken('x'); b.refusal(); "
            "print(sorted(m for m in sys.modules if m.startswith('swarmgate.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert "swarmgate.selftest" not in out and "swarmgate.tool_start" not in out, out
