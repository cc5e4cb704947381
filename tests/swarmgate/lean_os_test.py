"""swarmgate.lean_os: os's calls for the hook's path, without importing os."""
from __future__ import annotations

import os
import subprocess
import sys

from swarmgate import lean_os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fresh(code: str, env: dict) -> subprocess.CompletedProcess:
    """``code`` in a `python -I -S` process (no site: os is not imported, as in a hook process)."""
    return subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {ROOT!r})\n" + code],
                          capture_output=True, text=True, env=env, timeout=60)


def test_without_os_environ_is_the_starting_environment_read_only():
    env = {"PATH": "/usr/bin:/bin", "SWARMGATE_X": "a=b c", "NON_UTF8": "caf\udce9"}
    p = _fresh("from swarmgate import lean_os\n"
               "print('os' in sys.modules)\n"
               "snap = dict(lean_os.environ)\n"
               "try:\n    lean_os.environ['X'] = 'y'\nexcept TypeError:\n    print('read-only')\n"
               "print('os' in sys.modules)\n"
               "import os\n"
               "print(snap == dict(os.environ), snap.get('NON_UTF8') == 'caf\\udce9', lean_os.environ is os.environ)\n",
               env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["False", "read-only", "False", "True", "True", "True"], p.stdout


def test_once_os_is_imported_environ_is_os_environ(monkeypatch):
    assert lean_os.environ is os.environ
    monkeypatch.setenv("SWARMGATE_LEAN_OS_TEST", "1")
    assert lean_os.environ.get("SWARMGATE_LEAN_OS_TEST") == "1"


def test_the_calls_are_oss_own():
    for name in lean_os.__all__:
        if name not in ("path", "makedirs", "fdopen", "execvp"):
            assert getattr(lean_os, name) is getattr(os, name), name
    assert lean_os.sep == os.sep


def test_makedirs_and_fdopen_behave_as_os(tmp_path):
    lean_os.makedirs(str(tmp_path / "a" / "b" / "c"))
    assert (tmp_path / "a" / "b" / "c").is_dir()
    lean_os.makedirs(str(tmp_path / "a" / "b"), exist_ok=True)
    for kw in ({}, {"exist_ok": False}):
        try:
            lean_os.makedirs(str(tmp_path / "a" / "b"), **kw)
            raise AssertionError("an existing directory without exist_ok must raise")
        except FileExistsError:
            pass
    (tmp_path / "f").write_text("x")
    try:
        lean_os.makedirs(str(tmp_path / "f"), exist_ok=True)
        raise AssertionError("a file in the way must raise even with exist_ok")
    except FileExistsError:
        pass
    fd = os.open(tmp_path / "g", os.O_WRONLY | os.O_CREAT)
    with lean_os.fdopen(fd, "w") as f:
        f.write("written")
    assert (tmp_path / "g").read_text() == "written"


def test_an_unknown_name_is_an_attribute_error():
    try:
        lean_os.no_such_call  # noqa: B018
        raise AssertionError("expected AttributeError")
    except AttributeError as e:
        assert "no_such_call" in str(e)
