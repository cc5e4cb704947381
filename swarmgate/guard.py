"""What a guard is: a rule with a stable code, a summary, a doc, a check and break switches.

A guard is like a lint rule (STYLE.md). ``check(event, config)`` is pure: given
the parsed hook event and the validated config it returns None, one Finding or
a list of Findings. It knows nothing of stdin, JSON output or logging; the
hook engine loads, orders, times and combines guards.

Hot path: kept free of dataclasses/typing imports (see config.py).
"""
from __future__ import annotations

DENY = "deny"        # refuse the tool call (PreToolUse) / block the stop (Stop, SubagentStop)
ASK = "ask"          # ask the person (PreToolUse only)
CONTEXT = "context"  # add text to the agent's context; never refuses
WARN = "warn"        # a refusal downgraded by config to a warning (context)


class Finding:
    """One thing a guard found. ``message`` says what and why; ``way_out`` the exact fix."""
    __slots__ = ("code", "message", "way_out", "decision")

    def __init__(self, code: str, message: str, way_out: str = "", decision: str = DENY) -> None:
        self.code = code
        self.message = message
        self.way_out = way_out
        self.decision = decision

    def render(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.way_out:
            text += f" Way out: {self.way_out}"
        return text

    def __repr__(self) -> str:
        return f"Finding({self.code!r}, {self.decision!r}, {self.message!r})"


class GuardDoc:
    """The doc page of a guard (docs/guards.md): why, example, instead, exceptions."""
    __slots__ = ("why", "example", "instead", "exceptions")

    def __init__(self, why: str, example: str, instead: str, exceptions: str = "") -> None:
        self.why = why
        self.example = example
        self.instead = instead
        self.exceptions = exceptions


class Case:
    """A fixture that is also a self-test cell.

    ``payload`` is a hook payload (dict, as Claude Code sends it, minus the
    fields the harness fills in: session_id, cwd, transcript_path,
    hook_event_name). ``fires`` says whether the guard must produce a finding.
    ``breaks`` names the break switches that must turn this cell red (only
    meaningful for firing cases). ``files`` are files created (relative to a
    temp repository) before the check runs; ``config`` is TOML text written
    to .claude/swarmgate.toml.
    """
    __slots__ = ("name", "event", "payload", "fires", "breaks", "files", "config")

    def __init__(self, name: str, event: str, payload: dict, fires: bool,
                 breaks: tuple = (), files: dict | None = None, config: str = "") -> None:
        self.name = name
        self.event = event
        self.payload = payload
        self.fires = fires
        self.breaks = tuple(breaks)
        self.files = files or {}
        self.config = config


class Guard:
    """A registered rule.

    code      stable code (never reused once retired), e.g. "B01"
    summary   one line
    events    hook events it runs on, e.g. ("PreToolUse",)
    tools     tool names it runs on (() = every call of those events)
    check     pure function (event, config) -> Finding | list[Finding] | None
    doc       GuardDoc
    breaks    {switch name: what it disables}
    cases     fixtures + self-test cells (firing and not firing)
    advisory  True for report guards that never refuse (a crash passes with a note)
    budget_ms time budget (None: the config's hooks.guard_budget_ms)
    """
    __slots__ = ("code", "summary", "events", "tools", "check", "doc", "breaks", "cases",
                 "advisory", "budget_ms")

    def __init__(self, code: str, summary: str, events: tuple, tools: tuple, check,
                 doc: GuardDoc, breaks: dict, cases: tuple = (), advisory: bool = False,
                 budget_ms: int | None = None) -> None:
        self.code = code
        self.summary = summary
        self.events = tuple(events)
        self.tools = tuple(tools)
        self.check = check
        self.doc = doc
        self.breaks = dict(breaks)
        self.cases = tuple(cases)
        self.advisory = advisory
        self.budget_ms = budget_ms

    def applies(self, event: str, tool: str | None) -> bool:
        if event not in self.events:
            return False
        return not self.tools or (tool in self.tools)

    def __repr__(self) -> str:
        return f"Guard({self.code})"


# Not a hook event: the exec-time shims (hooks/exec_shims.py) judge a program's real argv where it
# starts and call X01 with it (hooks/exec_check.py); no settings.json entry reaches it.
EXEC_EVENT = "Exec"

# Tool-name groups (SPEC §3): match both Agent and Task; Monitor runs shell commands too.
DISPATCH_TOOLS = ("Agent", "Task")
SHELL_TOOLS = ("Bash", "Monitor")
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
