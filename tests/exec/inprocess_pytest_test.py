"""pytest's entry points checked inside Python (hooks/inprocess_pytest.py, issue 24 item 2): real Python
processes with the session's site directory first on PYTHONPATH, as the env file puts it, running the
real pytest of this venv on a repository with a heavy test directory whose test leaves a marker."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

from swarmgate import break_switch as bs
from swarmgate.hooks import exec_shims
from swarmgate.hooks.exec_check import _pytest_args
from swarmgate.hooks.inprocess_pytest import JUDGED_ENV, digest
from swarmgate.state_paths import selftest_marker_dir

PY = sys.executable
PYTEST = os.path.join(os.path.dirname(sys.executable), "pytest")
CONFIG = '[heavy]\npatterns = ["pytest tests/heavy"]\n'


@pytest.fixture
def inproc(shimmed, tmp_path):
    heavy = tmp_path / "HEAVY"
    unit = tmp_path / "UNIT"
    for rel, marker in (("tests/heavy/test_h.py", heavy), ("tests/unit/test_u.py", unit)):
        p = shimmed.repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"def test_it():\n    open({str(marker)!r}, 'w').write('ran')\n")
    shimmed.configure(CONFIG)
    shimmed.heavy, shimmed.unit = heavy, unit
    shimmed.site = str(shimmed.shims / exec_shims.SITE_DIR)
    return shimmed


def run(s, command: str, *, cwd=None, path: str | None = None, **extra: str):
    """``command`` in bash as an agent's command runs: the env file's PYTHONPATH line applied."""
    extra.setdefault("PYTHONPATH", s.site)
    return s.run(command, cwd=cwd, path=path, PYTEST_ADDOPTS=extra.pop("PYTEST_ADDOPTS", "-q -p no:cacheprovider"),
                 **extra)


def refused(s, r, rc: int = 249) -> bool:
    ok = r.returncode == rc and "heavy program refused where it starts" in r.stderr and not s.heavy.exists()
    return ok and any(d.get("codes") == ["X01"] and d.get("tool") == "pytest" for d in s.decisions())


@pytest.mark.parametrize("command", [
    f"{PY} -c \"import pytest; pytest.main(['tests/heavy'])\"",
    f"{PY} -c \"import pytest, sys; sys.exit(pytest.main(['-x', 'tests/' + 'heavy']))\"",
    f"{PY} -c \"import runpy, sys; sys.argv = ['pytest', 'tests/heavy']; "
    f"runpy.run_module('pytest', run_name='__main__')\"",
    f"{PY} -c \"import importlib; getattr(importlib.import_module('_pytest.config'), 'console_main')()\" tests/heavy",
    f"{PYTEST} tests/heavy",                      # the venv's script by absolute path: no PATH shim sees it
    f"{PY} -m pytest tests",                      # a superset of the heavy directory
    f"cd tests && {PY} -m pytest heavy",
    f"{PY} -c \"import pytest; pytest.main([])\"",  # a bare run collects tests/heavy
])
def test_an_in_process_heavy_run_is_refused_before_it_collects(inproc, command):
    r = run(inproc, command)
    assert refused(inproc, r), (r.returncode, r.stdout[-800:], r.stderr[-800:])


def test_a_wrapper_that_catches_the_exit_still_runs_nothing(inproc):
    """cProfile catches SystemExit and exits 0: the refusal stands, nothing was collected."""
    r = run(inproc, f"{PY} -m cProfile -o /dev/null -m pytest tests/heavy")
    assert refused(inproc, r, rc=0), (r.returncode, r.stderr)


def test_pytest_addopts_and_args_files_are_the_effective_arguments(inproc):
    r = run(inproc, f"{PY} -c \"import pytest; pytest.main(['tests/unit'])\"", PYTEST_ADDOPTS="tests/heavy")
    assert refused(inproc, r), r.stderr
    (inproc.repo / "args.txt").write_text("tests/heavy\n")
    r = run(inproc, f"{PY} -c \"import pytest; pytest.main(['@args.txt'])\"")
    assert refused(inproc, r), r.stderr


@pytest.mark.parametrize("command", [
    f"{PY} -c \"import pytest; pytest.main(['tests/unit'])\"",
    f"{PYTEST} tests/unit",
    f"cd tests && {PY} -m pytest unit",
    "pytest tests/unit",                          # through the shim, then judged once (the shim's mark)
])
def test_a_narrow_in_process_run_runs(inproc, command):
    inproc.standin.joinpath("pytest").unlink()    # the shim's real pytest: this venv's
    r = run(inproc, command)
    assert r.returncode == 0 and inproc.unit.exists() and not inproc.heavy.exists(), (r.stdout, r.stderr)


def test_the_break_switch_lets_it_run(inproc):
    with bs.selftest_marker() as env:   # a switch counts only inside a self-test (this process)
        r = run(inproc, f"{PY} -c \"import pytest; pytest.main(['tests/heavy'])\"",
                SWARMGATE_BREAK="x01-allow-heavy-exec", **env)
    try:
        os.rmdir(selftest_marker_dir())  # only when empty: another self-test may be running
    except OSError:
        pass
    assert r.returncode == 0 and inproc.heavy.exists(), r.stderr


def test_a_mark_for_other_arguments_or_another_process_is_not_a_pass(inproc):
    other = f"$$:{digest(['tests/unit'])}"
    heavy = f"{PY} -c \"import pytest; pytest.main(['tests/heavy'])\""
    r = run(inproc, f"export {JUDGED_ENV}={other}; exec {heavy}")
    assert refused(inproc, r), r.stderr
    r = run(inproc, f"export {JUDGED_ENV}=1:{digest(['tests/heavy'])}; {heavy}")
    assert refused(inproc, r), r.stderr


def test_a_program_started_through_a_shim_gets_the_site_directory_back(inproc):
    """`PYTHONPATH= python3 x.py`: the python3 shim puts the site directory first again."""
    (inproc.repo / "x.py").write_text("import pytest\npytest.main(['tests/' + 'heavy'])\n")
    r = run(inproc, "PYTHONPATH= python3 x.py")
    assert refused(inproc, r), (r.returncode, r.stderr)


def test_the_projects_own_sitecustomize_still_runs(inproc, tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text(f"open({str(tmp_path / 'OWN')!r}, 'w').write('x')\n")
    r = run(inproc, f"{PY} -c \"import sitecustomize, pytest; print(sitecustomize.__file__); "
                    f"pytest.main(['tests/heavy'])\"",
            PYTHONPATH=f"{inproc.site}:{own}")
    assert (tmp_path / "OWN").exists() and str(own / "sitecustomize.py") in r.stdout
    assert refused(inproc, r), r.stderr


def test_no_pytest_no_cost(inproc):
    r = run(inproc, f"{PY} -c \"import sys; print('_pytest.config' in sys.modules, "
                    f"sys.meta_path[0].__class__.__name__)\"")
    assert r.stdout.split() == ["False", "_Finder"], r.stdout + r.stderr


def test_a_shim_directory_without_its_record_fails_closed_and_a_removed_one_guards_nothing(inproc):
    (inproc.shims / exec_shims.META).unlink()
    r = run(inproc, f"{PY} -c \"import pytest; pytest.main(['tests/heavy'])\"")
    assert r.returncode == 249 and "cannot run" in r.stderr and not inproc.heavy.exists(), r.stderr
    shutil.rmtree(inproc.shims)                   # the session's state is gone: so is its sitecustomize
    r = run(inproc, f"{PY} -c \"import pytest; pytest.main(['tests/heavy'])\"")
    assert r.returncode == 0 and inproc.heavy.exists(), r.stderr


def test_the_shim_marks_what_it_judged_with_the_arguments_pytest_will_see():
    assert _pytest_args("pytest", ["-q", "tests/unit"]) == ["-q", "tests/unit"]
    assert _pytest_args("python3", ["-m", "pytest", "tests/unit"]) == ["tests/unit"]
    assert _pytest_args("python3", ["x.py", "-m", "pytest"]) is None
    assert _pytest_args("cargo", ["test"]) is None


def test_the_env_file_puts_the_site_directory_first_on_pythonpath(inproc):
    text = exec_shims.env_file_lines(str(inproc.shims))
    r = inproc.run(text + 'printf "%s" "$PYTHONPATH"', PYTHONPATH="/a")
    assert r.stdout == f"{inproc.site}:/a"
    r = inproc.run("unset PYTHONPATH\n" + text + 'printf "%s" "$PYTHONPATH"')
    assert r.stdout == inproc.site
