"""The self-test harness: every cell green clean, every switch turns its cells red, and red
only for the reason the cell names (a crash, a 251 or a timeout is broken)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swarmgate import alerts
from swarmgate import guard as G
from swarmgate import selftest, selftest_cli
from swarmgate.agents import reminders
from swarmgate.break_switch import broken
from swarmgate.cell_outcome import BROKEN, GREEN, RED, by_exit, protected
from swarmgate.hooks import registry
from swarmgate.hosts import agent_cgroups, cgroups, ledger
from tests.hosts.cgroups import cgroups_writable, need_real


def _protected(value: int) -> bool:
    """A toy protection: refuse negative values unless its break switch is on."""
    if broken("toy-allow-negative"):
        return True
    return value >= 0


def toy_suite(extra_switch: str | None = None) -> selftest.Suite:
    cells = [selftest.Cell("refuses-negative", lambda: protected(_protected(-1) is False, "-1 accepted")),
             selftest.Cell("accepts-positive", lambda: protected(_protected(1) is True, "1 refused"))]
    switches = {"toy-allow-negative": ["refuses-negative"]}
    if extra_switch:
        switches[extra_switch] = ["refuses-negative"]  # a switch nothing honours: its cell stays green
    return selftest.Suite("toy", cells, switches)


def test_a_working_switch_passes():
    res = selftest.run_suite(toy_suite())
    assert res.ok, res.rows
    assert ("toy-allow-negative", "refuses-negative", "red: -1 accepted", True) in res.rows


def test_a_switch_that_does_not_turn_its_cell_red_fails_the_selftest():
    res = selftest.run_suite(toy_suite("toy-does-nothing"))
    assert not res.ok
    assert ("toy-does-nothing", "refuses-negative", "green", False) in res.rows


def test_inert_switches_leave_every_switched_cell_green():
    res = selftest.run_suite(toy_suite(), inert=True)
    assert not res.ok
    assert ("toy-allow-negative", "refuses-negative", "green", False) in res.rows


def test_a_red_cell_in_the_clean_run_fails():
    suite = selftest.Suite("t", [selftest.Cell("broken", lambda: protected(False, "let through"))], {})
    res = selftest.run_suite(suite)
    assert not res.ok and res.rows == [("", "broken", "red: let through", False)]


def test_a_crashing_cell_is_broken_not_red_and_fails_even_under_its_switch():
    def boom():
        raise RuntimeError("x")
    res = selftest.run_suite(selftest.Suite("t", [selftest.Cell("c", boom)], {"s": ["c"]}))
    assert not res.ok
    assert res.states == [BROKEN, BROKEN]
    assert res.rows[1] == ("s", "c", "broken: the cell raised RuntimeError: x", False)


@pytest.mark.parametrize("code, state", [(244, GREEN), (0, RED), (251, BROKEN), (1, BROKEN), (None, BROKEN),
                                         (-9, BROKEN)])
def test_a_tool_cell_is_red_only_for_the_unprotected_exit_code(code, state):
    assert by_exit(code, 244, 0, "host-dispatch").state == state


def test_a_tool_refusing_with_251_under_its_switch_fails_the_suite():
    """The issue's case: a tool cell counted the tool's own 251 as red, so the suite passed."""
    suite = selftest.Suite("t", [selftest.Cell("c", lambda: by_exit(0 if not broken("s") else 251, 244, 0))],
                           {"s": ["c"]})
    res = selftest.run_suite(suite)
    assert not res.ok and res.states == [RED, BROKEN]


def test_a_switch_naming_a_missing_cell_fails():
    res = selftest.run_suite(selftest.Suite("t", [selftest.Cell("c", lambda: True)], {"s": ["nope"]}))
    assert ("s", "nope", "missing: no such cell", False) in res.rows


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
    assert ("toy-guard-off", "fires", "green: fired", False) in res.rows


def test_a_guard_that_crashes_is_broken_not_fired():
    """The issue's case: A01's suite passed with a guard that always crashes (the engine's
    fail-closed answer, or an advisory guard's note, read as the guard firing)."""
    g = _toy_guard(True)
    for advisory in (False, True):
        def crash(event, config):
            raise RuntimeError("bug")
        bad = G.Guard("Z01", "toy", ("PreToolUse",), ("Bash",), crash, g.doc, g.breaks, cases=g.cases,
                      advisory=advisory)
        res = selftest.run_suite(selftest.guard_suite(bad))
        assert not res.ok
        assert set(res.states) == {BROKEN}, res.rows
        assert "the Z01 check crashed (RuntimeError: bug)" in res.rows[0][2]


def test_every_registered_guard_suite_passes():
    for g in registry.guards():
        res = selftest.run_suite(selftest.guard_suite(g))
        bad = [r for r in res.rows if not r[3]]
        assert not bad, (g.code, bad)


def test_selftest_cli(capsys):
    assert selftest_cli.main(["G01"]) == 0
    out = capsys.readouterr().out
    assert "g01-allow-file-tools -> settings-write" in out and "0 failed" in out
    assert selftest_cli.main(["NOPE"]) == 251
    assert "unknown suite 'NOPE'" in capsys.readouterr().err


def test_selftest_cli_through_the_entry_point(tmp_path):
    swarmgate = os.path.join(os.path.dirname(sys.executable), "swarmgate")
    proc = subprocess.run([swarmgate, "selftest", "-q", "G01"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SWARMGATE_STATE_DIR": str(tmp_path / "st")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failed" in proc.stdout
    # markers live in a fixed place (their removal: break_switch_test), never under the state dir
    assert not (tmp_path / "st" / "selftest").exists()


def _tree(root) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def test_a_suite_leaves_nothing_in_the_machines_state(tmp_path, monkeypatch):
    """What a suite's cells remind, book, record and alert goes to a state directory of the suite's
    own, removed after it: the machine's state directory is as it was (issue 22: a self-test's
    reminder woke a real session later; its capped run joined the run history)."""
    machine = tmp_path / "machine-state"
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(machine))
    reminders.add("a-real-session", "the person's own reminder", 4102444800.0)
    before = _tree(machine)
    seen: list[str] = []

    def leaves_traces():
        seen.append(os.environ["SWARMGATE_STATE_DIR"])
        reminders.add("a-real-session", "later", 4102444800.0)
        alerts.write_alert("selftest", "an alert of a cell")
        ledger.log_run({"label": "selftest", "exit": 0})
        with ledger.lock():
            data = ledger.load()
            data["bookings"]["1-1"] = {"pid": 1, "booked": 1}
            ledger.save(data)
        return protected(True, "")

    res = selftest.run_suite(selftest.Suite("traces", [selftest.Cell("c", leaves_traces)], {}))
    assert res.ok, res.rows
    assert seen and seen[0] != str(machine) and not os.path.exists(seen[0])   # its own, and gone
    assert _tree(machine) == before
    assert [r["message"] for r in reminders.load("a-real-session")] == ["the person's own reminder"]
    assert os.environ["SWARMGATE_STATE_DIR"] == str(machine)


def test_the_remind_suite_wakes_nobody_and_says_nothing(tmp_path, monkeypatch, capfd):
    """Its switch makes the waiter wait for a reminder "later": the waiter's words stay in the cell."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "machine-state"))
    assert selftest_cli.main(["remind"]) == 0
    out, err = capfd.readouterr()
    assert "woke you" not in out + err, out + err
    assert not (tmp_path / "machine-state").exists()


def test_a_guard_case_makes_its_cgroups_in_a_slice_of_its_own_and_removes_it(monkeypatch):
    """X02's case acts: it makes a subagent's containment cgroup. Under the machine's slice
    (`swarmgate-heavy`) that left the slice behind; a case's slice is its own and goes with it."""
    need_real(cgroups_writable("auto"))
    from_cgroups = cgroups.get("auto")
    made: list[str] = []
    real_ensure = agent_cgroups.ensure

    def ensure(config, *args, **kwargs):
        made.append(config["memory"]["slice"])
        return real_ensure(config, *args, **kwargs)

    monkeypatch.setattr(agent_cgroups, "ensure", ensure)
    machine_slice = from_cgroups.slice_path("swarmgate-heavy")
    had = os.path.isdir(machine_slice)
    for g in [g for g in registry.guards() if g.code == "X02"]:
        assert selftest.run_suite(selftest.guard_suite(g)).ok
    assert made and all(s.startswith("swarmgate-selftest-case-") for s in made), made
    assert not any(os.path.isdir(from_cgroups.slice_path(s)) for s in made)
    assert os.path.isdir(machine_slice) == had
