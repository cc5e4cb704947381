"""What a guard is: a rule with a stable code, a summary, a doc, a check and break switches.

A guard is like a lint rule (STYLE.md). It knows nothing of stdin, JSON output
or logging; the hook engine loads, orders, times and combines guards, in three
phases per hook call (swarmgate/hook_engine.py):

1. **derive**: the engine builds what the guards that apply say they need
   (``Guard.needs``: names in swarmgate/hooks/derivations.py, e.g. the bash
   tree, the parsed dispatch prompt, `git status`), once per call, before any
   guard judges. Guards read them (``derivations.get``); no guard parses or
   starts a process on its own.
2. **judge**: ``check(event, config)`` is pure: it reads the event, the
   derived facts, the config and state files, and returns None, one Finding or
   a list of Findings. It writes no state, takes no lock, starts no process
   (tests/swarmgate/guard_purity_test.py runs every case and checks). The one
   write a judge may cause is the tolerant read's: a corrupt state file is
   moved aside (statefile.read_json).
3. **act**: ``act(event, config)`` holds a guard's side effects (record a
   dispatch, take a lock, append to a history, start a watchdog, mark alerts
   read). The engine runs it only when the combined decision lets the call go
   ahead (``hook_protocol.goes_ahead``: not denied, an asked call included
   since the person may agree; a stop not blocked), once per call even when
   several guards share the function, in registry order, acts that may refuse
   (``act_refuses``) first. A call that is refused records nothing and locks
   nothing. The acts of guards switched off do not run; a break switch is the
   act's own business (D16's turns its locking off).

   An act returns None or Findings. Findings it returns replace the judged
   findings of their codes (A01's "will be started" becomes "started, pid N").
   A DENY among them is a **late refusal** (PreToolUse only, and only from a
   guard with ``act_refuses=True``): the world changed between judge and act
   (another dispatch took the last slot, another agent took the scratch
   directory), which the act sees because it re-checks under its lock; it then
   records nothing, the answer becomes a deny and no later act runs. At most one
   act that may refuse runs per (event, tool) (tests/swarmgate/guard_registry_test.py),
   so a late refusal never leaves another act's record behind. An act that
   crashes or overruns its budget refuses if it may refuse, else it adds a
   note; its guard's budget applies.

   Plugging in a side effect (e.g. a single-use authorization recorded when
   B01/B02 let a main-agent heavy command through): give the guard
   ``act=record_authorization``, a function of (event, config) that re-reads
   what it needs (``derivations.get``, ``event.memo``) and writes it; return
   None. It runs only when the call goes ahead.

   Rewriting the call (PreToolUse only): a finding with ``decision=REWRITE`` and
   ``updated_input`` (the whole tool input to run instead) becomes the answer's
   ``updatedInput`` when the call goes ahead (Claude Code 2.1.332 runs it, for
   subagents too). It adds no text. The judge may predict it (so self-tests see
   it) and the act confirm or replace it (X02 puts a subagent's command into its
   containment cgroup: hooks/containment.py). One guard rewrites a given call.

Hot path: kept free of dataclasses/typing imports (see config.py).
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time: the hook's hot path
    from collections.abc import Callable, Iterable

    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent

DENY = "deny"        # refuse the tool call (PreToolUse) / block the stop (Stop, SubagentStop)
ASK = "ask"          # ask the person (PreToolUse only)
CONTEXT = "context"  # add text to the agent's context; never refuses
WARN = "warn"        # a refusal downgraded by config to a warning (context)
REWRITE = "rewrite"  # run the tool call with ``Finding.updated_input`` instead (PreToolUse); no text


class Finding:
    """One thing a guard found. ``message`` says what and why; ``way_out`` the exact fix."""
    __slots__ = ("code", "message", "way_out", "decision", "updated_input")

    def __init__(self, code: str, message: str, way_out: str = "", decision: str = DENY,
                 updated_input: dict | None = None) -> None:
        self.code = code
        self.message = message
        self.way_out = way_out
        self.decision = decision
        self.updated_input = updated_input  # decision REWRITE: the tool input to run instead

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
    hook_event_name; a ``cwd`` it gives is relative to the repository, e.g. a
    worktree subagent's ".claude/worktrees/agent-a1"). ``fires`` says whether the guard must produce a finding.
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


def case_table(build: Callable[[], dict[str, Iterable[Case]]]) -> Callable[[str], Callable[[], Iterable[Case]]]:
    """For the guards of one module whose cases one builder makes (``build() -> {code: cases}``):
    ``of(code)`` is a guard's ``cases`` function; the table is built once, when a case is first read
    (a hook call reads none)."""
    table: dict[str, Iterable[Case]] = {}

    def of(code: str) -> Callable[[], Iterable[Case]]:
        def get() -> Iterable[Case]:
            if not table:
                table.update(build())
            return table[code]
        return get
    return of


class Guard:
    """A registered rule.

    code      stable code (never reused once retired), e.g. "B01"
    summary   one line
    events    hook events it runs on, e.g. ("PreToolUse",)
    tools     tool names it runs on (() = every call of those events)
    check     pure function (event, config) -> Finding | list[Finding] | None (the judge phase)
    doc       GuardDoc
    breaks    {switch name: what it disables}
    cases     fixtures + self-test cells (firing and not firing); or a function of no arguments that
              returns them, called on first use, for cases whose fixtures cost imports (JSON state
              files, lock names) that a hook call, which reads no case, should not pay
    advisory  True for report guards that never refuse (a crash passes with a note)
    budget_ms time budget of check and of act (None: the config's hooks.guard_budget_ms)
    needs     names of derived facts the engine builds before judging (hooks/derivations.py)
    act       side effects, (event, config) -> Finding | list[Finding] | None, run only when
              the call goes ahead (see the module docstring); None: no side effects
    act_refuses  the act may turn the answer into a deny (a late refusal)
    """
    __slots__ = ("code", "summary", "events", "tools", "check", "doc", "breaks", "_cases",
                 "advisory", "budget_ms", "needs", "act", "act_refuses")

    def __init__(self, code: str, summary: str, events: tuple, tools: tuple, check: Check,
                 doc: GuardDoc, breaks: dict[str, str],
                 cases: tuple[Case, ...] | Callable[[], Iterable[Case]] = (), advisory: bool = False,
                 budget_ms: int | None = None, needs: tuple[str, ...] = (), act: Check | None = None,
                 act_refuses: bool = False) -> None:
        self.code = code
        self.summary = summary
        self.events = tuple(events)
        self.tools = tuple(tools)
        self.check = check
        self.doc = doc
        self.breaks = dict(breaks)
        self._cases = cases if callable(cases) else tuple(cases)
        self.advisory = advisory
        self.budget_ms = budget_ms
        self.needs = tuple(needs)
        self.act = act
        self.act_refuses = act_refuses

    @property
    def cases(self) -> tuple[Case, ...]:
        if callable(self._cases):
            self._cases = tuple(self._cases())
        return self._cases

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


if TYPE_CHECKING:
    # what a check or an act returns: nothing, one Finding, or several (None entries skipped)
    Result = Finding | Iterable[Finding | None] | None
    Check = Callable[[HookEvent, Config], Result]
