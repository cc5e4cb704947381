"""The mutation test of the self-tests (issue 11): with every break switch made inert, every suite
must fail, each switched cell staying green; with the switches live, every suite passes, each
switched cell red for the reason it names. A suite that passes with inert switches counts
something other than the protection as red (a crash, the tool's 251, a timeout).

Inert switches are the marker's doing (break_switch.selftest_marker(inert=True)): the harness
alone writes it, and it can only make a run stricter. Every cell returns an Observed
(swarmgate/cell_outcome.py): a bool cell cannot say why it went red.
"""
from __future__ import annotations

import os

import pytest

from swarmgate import break_switch as bs
from swarmgate import selftest
from swarmgate.cell_outcome import GREEN, RED, Observed
from swarmgate.hooks import registry
from tests.hosts.cgroups import cgroups_writable

pytestmark = pytest.mark.slow


def _suite_names() -> list[str]:
    return list(dict.fromkeys([g.code for g in registry.guards()] + list(selftest.TOOL_SUITES)))


def _needs_cgroups(name: str) -> str | None:
    """Why a suite cannot run here (the runner's and multi-host-run's need memory cgroups)."""
    if name not in ("run-with-memory-cap", "multi-host-run"):
        return None
    return cgroups_writable("auto")


@pytest.fixture(autouse=True)
def _own_state(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", str(tmp_path / "no-hosts.toml"))
    monkeypatch.delenv("SWARMGATE_BREAK", raising=False)


@pytest.mark.parametrize("name", _suite_names())
def test_every_suite_fails_with_its_switches_inert_and_passes_with_them_live(name):
    why = _needs_cgroups(name)
    if why:
        pytest.skip(why)  # under SWARMGATE_REQUIRE_REAL_PARTS=1 a skip fails (tests/conftest.py)
    suites = [s for s in selftest.all_suites([name]) if s.name == name]  # G01: a file and a shell side
    assert suites, name
    for suite in suites:
        assert suite.switches, f"{name} has no break switch: nothing proves it can turn red"

        live = selftest.run_suite(suite)
        assert live.ok, [r for r in live.rows if not r[3]]
        switched = [(r, st) for r, st in zip(live.rows, live.states) if r[0]]
        assert switched and all(st == RED for _, st in switched), switched

        inert = selftest.run_suite(suite, inert=True)
        assert not inert.ok, f"{name} passes with every break switch inert"
        rows = list(zip(inert.rows, inert.states))
        assert all(st == GREEN for r, st in rows if not r[0]), rows  # the clean cells as before
        assert all(st == GREEN for r, st in rows if r[0]), \
            f"{name}: with inert switches a switched cell must stay green (protection still there): {rows}"


@pytest.mark.parametrize("name", _suite_names())
def test_every_cell_says_what_it_saw(name):
    """Each registered cell returns an Observed (green / red / broken with a reason), not a bool."""
    why = _needs_cgroups(name)
    if why:
        pytest.skip(why)
    for suite in [s for s in selftest.all_suites([name]) if s.name == name]:
        if suite.setup:
            suite.setup()
        try:
            for cell in suite.cells:
                got = cell.run()
                assert isinstance(got, Observed), (name, cell.name, got)
        finally:
            if suite.teardown:
                suite.teardown()


def test_inert_switches_come_from_the_harness_only(monkeypatch, tmp_path):
    """No environment variable makes switches inert or live: the marker alone says which."""
    with bs.selftest_marker(inert=True) as env:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("SWARMGATE_BREAK", "x")
        bs._cache.clear()
        assert bs.refusal() is None and not bs.broken("x")
    with bs.selftest_marker() as env:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        bs._cache.clear()
        assert bs.broken("x")
    assert os.environ.get("SWARMGATE_BREAK") == "x"
