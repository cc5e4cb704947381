"""Every registered guard is a complete rule, and docs/guards.md matches the registry.

Written over whatever guards are registered: a new guard without a doc, a
firing and a non-firing case, or a break switch fails here.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json as _json
import os
import re
import subprocess
import sys
from fnmatch import fnmatchcase

import pytest

import swarmgate.hooks.registry as reg
from swarmgate import docs
from swarmgate import guard as G
from swarmgate import guard_requirements as requirements
from swarmgate.guard import SHELL_TOOLS
from swarmgate.hooks import registry
from swarmgate.hooks.derivations import BUILDERS
from swarmgate.hooks.protected_paths import glob_match
from swarmgate.install import HOOK_GROUPS

GUARDS = registry.guards()
CODE = re.compile(r"^[A-Z]\d\d$")
IDS = [f"{g.code}-{i}" for i, g in enumerate(GUARDS)]


def test_there_are_guards():
    assert GUARDS, "no guard is registered"


def test_docs_guards_md_is_up_to_date():
    path = docs.default_path()
    want = docs.render(GUARDS)
    try:
        with open(path, encoding="utf-8") as f:
            have = f.read()
    except FileNotFoundError:
        have = None
    assert have == want, f"{path} is out of date with the guard registry: run `swarmgate docs` to regenerate it"


def test_docs_check_fails_when_out_of_date(tmp_path, capsys):
    out = tmp_path / "guards.md"
    out.write_text("stale\n")
    assert docs.main(["--check", "--out", str(out)]) == 1
    assert "run `swarmgate docs`" in capsys.readouterr().err
    assert docs.main(["--out", str(out)]) == 0
    assert docs.main(["--check", "--out", str(out)]) == 0
    text = out.read_text()
    for g in GUARDS:
        assert f"## {g.code}: {g.summary}" in text
        assert f'{g.code} = "off"' in text


@pytest.mark.parametrize("g", GUARDS, ids=IDS)
def test_guard_is_complete(g):
    """Every requirement of swarmgate/guard_requirements.py (docs/contributing.md lists the same)."""
    assert not requirements.problems(g)


def test_the_requirements_can_fail():
    doc = G.GuardDoc(why="", example="", instead="")
    bare = [G.Guard(code="b1", summary="two\nlines", events=("PreToolUse",), tools=SHELL_TOOLS, check=None,
                    doc=doc, breaks={"Bad_Name": ""}, cases=(G.Case("x", "Stop", {}, True, breaks=("other",)),)),
            G.Guard(code="B99", summary="s", events=(), tools=(), check=None, doc=doc, breaks={})]
    for r in requirements.REQUIREMENTS:
        assert any(r.problems(g) for g in bare), f"requirement {r.key} passed guards that lack it"


def test_contributing_lists_every_requirement():
    text = open(os.path.join(docs.source_root(), "docs", "contributing.md"), encoding="utf-8").read()
    assert requirements.checklist() in text, "docs/contributing.md is out of date: run `swarmgate docs`"


def test_codes_are_unique_rules():
    """One code is one rule: Guard objects sharing a code (e.g. a file side and a shell side)
    share the summary and never run on the same (event, tool)."""
    by: dict[str, list] = {}
    for g in GUARDS:
        by.setdefault(g.code, []).append(g)
    for code, group in by.items():
        assert len({g.summary for g in group}) == 1, f"{code} is used by different rules: {group}"
        seen = set()
        for g in group:
            for ev in g.events:
                for tool in g.tools or ("*",):
                    assert (ev, tool) not in seen, f"{code} is registered twice for {ev}/{tool}"
                    seen.add((ev, tool))


def test_every_module_in_the_registry_defines_guards():
    for name in registry.MODULES:
        mod = importlib.import_module(name)
        assert name.startswith("swarmgate.hooks."), name
        assert isinstance(mod.GUARDS, tuple) and mod.GUARDS, f"{name} must define a non-empty GUARDS tuple"


HEAVY = ("bashlex", "psutil", "rich", "pynvml", "filelock", "tomllib", "argparse")


def test_guard_modules_are_light_at_import():
    """The hook imports the registry on every call: no heavy module at import time."""
    code = ("import sys; import swarmgate.hooks.registry as r; r.guards(); "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SWARMGATE_STATE_DIR": "/nonexistent-swarmgate-test"})
    assert proc.returncode == 0, proc.stderr
    loaded = [m for m in proc.stdout.strip().split(",") if m]
    assert not [m for m in loaded if m in ("bashlex", "psutil", "rich", "pynvml")], \
        f"importing the guard registry loads {loaded}: import them inside the check functions"



def test_guard_cases_are_built_on_first_use():
    """A hook call reads no case: each guard's cases (fixtures, payloads, state files) are a function
    called on first use (Guard.cases), not a table built when the hook imports the module (measured:
    ~1 ms of a Bash call and ~2 ms of a Write call, bench/hook_latency.py)."""
    code = ("import swarmgate.hooks.registry as r; "
            "print(','.join(sorted({n + ':' + g.code for n in r.MODULES for g in r._module(n).GUARDS "
            "if not callable(g._cases)})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SWARMGATE_STATE_DIR": "/nonexistent-swarmgate-test"})
    assert proc.returncode == 0, proc.stderr
    eager = [c for c in proc.stdout.strip().split(",") if c]
    assert not eager, f"guards {eager} build their cases at import: write `cases=lambda: (...)`"


@pytest.mark.parametrize("name", [".claude/settings.json", ".claude/settings.local.json", ".claude/settingsX.json",
                                  ".claude/settings.json.bak", ".claude/hooks/a/b", ".claude/hooks", ".swarmgate/x",
                                  ".git/hooks/pre-commit", "src/x.py", "aXbYc", "abac", "a", ""])
@pytest.mark.parametrize("pat", ["*", "a*b*c", "*a*a*", ".claude/settings*.json", ".swarmgate/**", "x?", "[ab]*"])
def test_protected_paths_glob_agrees_with_fnmatch(name, pat):
    assert glob_match(name, pat) == fnmatchcase(name, pat)


def test_every_guard_is_reached_by_an_installed_hook_entry():
    """A guard on an event/tool that `swarmgate install` does not wire would never run."""
    wired: dict[str, list] = {}
    for event, matcher, _ in HOOK_GROUPS:
        wired.setdefault(event, []).append(matcher)
    for g in GUARDS:
        for event in g.events:
            if event == G.EXEC_EVENT:
                continue   # reached through the exec-time shims, not through a hook entry
            assert event in wired, f"{g.code} runs on {event}, which install does not wire (HOOK_GROUPS)"
            if None in wired[event]:
                continue
            for tool in g.tools:
                assert any(re.fullmatch(m, tool) for m in wired[event]), \
                    f"{g.code} runs on {event}/{tool}, which no installed matcher covers: add it to HOOK_GROUPS"


def _all_routes():
    out = set()
    for event, matcher, _ in HOOK_GROUPS:
        for tool in (matcher.split("|") if matcher else [None]):
            out.add((event, tool))
    for g in GUARDS:
        for ev in g.events:
            for t in g.tools or (None,):
                out.add((ev, t))
    return sorted(out, key=str)


def test_guards_for_imports_only_what_an_event_needs_and_misses_nothing(monkeypatch):
    """The shipped route table never drops a guard: same guards, same order, as filtering the full registry."""
    assert registry.route_table_gaps() == [], (
        "registry.ROUTES is missing routes the guards declare; add them:\n"
        + "\n".join(registry.route_table_gaps()))
    for event, tool in _all_routes():
        monkeypatch.setattr(registry, "_cache", None)
        got = registry.guards_for(event, tool)
        want = [g for g in GUARDS if g.applies(event, tool)]
        assert [g.code for g in got] == [g.code for g in want], (event, tool)


def test_a_route_table_that_misses_a_route_is_caught(monkeypatch):
    broken = dict(registry.ROUTES)
    broken["swarmgate.hooks.file_guards"] = (("PreToolUse", ("Write", "Edit")),)
    broken["swarmgate.hooks.stop_guards"] = (("Stop", ("Bash",)), ("SubagentStop", "*"))
    del broken["swarmgate.hooks.session_context"]  # unknown to the table: always imported, never a gap
    monkeypatch.setattr(registry, "ROUTES", broken)
    assert registry.route_table_gaps() == [
        "swarmgate.hooks.file_guards: PreToolUse/MultiEdit", "swarmgate.hooks.file_guards: PreToolUse/NotebookEdit",
        "swarmgate.hooks.stop_guards: Stop/*"]
    monkeypatch.setattr(registry, "_cache", None)
    assert "C01" in [g.code for g in registry.guards_for("SessionStart", None)]


def test_a_file_tool_hook_call_does_not_import_the_dispatch_guards(tmp_path, repo):
    """Through a real process: only the modules routed to the call are imported, and nothing is
    written to or read from a route cache in the repository."""
    payload = _json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse",
                           "tool_name": "Write", "tool_input": {"file_path": str(repo / "a.txt"), "content": ""}})
    code = ("import sys; from swarmgate.cli import main; rc = main(['hook', 'PreToolUse']); "
            "sys.stderr.write('MODULES ' + "
            "' '.join(sorted(m for m in sys.modules if m.startswith('swarmgate.hooks.'))))")
    env = {**os.environ, "SWARMGATE_STATE_DIR": str(tmp_path / "st")}
    proc = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True,
                          cwd=repo, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not (repo / ".swarmgate" / "cache").exists()
    loaded = proc.stderr.rsplit("MODULES ", 1)[1].split()
    routed = {name for name in registry.MODULES
              if any(g.applies("PreToolUse", "Write") for g in __import__("importlib").import_module(name).GUARDS)}
    assert routed <= set(loaded)
    unrouted = set(registry.MODULES) - routed
    assert unrouted - set(loaded), f"every guard module was imported for a Write call: {loaded}"


# --- the guard contract in three phases (swarmgate/guard.py) ---

def _imports_of(name: str) -> set:
    """The swarmgate modules ``name`` imports anywhere in its text (top level or inside functions)."""
    origin = importlib.util.find_spec(name).origin
    tree = ast.parse(open(origin).read(), origin)
    pkg = name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m.startswith("swarmgate.") and _is_module(m)}


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, AttributeError):   # `from swarmgate.x import name`: name is not a module
        return False


def _import_path(start: str, targets: set) -> list | None:
    """The chain of imports from ``start`` to a module in ``targets`` (not through another target)."""
    seen, todo = {start}, [[start]]
    while todo:
        chain = todo.pop(0)
        for m in sorted(_imports_of(chain[-1])):
            if m in targets and m != start:
                return chain + [m]
            if m not in seen and m not in targets:
                seen.add(m)
                todo.append(chain + [m])
    return None


@pytest.mark.parametrize("name", registry.MODULES)
def test_a_rule_module_never_imports_another_rule_module(name):
    """Rules share helper modules (shell_event, test_runs, heavy_commands, ...), never each other,
    directly or through a helper."""
    chain = _import_path(name, set(registry.MODULES))
    assert chain is None, f"{name} reaches another rule module: {' -> '.join(chain)}"


def test_the_rule_import_test_can_fail(monkeypatch):
    assert _import_path("swarmgate.hooks.stop_guards", {"swarmgate.hook_engine"}) is not None
    assert _import_path("swarmgate.hooks.write_scope", set(reg.MODULES) | {"swarmgate.hooks.shell_event"})


def test_every_needed_fact_has_a_builder():
    for g in GUARDS:
        assert set(g.needs) <= set(BUILDERS), f"{g.code} needs {set(g.needs) - set(BUILDERS)}: no such derivation"


def test_at_most_one_act_that_may_refuse_per_event_and_tool():
    """A late refusal stops the acts after it; a second act that may refuse could have recorded
    already. So one per (event, tool): the dispatch guards share one."""
    by: dict = {}
    for g in GUARDS:
        if g.act is not None and g.act_refuses:
            assert g.events == ("PreToolUse",), f"{g.code}: only a PreToolUse act may refuse"
            for tool in g.tools or ("*",):
                by.setdefault(tool, set()).add(g.act)
    for tool, acts in by.items():
        assert len(acts) == 1 or tool == "*" and not acts, f"{tool}: {len(acts)} acts may refuse late"
    assert "*" not in by or all(len(a) == 1 and not (set(by) - {"*"}) for a in by.values())
