"""Type hints on the guard contract hold: mypy finds no error in the modules a guard is written
against (Guard, Case, Finding and the check/act signature; the event; the engine that runs the three
phases; the registry; the derived facts; the state paths every guard's state goes through)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.project.package_map import ROOT

CONTRACT = ("swarmgate/guard.py", "swarmgate/hook_protocol.py", "swarmgate/hook_engine.py",
            "hooks/registry.py", "hooks/derivations.py", "swarmgate/state_paths.py")


def _mypy() -> list[str]:
    try:
        import mypy  # noqa: F401, PLC0415 - only to know whether it is installed
    except ImportError:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    return [sys.executable, "-m", "mypy"]


def test_the_guard_contract_type_checks(tmp_path):
    cp = subprocess.run([*_mypy(), "--ignore-missing-imports", "--follow-imports=silent",
                         "--cache-dir", str(tmp_path / "mypy-cache"), *CONTRACT],
                        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, f"mypy on the guard contract:\n{cp.stdout}{cp.stderr}"
    assert f"no issues found in {len(CONTRACT)} source files" in cp.stdout, cp.stdout
