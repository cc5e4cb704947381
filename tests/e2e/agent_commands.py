"""The commands swarmgate gives an agent, generated, not listed by hand (issue 22, item 2).

Sources:

- the registry: every guard's way-outs on its own firing cases (``swarmgate.selftest.case_findings``:
  the findings the hook would give there) and its doc's "instead" (docs/guards.md is generated from
  it), for the agent of the case (a case with ``agent_type`` is a subagent's);
- the rule templates as an install wrote them into a repository (``swarmgate.install.templates``):
  main-agent.md is the main agent's, agent-common.md every subagent's, ``rules/X.md`` the first
  type whose definition lists it, ``agents/T.md`` type T's;
- a context text the client showed an agent (SessionStart's, SubagentStart's): ``from_text``.

A backquoted span is an agent command when its program (after ``VAR=value`` words) is one of
swarmgate's console scripts, or when it sets the heavy prefix or the run scope (a run the guards
judge). A span that is the program's name alone is a command only when the program needs no
argument (its argparse usage has no required one); else it names the program, and is a mention.
A span the text gives to the person (``... tell the person, who runs `swarmgate install` ...``) is
not an agent's.

``fill`` fills the placeholders the model must fill in (``<...>``, ROUND, ID, TYPE, CAP, COMMAND,
``"..."``, ``a|b`` choices) the way a model would, from the session's facts (``Facts``).
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from swarmgate import guard as G
from swarmgate import tools_dir
from swarmgate.config import load_config
from swarmgate.hook_engine import evaluate
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks import registry
from swarmgate.hooks.test_runs import NARROW_WORDS, TEMPLATE_WORDS
from swarmgate.install import templates
from swarmgate.selftest import case_findings

PROGRAMS = frozenset(tools_dir.script_names())
RUN_VARS = ("SWARMGATE_HEAVY", "SWARMGATE_RUN_SCOPE")
TICKS = re.compile(r"`([^`\n]+)`")
MAIN = "main"


@dataclass(frozen=True)
class Given:
    """One command as swarmgate gives it: where, to whom (``MAIN`` or an agent type), the text."""
    source: str
    actor: str
    text: str


def words_of(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def program_of(text: str) -> tuple[str, list[str], list[str]]:
    """(program, its arguments, the VAR names set before it) of a command line."""
    words = words_of(text)
    names = []
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        names.append(words.pop(0).split("=", 1)[0])
    return (words[0].rsplit("/", 1)[-1] if words else "", words[1:], names)   # T01 names remind by its path


def _needs_no_argument(prog: str, tools: Path | None) -> bool:
    """Whether ``prog`` runs with no argument: its argparse usage names no required one."""
    exe = str(tools / prog) if tools else prog
    try:
        usage = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return False
    head = usage.split("\n\n", 1)[0].replace("\n", " ")
    rest = re.sub(r"\[[^\[\]]*\]", "", re.sub(r"\[[^\[\]]*\]", "", head.split(prog, 1)[-1]))
    return not rest.split()


def is_agent_command(span: str, before: str, after: str = "", tools: Path | None = None) -> bool:
    """Whether the backquoted ``span`` (``before``: the text of its sentence before it, ``after``: what
    follows it) is a command the agent is to run."""
    prog, args, names = program_of(span)
    if not (prog in PROGRAMS or set(names) & set(RUN_VARS)) or span.startswith("["):
        return False
    if not prog and "SWARMGATE_RUN_SCOPE" not in names:   # `SWARMGATE_HEAVY=user-request`: a value, not a line
        return False
    if re.search(r"\bthe person\b[^.;]*$", before):   # given to the person, not to the agent
        return False
    if prog in PROGRAMS and not args:   # `host-dispatch` without changing HOME: its name
        return not after.lstrip().startswith("without") and _needs_no_argument(prog, tools)
    return not (args and args[-1] == "--")          # `host-dispatch --`: a fragment of a sentence


def from_text(text: str, source: str, actor: str, tools: Path | None = None) -> list[Given]:
    out = []
    for m in TICKS.finditer(text):
        sentence = re.split(r"(?<=[.!?])\s|\n\n", text[:m.start()])[-1]
        if is_agent_command(m.group(1), sentence, text[m.end():m.end() + 20], tools):
            out.append(Given(source, actor, m.group(1)))
    return out


def from_registry(tools: Path | None = None, world: Path | None = None) -> list[Given]:
    """The way-outs of every guard on its firing cases, and every guard doc's "instead".

    With ``world`` (a wired repository), a shell case (a Bash or Monitor call, or a program seen where
    it starts: X01) is judged there, by every guard, as this install judges the case's command: the
    way-out names that repository's recipes and caps, not the case's (a case whose guard does not
    refuse it there gives nothing). Other cases (dispatches, stops, timers) are judged in their own
    repository; their way-outs name records, reminders and types the filling gives values."""
    out = []
    for g in registry.guards():
        for case in g.cases:
            if not case.fires:
                continue
            actor = case.payload.get("agent_type") or MAIN
            if world is not None and _shell_case(case):
                for code, way_out in _judged_in(world, case):
                    out += from_text(way_out, f"{code} way-out (case {g.code} {case.name})", actor, tools)
                continue
            found, _ = case_findings(g, case, act=False)
            for f in found:
                out += from_text(f.way_out or "", f"{g.code} way-out (case {case.name})", actor, tools)
        instead = g.doc.instead if g.doc else ""
        for m in TICKS.finditer(instead):
            before = instead[:m.start()]
            actor = "implementer" if before.rfind("Subagent") > before.rfind("Main agent") else MAIN
            out += from_text(instead[max(0, m.start() - 200):m.end()], f"{g.code} doc", actor, tools)[-1:]
    return out


def _shell_case(case) -> bool:
    return case.event == G.EXEC_EVENT or (case.event == "PreToolUse"
                                          and case.payload.get("tool_name") in G.SHELL_TOOLS)


def _judged_in(world: Path, case) -> list[tuple[str, str]]:
    """(code, way-out) of each refusal the guards give the case's call in ``world`` (derive and judge
    only: nothing is written, locked or started)."""
    payload = {"session_id": "way-outs", "transcript_path": "", "hook_event_name": case.event, **case.payload,
               "cwd": str(world)}
    event = HookEvent(case.event, payload, str(world))
    config = load_config(str(world))
    tool = case.payload.get("tool_name")
    guards = [g for g in registry.guards() if g.applies(case.event, tool)]
    found = evaluate(event, config, guards)
    return [(f.code, f.way_out) for f in found if f.decision == G.DENY and f.way_out]


def rule_readers(repo: Path) -> dict[str, str]:
    """{rules/X.md: the first agent type (implementer first) whose definition lists it}."""
    readers: dict[str, str] = {}
    defs = sorted((repo / ".claude" / "agents").glob("*.md"), key=lambda p: (p.stem != "implementer", p.stem))
    for d in defs:
        text = d.read_text()
        m = re.search(r"^rules:\s*(.+)$", text, re.M)
        if not re.search(r"^tools:.*\bBash\b", text, re.M):   # a type without a shell runs no command
            continue
        for rel in (m.group(1).split(",") if m else []):
            readers.setdefault(rel.strip(), d.stem)
    return readers


def from_templates(repo: Path, tools: Path | None = None) -> list[Given]:
    """The commands of the rule texts an install wrote into ``repo``, each for the agent that reads it."""
    readers = rule_readers(repo)
    out = []
    for _, rel in templates():
        path = repo / rel
        if not rel.endswith(".md") or not path.is_file():
            continue
        inner = rel.removeprefix(".claude/")
        if inner == "main-agent.md":
            actor = MAIN
        elif inner.startswith("agents/"):
            actor = path.stem
        else:
            actor = readers.get(inner, "implementer")
        out += from_text(path.read_text(), rel, actor, tools)
    return out


def distinct(given: list[Given]) -> list[Given]:
    """One entry per (actor, text), the first source kept (the others joined to it)."""
    by: dict[tuple[str, str], Given] = {}
    for g in given:
        key = (g.actor, g.text)
        if key in by:
            if g.source not in by[key].source:
                by[key] = Given(by[key].source + "; " + g.source, g.actor, g.text)
        else:
            by[key] = g
    return list(by.values())


# --- filling in, as a model would ------------------------------------------------------------------

@dataclass
class Facts:
    """What the model knows when it fills a command in."""
    round: str = "r1"
    task: str = "t1"
    agent_type: str = "implementer"
    agent_id: str = "AGENT_ID"
    name: str = "worker-1"
    cap: str = "auto"
    work_dir: str = "scratch"
    label: str = "exp1"
    code: str = "B01"
    narrow: str = "tests/unit/test_app.py"
    command: str = "python3 -c 'print(42)'"
    words: dict = field(default_factory=lambda: {
        TEMPLATE_WORDS["target"]: "the tests of the sample", TEMPLATE_WORDS["range"]: "the files the change touches",
        TEMPLATE_WORDS["reason"]: "the change is done, so its tests are due",
    })


def fill(text: str, facts: Facts, scope: bool = True) -> str:
    """``text`` with its placeholders filled in; ``scope=False`` leaves the run scope's `<...>`."""
    s = text
    s = re.sub(r"\bROUND\b", facts.round, s)
    s = re.sub(r"\bAGENT_ID\b|<agent id>", facts.agent_id, s)
    s = re.sub(r"^(agent-handover )(?!-)\S+", lambda m: m.group(1) + facts.agent_id, s)   # a case's agent id
    s = re.sub(r"\S*swarmgate-selftest-[^/\s]+/\S*", facts.work_dir, s)                 # a case's directory
    s = re.sub(r"\bTYPE\b", facts.agent_type, s)
    s = re.sub(r"\bCAP\b", facts.cap, s)
    s = re.sub(r"\bCODE\b", facts.code, s)
    s = re.sub(r"\bDIR\b", facts.work_dir, s)
    s = re.sub(r"--label NAME\b", f"--label {facts.label}", s)
    s = re.sub(r"--agent NAME\b", f"--agent {facts.name}", s)
    s = re.sub(r"\b(?:COMMAND|CMD)\b", facts.command, s)
    s = s.replace("cargo build ...", "cargo build --release")
    s = re.sub(r"\bID\b", facts.task, s)
    s = re.sub(r"--deps (?:A,B|\.\.\.)", "--deps -", s)
    s = s.replace("yes|no", "yes").replace("close|next-round|drop", "close")
    s = s.replace('-d "..."', f'-d "the {facts.task} step"').replace('--purpose "..."', '--purpose "a build"')
    s = s.replace('--goal "..."', '--goal "a feature"').replace('--exit "..."', '--exit "it is committed"')
    s = s.replace('--goal ...', '--goal "a feature"').replace('--exit ...', '--exit "it is committed"')
    s = s.replace('"<why>"', '"the verify needs a network this machine lacks"')
    s = s.replace('--reason "..."', '--reason "checked by hand: the verify needs a network"')
    words = dict(facts.words)
    words[NARROW_WORDS] = facts.narrow

    def one(m: re.Match) -> str:
        inner = m.group(1).strip()
        if not scope and inner in TEMPLATE_WORDS.values():
            return m.group(0)
        return words.get(inner, "the sample's unit tests")
    s = re.sub(r"<([^<>]+)>", one, s)
    if scope and s.rstrip().endswith("'") and program_of(s)[0] == "":
        s += " pytest -q " + facts.narrow   # the scope alone, as agent-common.md shows it: before a run
    elif not scope and program_of(s)[0] == "":
        s += " pytest -q " + facts.narrow
    return s


def main(argv: list[str] | None = None) -> int:
    """`python agent_commands.py REPO TOOLS`: the commands as JSON, read by the interpreter of the install
    that wired REPO (so that the way-outs are that install's, not this checkout's)."""
    repo, tools = (Path(a) for a in (argv if argv is not None else sys.argv[1:]))
    given = from_templates(repo, tools) + from_registry(tools, repo)
    print(json.dumps([g.__dict__ for g in given]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
