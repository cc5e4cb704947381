"""The self-test harness: every cell green clean, every switch turns its cells red."""
from __future__ import annotations

import os
import subprocess
import sys

from swarmgate import guard as G
from swarmgate import selftest
from swarmgate.break_switch import broken
from swarmgate.hooks import registry


def _protected(value: int) -> bool:
    """A toy protection: refuse negative values unless its break switch is on."""
    if broken("toy-allow-negative"):
        return True
    return value >= 0


def toy_suite(extra_switch: str | None = None) -> selftest.Suite:
    cells = [selftest.Cell("refuses-negative", lambda: _protected(-1) is False),
             selftest.Cell("accepts-positive", lambda: _protected(1) is True)]
    switches = {"toy-allow-negative": ["refuses-negative"]}
    if extra_switch:
        switches[extra_switch] = ["refuses-negative"]  # a switch nothing honours: its cell stays green
    return selftest.Suite("toy", cells, switches)


def test_a_working_switch_passes():
    res = selftest.run_suite(toy_suite())
    assert res.ok, res.rows
    assert ("toy-allow-negative", "refuses-negative", "red", True) in res.rows


def test_a_switch_that_does_not_turn_its_cell_red_fails_the_selftest():
    res = selftest.run_suite(toy_suite("toy-does-nothing"))
    assert not res.ok
    assert ("toy-does-nothing", "refuses-negative", "green", False) in res.rows


def test_a_red_cell_in_the_clean_run_fails():
    suite = selftest.Suite("t", [selftest.Cell("broken", lambda: False)], {})
    res = selftest.run_suite(suite)
    assert not res.ok and res.rows == [("", "broken", "RED", False)]


def test_a_crashing_cell_is_red_not_a_traceback(capsys):
    def boom():
        raise RuntimeError("x")
    res = selftest.run_suite(selftest.Suite("t", [selftest.Cell("c", boom)], {}))
    assert not res.ok
    assert "cell c raised RuntimeError" in capsys.readouterr().err


def test_a_switch_naming_a_missing_cell_fails():
    res = selftest.run_suite(selftest.Suite("t", [selftest.Cell("c", lambda: True)], {"s": ["nope"]}))
    assert ("s", "nope", "no such cell", False) in res.rows


def test_switches_are_not_honoured_in_the_clean_run(monkeypatch):
    monkeypatch.setenv("SWARMGATE_BREAK", "toy-allow-negative")  # leaked from outside
    res = selftest.run_suite(toy_suite())
    assert res.ok


def _toy_guard(honour_switch: bool) -> G.Guard:
    def check(event, config):
        if honour_switch and broken("toy-guard-off"):
            return None
        if "danger" in (event.shell_command or ""):
            return G.Finding("Z01", "danger", "do not")
        return None
    return G.Guard("Z01", "toy", ("PreToolUse",), ("Bash",), check, G.GuardDoc("w", "e", "i"),
                   {"toy-guard-off": "no check"},
                   cases=(G.Case("fires", "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "danger"}},
                                 fires=True, breaks=("toy-guard-off",)),
                          G.Case("quiet", "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}},
                                 fires=False)))


def test_guard_suite_built_from_cases():
    assert selftest.run_suite(selftest.guard_suite(_toy_guard(True))).ok
    res = selftest.run_suite(selftest.guard_suite(_toy_guard(False)))  # switch not wired: always green
    assert not res.ok
    assert ("toy-guard-off", "fires", "green", False) in res.rows


def test_every_registered_guard_suite_passes():
    for g in registry.guards():
        res = selftest.run_suite(selftest.guard_suite(g))
        bad = [r for r in res.rows if not r[3]]
        assert not bad, (g.code, bad)


def test_selftest_cli(capsys):
    assert selftest.main(["G01"]) == 0
    out = capsys.readouterr().out
    assert "g01-allow-file-tools -> settings-write" in out and "0 failed" in out
    assert selftest.main(["NOPE"]) == 251
    assert "unknown suite 'NOPE'" in capsys.readouterr().err


def test_selftest_cli_through_the_entry_point(tmp_path):
    swarmgate = os.path.join(os.path.dirname(sys.executable), "swarmgate")
    proc = subprocess.run([swarmgate, "selftest", "-q", "G01"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SWARMGATE_STATE_DIR": str(tmp_path / "st")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failed" in proc.stdout
    # markers live in a fixed place (their removal: break_switch_test), never under the state dir
    assert not (tmp_path / "st" / "selftest").exists()
