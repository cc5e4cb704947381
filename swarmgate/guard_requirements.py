"""What makes a registered guard a complete rule: one list, read by the registry completeness
test (tests/swarmgate/guard_registry_test.py) and written into docs/contributing.md's "Add a guard"
checklist by `swarmgate docs`. A requirement added here is demanded of every guard and listed for
the next engineer at once.

Not on the hook's path: only tests and `swarmgate docs` import it.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from swarmgate import guard as G

CODE = re.compile(r"^[A-Z]\d\d$")
SWITCH = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Requirement:
    __slots__ = ("key", "text", "problems")

    def __init__(self, key: str, text: str, problems: Callable[[G.Guard], list[str]]) -> None:
        self.key = key            # a short name (test ids)
        self.text = text          # one checklist line, Markdown
        self.problems = problems  # the guard -> what it lacks (empty: met)


def _code(g: G.Guard) -> list[str]:
    return [] if CODE.match(g.code) else [f"code {g.code!r} must look like B01"]


def _summary(g: G.Guard) -> list[str]:
    return [] if g.summary.strip() and "\n" not in g.summary else ["the summary must be one non-empty line"]


def _doc(g: G.Guard) -> list[str]:
    return [f"doc.{f} is empty" for f in ("why", "example", "instead") if not getattr(g.doc, f).strip()]


def _events(g: G.Guard) -> list[str]:
    return [] if g.events else ["it runs on no event"]


def _check(g: G.Guard) -> list[str]:
    return [] if callable(g.check) else ["check is not callable"]


def _breaks(g: G.Guard) -> list[str]:
    if not g.breaks:
        return ["it has no break switch (a guard that cannot turn red is no guard)"]
    out = []
    for switch, what in g.breaks.items():
        if not SWITCH.match(switch):
            out.append(f"switch {switch!r} must be kebab-case")
        if not what.strip():
            out.append(f"switch {switch} has no description")
    return out


def _cases(g: G.Guard) -> list[str]:
    out = []
    if not [c for c in g.cases if c.fires]:
        out.append("it needs at least one firing case")
    if not [c for c in g.cases if not c.fires]:
        out.append("it needs at least one non-firing case")
    names = [c.name for c in g.cases]
    if len(names) != len(set(names)):
        out.append("case names must be unique")
    out += [f"case {c.name} uses event {c.event}, which the guard does not run on"
            for c in g.cases if c.event not in g.events]
    return out


def _switch_cases(g: G.Guard) -> list[str]:
    # a switch is proven by a case it turns red: a firing case that goes quiet (the protection
    # switched off), or a quiet case that fires (no-script-once-guard: the reader, left without its
    # once-per-judgement rule, recurses into a benign pair of scripts and calls them unverifiable)
    named = {s for c in g.cases for s in c.breaks}
    out = []
    if set(g.breaks) - named:
        out.append(f"switches {sorted(set(g.breaks) - named)} turn no case red")
    if named - set(g.breaks):
        out.append(f"cases name undeclared switches {sorted(named - set(g.breaks))}")
    return out


def _shell_needs(g: G.Guard) -> list[str]:
    judges_shell = "PreToolUse" in g.events and set(g.tools) & set(G.SHELL_TOOLS)
    return ['it judges shell commands: add needs=("bash",)'] if judges_shell and "bash" not in g.needs else []


REQUIREMENTS: tuple[Requirement, ...] = (
    Requirement("code", "a stable `code`: a capital letter and two digits (`B32`), never one used before", _code),
    Requirement("summary", "a one-line `summary` (it heads the guard's section in docs/guards.md)", _summary),
    Requirement("doc", "`doc=GuardDoc(why=..., example=..., instead=...)`: why it matters, an example of what it "
                       "refuses, what to do instead (`exceptions` when there are any)", _doc),
    Requirement("events", "the hook `events` it runs on, and the `tools` for tool events "
                          "(`G.SHELL_TOOLS` for Bash and Monitor)", _events),
    Requirement("check", "a pure `check(event, config)` returning None, a `Finding` or a list of them: it "
                         "writes, locks and starts nothing (side effects go in `act`)", _check),
    Requirement("breaks", "at least one break switch in `breaks`: `{\"kebab-case-name\": \"what it disables\"}`",
                _breaks),
    Requirement("cases", "`cases`: at least one firing and one non-firing `Case`, unique names, each on an event "
                         "the guard runs on (a main-agent and a subagent payload where both can call it)", _cases),
    Requirement("switch-cases", "every break switch turns a case red (`Case(..., breaks=(\"switch\",))`): a "
                                "firing case that goes quiet, or a quiet case that fires; no case names a switch "
                                "the guard does not declare", _switch_cases),
    Requirement("shell-needs", "a guard that judges shell commands declares `needs=(\"bash\",)`: the command is "
                               "parsed once, in the derive phase", _shell_needs),
)


def problems(g: G.Guard) -> list[str]:
    """Everything ``g`` lacks, each naming the guard."""
    return [f"{g.code}: {p}" for r in REQUIREMENTS for p in r.problems(g)]


def checklist() -> str:
    """The Markdown list docs/contributing.md carries (generated by `swarmgate docs`)."""
    return "".join(f"- [ ] {r.text}\n" for r in REQUIREMENTS)
