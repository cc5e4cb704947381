"""Under SWARMGATE_REQUIRE_REAL_PARTS=1 every skip fails (one rule in tests/conftest.py): a test, a
fixture or a module that skips because a real part is missing turns the run red, naming why."""
from __future__ import annotations

import os
import subprocess
import sys

PROBE = '''
import pytest

def test_skips_in_the_test():
    pytest.skip("no frobnicator here")

@pytest.fixture
def part():
    pytest.skip("no sshd here")

def test_skips_in_a_fixture(part):
    pass

@pytest.mark.xfail(reason="a known bug, not a missing part")
def test_xfail():
    assert False

def test_passes():
    pass
'''
MODULE_SKIP = 'import pytest\npytest.skip("no cgroups here", allow_module_level=True)\n'
CONFTEST = "from tests.conftest import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401\n"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(tmp_path, require: bool) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "probe_test.py").write_text(PROBE)
    (tmp_path / "module_test.py").write_text(MODULE_SKIP)
    env = {k: v for k, v in os.environ.items() if k != "SWARMGATE_REQUIRE_REAL_PARTS"}
    env["PYTHONPATH"] = ROOT
    if require:
        env["SWARMGATE_REQUIRE_REAL_PARTS"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           "--continue-on-collection-errors",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)


def test_skips_are_skips_by_default(tmp_path):
    p = _run(tmp_path, require=False)
    assert p.returncode == 0, p.stdout
    assert "1 passed, 3 skipped, 1 xfailed" in p.stdout


def test_every_skip_fails_when_real_parts_are_required(tmp_path):
    p = _run(tmp_path, require=True)
    assert p.returncode == 1, p.stdout
    out = p.stdout
    for why in ("no frobnicator here", "no sshd here", "no cgroups here"):
        assert f"SWARMGATE_REQUIRE_REAL_PARTS=1: this test was skipped ({why})" in out, out
    assert "1 passed" in out and "1 xfailed" in out and "skipped" not in out.splitlines()[-1]
