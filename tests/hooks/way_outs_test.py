"""No way-out leads into another refusal (issue 22): every command that names a heavy run or a run
scope, taken from the guard registry (the texts of every guard's refusals on its own firing cases,
its doc's "instead", X01's exec-time refusal) and from the rule templates (rules/main-agent.md,
agent-common.md, rules/rules/*.md, rules/agents/*.md), is filled in the way a model would (each
`<...>` with its own words, CAP with the cap this machine gives, COMMAND with a command) and run
through the real hook (`swarmgate hook PreToolUse`) as the agent it is written for: no guard refuses it. The same
command with its scope placeholders left as they are is refused by B10.

Nothing here is listed by hand: a new guard whose way-out names a heavy run, or a new template line,
is found and judged."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate import guard as G
from swarmgate.config import load_config
from swarmgate.hook_engine import answer as engine_answer
from swarmgate.host_defaults import heavy_cap_text
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks import registry
from swarmgate.hooks.test_runs import NARROW_WORDS, TEMPLATE_WORDS
from swarmgate.hosts.runner_selftest import Sandbox
from swarmgate.plugin_files import plugin_wording
from tests.hooks.conftest import RULES, denied
from tests.hosts.cgroups import cgroups_writable, need_real

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"
MARKS = ("run-with-memory-cap", "SWARMGATE_HEAVY=", "SWARMGATE_RUN_SCOPE=")
TICKS = re.compile(r"`([^`\n]+)`")
MAKEFILE = "check-full:\n\tcargo test --workspace\n"

# what a model writes for each field of the scope template
FILLED = {TEMPLATE_WORDS["target"]: "the parser tests", TEMPLATE_WORDS["range"]: "tests/test_parser.py",
          TEMPLATE_WORDS["reason"]: "changed the parser, so its tests are due",
          NARROW_WORDS: "tests/test_parser.py"}
NARROW = "pytest -q tests/test_parser.py"


def heavy_spans(text: str) -> list[str]:
    """The backquoted commands of ``text`` that name a heavy run or a run scope."""
    return [s for s in TICKS.findall(text) if any(m in s for m in MARKS) and not s.startswith("[")]


def way_out_spans(reason: str) -> list[str]:
    """The heavy commands of the way-outs of a refusal (one finding a line: `[CODE] what. Way out: ...`)."""
    return [s for line in reason.splitlines() if "Way out:" in line
            for s in heavy_spans(line.split("Way out:", 1)[1])]


def fill_others(command: str, subagent: bool, cap: str) -> str:
    """Every placeholder but the scope's: CAP, COMMAND, a trailing `...` of a command."""
    s = re.sub(r"\bCAP\b", cap, command)
    s = s.replace("cargo build ...", "cargo build --release")
    s = re.sub(r"-- COMMAND\b", "-- cargo build --release" if subagent else "-- cargo test --workspace", s)
    s = re.sub(r"\bCOMMAND\b", NARROW, s)
    if s.rstrip().endswith("'") and s.lstrip().startswith("SWARMGATE_RUN_SCOPE="):
        s += " " + NARROW       # the scope alone, as agent-common.md shows it: before a narrow run
    return s


def fill(command: str, subagent: bool, cap: str) -> str:
    s = fill_others(command, subagent, cap)
    return re.sub(r"<([^<>]+)>", lambda m: FILLED.get(m.group(1).strip(), "the parser module"), s)


# --- the sources -------------------------------------------------------------------------------------

def template_way_outs() -> list[tuple[str, str | None, str]]:
    """(where, agent type or None for the main agent, command) from the rule templates."""
    out = []
    for path in sorted(RULES.rglob("*.md")):
        rel = path.relative_to(RULES).as_posix()
        actor = None if rel == "main-agent.md" else (path.stem if rel.startswith("agents/") else "implementer")
        out += [(f"rules/{rel}", actor, s) for s in heavy_spans(path.read_text())]
    return out


def doc_way_outs() -> list[tuple[str, str | None, str]]:
    """(where, actor, command) from each guard's doc "instead": a command after "Subagents:" is a
    subagent's, the rest the main agent's."""
    out = []
    for g in registry.guards():
        text = g.doc.instead if g.doc else ""
        for m in TICKS.finditer(text):
            if not heavy_spans(m.group(0)):
                continue
            before = text[:m.start()]
            sub = before.rfind("Subagent") > before.rfind("Main agent")
            out.append((f"{g.code} doc", "implementer" if sub else None, m.group(1)))
    return out


def _case_repo(base: Path, case) -> Path:
    repo = base / f"case-{abs(hash((case.name, id(case))))}"
    shutil.copytree(base / "template", repo, symlinks=True)
    (repo / "Makefile").unlink()   # the case's own files only
    for rel, content in case.files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    if case.config:
        (repo / ".claude" / "swarmgate.toml").write_text(case.config)
    return repo


def _payload(repo: Path, case_payload: dict) -> dict:
    p = {"session_id": "s-way-outs", "transcript_path": "", "hook_event_name": "PreToolUse", **case_payload}
    p["cwd"] = str(repo / case_payload["cwd"]) if case_payload.get("cwd") else str(repo)
    return p


def _reason(repo: Path, payload: dict) -> str:
    """The deny reason of the hook's answer, computed in this process (hook_engine.answer: the same
    path as `swarmgate hook` after stdin); '' when allowed."""
    out, code = engine_answer("PreToolUse", json.dumps(payload))
    assert code == 0
    return denied(json.loads(out))


def _hook_reason(repo: Path, payload: dict) -> str:
    """The same through the real entry point: `python -m swarmgate hook PreToolUse` in the repository."""
    p = subprocess.run([sys.executable, "-m", "swarmgate", "hook", "PreToolUse"], input=json.dumps(payload),
                       capture_output=True, text=True, cwd=str(repo), timeout=120)
    assert p.returncode == 0, p.stderr
    return denied(json.loads(p.stdout))


def refusal_way_outs(base: Path) -> list[tuple[str, str | None, Path, str]]:
    """(where, actor, repository, command) from the refusals every shell guard gives on its own
    firing cases (main agent and subagent as the case says), and X01's exec-time refusal of each
    of its cases for the main agent too."""
    out = []
    for g in registry.guards():
        shell = "PreToolUse" in g.events and set(g.tools) & set(G.SHELL_TOOLS)
        for case in g.cases:
            if not case.fires:
                continue
            if shell and case.event == "PreToolUse" and case.payload.get("tool_name") in G.SHELL_TOOLS:
                repo = _case_repo(base, case)
                actor = case.payload.get("agent_type")
                reason = _reason(repo, _payload(repo, case.payload))
                out += [(f"{g.code} refusal on case {case.name}", actor, repo, s) for s in way_out_spans(reason)]
            elif case.event == G.EXEC_EVENT:
                repo = _case_repo(base, case)
                config = load_config(str(repo))
                main_twin = {k: v for k, v in case.payload.items() if k not in ("agent_id", "agent_type")}
                for payload in (case.payload, main_twin):
                    event = HookEvent(G.EXEC_EVENT, {"session_id": "s-way-outs", "cwd": str(repo), **payload},
                                      str(repo))
                    found = g.check(event, config)
                    for f in ([found] if isinstance(found, G.Finding) else found or []):
                        out += [(f"{g.code} exec refusal on case {case.name}", payload.get("agent_type"), repo, s)
                                for s in heavy_spans(f.way_out)]
    return out


def pattern_way_outs(repo: Path) -> list[tuple[str, str | None, Path, str]]:
    """(where, actor, repository, command) from the refusals of each configured heavy pattern typed
    as it is, by the main agent and by a subagent, in a repository whose Makefile's check-full runs
    the workspace tests."""
    out = []
    for pat in load_config(str(repo))["heavy"]["patterns"]:
        for actor in (None, "implementer"):
            payload = {"tool_name": "Bash", "tool_input": {"command": pat, "description": "d"}}
            if actor:
                payload.update(agent_id="agent-9", agent_type=actor)
            reason = _reason(repo, _payload(repo, payload))
            assert reason, f"`{pat}` typed by {actor or 'the main agent'} is not refused"
            out += [(f"refusal of `{pat}`", actor, repo, s) for s in way_out_spans(reason)]
    return out


# --- the test ----------------------------------------------------------------------------------------

@pytest.fixture
def template(tmp_path, repo) -> Path:
    """The shared repository (the fixture's agents and rules, a Makefile whose check-full runs the
    workspace tests), copied for each case."""
    (repo / "Makefile").write_text(MAKEFILE)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_parser.py").write_text("def test_parse():\n    assert True\n")
    base = tmp_path / "way-outs"
    base.mkdir()
    shutil.copytree(repo, base / "template", symlinks=True)
    return base


def test_the_plugin_carries_the_same_rule_texts():
    for path in sorted(RULES.rglob("*.md")):
        rel = path.relative_to(RULES)
        twin = PLUGIN / rel if rel.parts[0] != "rules" else PLUGIN / "rules" / Path(*rel.parts[1:])
        # as generated: the plugin's copies name its `swarmgate:TYPE` agents and its own texts (plugin_files)
        want = plugin_wording(str(twin.relative_to(PLUGIN)), path.read_text())
        assert twin.read_text() == want, f"plugin/{twin.relative_to(PLUGIN)} differs from rules/{rel}"


def test_no_way_out_leads_into_another_refusal(template):
    base = template
    shared = base / "template"
    found = ([(w, a, shared, c) for w, a, c in template_way_outs() + doc_way_outs()]
             + pattern_way_outs(shared) + refusal_way_outs(base))
    wheres = {w.split()[0] for w, *_ in found}
    # the sources are read: the main agent's heavy run in main-agent.md, B01's and B10's refusals, X01's
    assert {"rules/main-agent.md", "rules/agent-common.md", "refusal", "B01", "B10", "X01"} <= wheres, sorted(wheres)
    assert any("make check-full" in c and "SWARMGATE_RUN_SCOPE=" in c for *_, c in found), \
        "B01's way-out for make check-full (whose recipe runs cargo test) carries the run scope"
    cap = heavy_cap_text(load_config(str(shared)), ["cargo", "test", "--workspace"])
    problems = []
    seen = set()
    for where, actor, repo, command in found:
        sub = actor is not None
        filled = fill(command, sub, cap)
        if (repo, actor, filled) in seen:
            continue
        seen.add((repo, actor, filled))
        payload = {"tool_name": "Bash", "tool_input": {"command": filled, "description": "d"}}
        if sub:
            payload.update(agent_id="agent-9", agent_type=actor)
        reason = _hook_reason(repo, _payload(repo, payload))
        if reason:
            problems.append(f"{where} ({actor or 'main agent'}): `{filled}` refused:\n  {reason}")
        if "<" in command and "SWARMGATE_RUN_SCOPE=" in command:
            unfilled = fill_others(command, sub, cap)
            payload["tool_input"]["command"] = unfilled
            reason = _hook_reason(repo, _payload(repo, payload))
            if "[B10]" not in reason or "not filled in" not in reason:
                problems.append(f"{where}: unfilled `{unfilled}` is not refused by B10: {reason or 'allowed'}")
    assert not problems, "\n".join(problems)
    assert len(seen) >= 8, seen


def test_a_way_out_names_the_cap_computed_here_and_it_is_admitted_here(template):
    """B01's refusal prints the cap swarmgate/host_defaults.py computes for this machine (the default
    margin, auto), and that cap, run here for real, is admitted: rc 0, not 252 ("can never fit here")."""
    need_real(cgroups_writable())
    shared = template / "template"
    sb = Sandbox(prefix="sgwayout")
    slice_path = sb.backend().slice_path(sb.slice)
    try:
        (shared / ".claude" / "swarmgate.toml").write_text(f'[memory]\nslice = "{sb.slice}"\n')
        payload = {"tool_name": "Bash", "tool_input": {"command": "cargo test --workspace", "description": "d"}}
        reason = _hook_reason(shared, _payload(shared, payload))
        printed = re.search(r"run-with-memory-cap (\S+) -- cargo test --workspace", reason)
        assert printed and printed.group(1) == heavy_cap_text(load_config(str(shared)), ["cargo", "test",
                                                                                        "--workspace"]), reason
        argv = [sys.executable, "-m", "swarmgate.hosts.runner_cli", printed.group(1), "--wait", "0", "--", "true"]
        p = subprocess.run(argv, cwd=shared, env=sb.env(CLAUDE_PROJECT_DIR=str(shared)), capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, (printed.group(1), p.returncode, p.stderr)
    finally:
        sb.cleanup()
    assert not os.path.exists(slice_path)


def test_the_sources_are_found_without_a_list(template):
    """A guard or a template line added later is judged: the collectors read what exists."""
    assert len(template_way_outs()) >= 3
    assert all(os.path.exists(RULES / w.removeprefix("rules/")) for w, _, _ in template_way_outs())
    assert subprocess.run(["git", "-C", str(template / "template"), "status", "--short"],
                          capture_output=True, text=True).returncode == 0


def test_a_heavy_suite_named_by_its_path_gets_kind_full_for_the_main_agent(template):
    """main-agent.md runs heavy tests with `kind=full`; B01's way-out for a heavy suite that a path names
    (`pytest tests/integration` configured heavy, the journey's sample) gave `kind=items`, the kind the
    rules give "every other verification run". It gives kind=full now, and that line pasted filled in
    passes every guard; a subagent's refusal of the same run names no scope of kind full."""
    shared = template / "template"
    (shared / ".claude" / "swarmgate.toml").write_text('[heavy]\npatterns = ["pytest tests/integration"]\n')
    (shared / "tests" / "integration").mkdir()
    payload = {"tool_name": "Bash", "tool_input": {"command": "pytest tests/integration", "description": "d"}}
    way_out = way_out_spans(_hook_reason(shared, _payload(shared, payload)))[0]   # B01's (B10 gives one too)
    assert way_out.startswith("SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; target=<"), way_out
    assert way_out.endswith(" -- pytest tests/integration"), way_out
    filled = {**payload, "tool_input": {"command": fill(way_out, False, "auto"), "description": "d"}}
    assert _hook_reason(shared, _payload(shared, filled)) == ""
    sub = {**payload, "agent_id": "agent-9", "agent_type": "implementer"}
    assert "kind=full" not in _hook_reason(shared, _payload(shared, sub))
