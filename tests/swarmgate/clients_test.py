"""The client table: every guard has a coverage entry per client, the engine honours it, the
docs show it, and the pins are one well-formed file that .ci/run reads."""
from __future__ import annotations

import json
import os
import re

import pytest

from swarmgate import clients, docs
from swarmgate import guard as G
from swarmgate.hook_engine import answer as engine_answer
from swarmgate.hooks import registry

CODES = sorted({g.code for g in registry.guards()})
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_every_guard_has_a_coverage_entry(client):
    table = clients.COVERAGE[client]
    assert sorted(table) == CODES, f"{client}: add or remove entries in swarmgate.clients.COVERAGE"
    for code, (status, note) in table.items():
        assert status in (clients.FULL, clients.PARTIAL, clients.OFF), code
        if status != clients.FULL:
            assert note.strip(), f"{client} {code}: say what it cannot see, or why it does not run"


def test_claude_runs_everything_and_notes_nothing():
    guards = registry.guards()
    assert clients.apply_coverage("claude", guards) == (list(guards), [])


def test_off_guards_are_skipped_and_noted(repo):
    by = registry.by_code()
    run, notes = clients.apply_coverage("gemini", [by["H02"], by["S01"], by["G01"]])
    assert [g.code for g in run] == ["S01", "G01"]
    assert notes[0].startswith("H02 not run under Gemini CLI: Gemini sends no SubagentStop")
    assert notes[1].startswith("S01 in part:")


def test_an_off_guard_does_not_run_and_the_log_says_why(repo):
    fired = []
    g = G.Guard("D21", "x", ("PreToolUse",), ("Agent",), lambda e, c: fired.append(1),
                G.GuardDoc("w", "e", "i"), {})
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "tool_name": "spawn_agent",
                          "tool_input": {"message": "do it"}})
    out, code = engine_answer("PreToolUse", payload, registry=[g], client="codex")
    assert (out, code) == ("{}", 0) and fired == []
    rec = json.loads((repo / ".swarmgate" / "log" / "decisions.jsonl").read_text().splitlines()[-1])
    assert rec["client"] == "codex" and rec["client_tool"] == "spawn_agent"
    assert rec["limits"] == ["D21 not run under Codex CLI: " + clients.COVERAGE["codex"]["D21"][1]]


def test_docs_clients_md_holds_the_coverage_table():
    path = os.path.join(ROOT, "docs", "clients.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    (target,) = [t for t in docs.TARGETS if t.rel == "docs/clients.md"]
    assert target.updated(text) == text, \
        f"{path} is out of date with swarmgate.clients: run `swarmgate docs` to regenerate it"
    for item in clients.CANNOT["codex"] + clients.CANNOT["gemini"]:
        assert item in text


def test_pins_are_one_file_read_by_ci_and_the_tests():
    pins = clients.pins()
    assert set(pins) == set(clients.CLIENTS)
    for pin in pins.values():
        assert re.fullmatch(r"@[a-z-]+/[a-z-]+", pin["npm"]) and re.fullmatch(r"\d+\.\d+\.\d+", pin["version"])
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert "client_pins.json" in ci, ".ci/run must install the clients from swarmgate/client_pins.json"
    for pin in pins.values():
        assert pin["version"] not in ci, f".ci/run repeats the pin {pin['version']}: read it from the pins file"


def test_dialects_name_the_client_and_map_events():
    for client in clients.CLIENTS:
        d = clients.dialect(client)
        assert d.CLIENT == client
        assert d.canonical_event("PreToolUse" if client != "gemini" else "BeforeTool") == "PreToolUse"
    with pytest.raises(ValueError, match="unknown client 'copilot'"):
        clients.dialect("copilot")
