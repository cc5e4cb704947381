"""The guard registry: every guard module, in the order guards are checked.

A guard module defines GUARDS (a tuple of swarmgate.guard.Guard). Guard
modules must stay light at import time (no bashlex, psutil, rich, pynvml at
module level): the hook imports them on every call. tests check this.
"""
from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Callable

# Order matters only for the order of reasons in a combined answer.
MODULES = (
    "swarmgate.hooks.file_guards",
    "swarmgate.hooks.heavy_guards",
    "swarmgate.hooks.scope_guards",
    "swarmgate.hooks.shell_job_guards",
    "swarmgate.hooks.shell_protection_guards",
    "swarmgate.hooks.powershell_guard",
    "swarmgate.hooks.timer_guards",
    "swarmgate.hooks.write_scope",
    "swarmgate.hooks.loss_guards",
    "swarmgate.hooks.secret_guards",
    "swarmgate.hooks.resource_report",
    "swarmgate.hooks.watch_start",
    "swarmgate.hooks.dispatch_guards",
    "swarmgate.hooks.task_order",
    "swarmgate.hooks.message_guards",
    "swarmgate.hooks.dialog_guards",
    "swarmgate.hooks.team_guards",
    "swarmgate.hooks.subagent_context",
    "swarmgate.hooks.stop_guards",
    "swarmgate.hooks.command_history",
    "swarmgate.hooks.reminder_guard",
    "swarmgate.hooks.session_context",
    "swarmgate.hooks.containment",
    "swarmgate.hooks.exec_check",
)

_cache: list | None = None


def _module(name: str):
    """The guard module ``name``, imported (``__import__``: importlib itself costs the hook an import)."""
    mod = sys.modules.get(name)
    if mod is None:
        __import__(name)
        mod = sys.modules[name]
    return mod


def guards() -> list:
    global _cache
    if _cache is None:
        out = []
        for name in MODULES:
            out.extend(_module(name).GUARDS)
        _cache = out
    return _cache


# Where each module's guards run: module -> ((event, tools), ...), tools "*" for every tool.
# Data that ships with the code, not a cache in the repository that an agent could rewrite:
# the hook imports a module only for the (event, tool) listed here, so this table may make a
# call import more modules than it needs but never fewer, as long as it is complete, and
# `routes_from_guards()` is what it must equal (tests/swarmgate/guard_registry_test.py and
# `swarmgate doctor` compare the two). A module missing from the table is always imported.
_FILE = ("Write", "Edit", "MultiEdit", "NotebookEdit")
_SHELL = ("Bash", "Monitor")
_DISPATCH = ("Agent", "Task")
ROUTES: dict[str, tuple] = {
    "swarmgate.hooks.file_guards": (("PreToolUse", _FILE),),
    "swarmgate.hooks.heavy_guards": (("PreToolUse", _SHELL),),
    "swarmgate.hooks.scope_guards": (("PreToolUse", _SHELL),),
    "swarmgate.hooks.shell_job_guards": (("PreToolUse", _SHELL),),
    "swarmgate.hooks.shell_protection_guards": (("PreToolUse", _SHELL),),
    "swarmgate.hooks.powershell_guard": (("PreToolUse", ("PowerShell",)),),
    "swarmgate.hooks.timer_guards": (("PreToolUse", (*_SHELL, "CronCreate", "ScheduleWakeup")),),
    "swarmgate.hooks.write_scope": (("PreToolUse", (*_FILE, *_SHELL)),),
    "swarmgate.hooks.loss_guards": (("PreToolUse", (*_FILE, *_SHELL)),),
    "swarmgate.hooks.secret_guards": (("PreToolUse", (*_SHELL, "Read", "Grep")), ("PostToolUse", "*")),
    "swarmgate.hooks.resource_report": (("PreToolUse", _SHELL),),
    "swarmgate.hooks.watch_start": (("PostToolUse", _DISPATCH),),
    "swarmgate.hooks.dispatch_guards": (("PreToolUse", _DISPATCH),),
    "swarmgate.hooks.task_order": (("PreToolUse", _DISPATCH),),
    "swarmgate.hooks.message_guards": (("PreToolUse", ("SendMessage",)),),
    "swarmgate.hooks.dialog_guards": (("PreToolUse", ("AskUserQuestion", "ExitPlanMode")), ("Notification", "*")),
    "swarmgate.hooks.team_guards": (("PreToolUse", "*"), ("TaskCreated", "*"), ("TaskCompleted", "*"),
                                    ("TeammateIdle", "*")),
    "swarmgate.hooks.subagent_context": (("SubagentStart", "*"),),
    "swarmgate.hooks.stop_guards": (("Stop", "*"), ("SubagentStop", "*")),
    "swarmgate.hooks.command_history": (("PostToolUse", "*"), ("PostToolUseFailure", _SHELL)),
    "swarmgate.hooks.session_context": (("SessionStart", "*"),),
    "swarmgate.hooks.reminder_guard": (("PostToolUse", "*"), ("PostToolUseFailure", "*"), ("SessionStart", "*")),
    "swarmgate.hooks.containment": (("SessionStart", "*"), ("PreToolUse", _SHELL), ("PostToolUse", "*"),
                                    ("PostToolUseFailure", "*"), ("SubagentStop", "*")),
    "swarmgate.hooks.exec_check": (("Exec", "*"),),
}


def _routed(name: str, event: str, tool: str | None) -> bool:
    """Whether the table sends (event, tool) to module ``name`` (True when the table does not know it)."""
    routes = ROUTES.get(name)
    if routes is None:
        return True
    return any(ev == event and (tools == "*" or tool in tools) for ev, tools in routes)


def routes_from_guards() -> dict[str, set]:
    """{module: {(event, tool or "*")}} as the guards themselves declare it (imports every module)."""
    return {name: {(ev, t) for g in _module(name).GUARDS for ev in g.events
                   for t in (g.tools or ("*",))} for name in MODULES}


def route_table_gaps() -> list[str]:
    """Where ROUTES would skip a guard: "module: event/tool" for each (event, tool) a module's guards
    run on that the table does not send to it. Empty when the table is complete."""
    out = []
    for name, pairs in routes_from_guards().items():
        for ev, t in sorted(pairs):
            # a guard on every tool ("*") needs the module routed for every tool: only "*" is
            if not _routed(name, ev, None if t == "*" else t):
                out.append(f"{name}: {ev}/{t}")
    return out


# Gated modules: on a shell call (PreToolUse on Bash or Monitor) the module is imported only when
# its gate (a function of hooks/guard_gates.py, named here) says one of its guards can fire: the
# gate is the first test each of its checks makes, and its acts do nothing when it is false.
GATES: dict[str, str] = {
    "swarmgate.hooks.scope_guards": "verification",
    "swarmgate.hooks.write_scope": "writes",
    "swarmgate.hooks.loss_guards": "losses",
    "swarmgate.hooks.secret_guards": "secrets",
    "swarmgate.hooks.shell_job_guards": "shell_jobs",
    "swarmgate.hooks.timer_guards": "timers",
    "swarmgate.hooks.team_guards": "teammates",
    "swarmgate.hooks.resource_report": "host_report",
    "swarmgate.hooks.containment": "containment",
}


def gated(event: str, tool: str | None) -> bool:
    """Whether GATES apply to (event, tool)."""
    return event == "PreToolUse" and tool in _SHELL


def guards_for(event: str, tool: str | None, choose: Callable[[list, list], set] | None = None) -> list:
    """The guards that apply to (event, tool), importing only the modules ROUTES sends it to, in
    registry order. ``choose(gated, loaded)``: asked once on a shell call, with the gated modules
    (GATES) routed to it and the guards of the others (loaded first), which of the gated ones to
    load (the engine asks their gates); None loads them all.

    The hook's hot path: importing every guard module on every call costs milliseconds."""
    if _cache is not None:   # every module is loaded (or a test's own registry): nothing to spare
        return [g for g in guards() if g.applies(event, tool)]
    gate = choose is not None and gated(event, tool)
    by_module: dict[str, list] = {}
    later = []
    for name in MODULES:
        if not _routed(name, event, tool):
            continue
        if gate and name in GATES:
            later.append(name)
            continue
        by_module[name] = [g for g in _module(name).GUARDS if g.applies(event, tool)]
    if later and choose is not None:
        chosen = choose(later, [g for gs in by_module.values() for g in gs])
        for name in later:
            if name in chosen:
                by_module[name] = [g for g in _module(name).GUARDS if g.applies(event, tool)]
    return [g for name in MODULES for g in by_module.get(name, ())]


def by_code() -> dict:
    return {g.code: g for g in guards()}


def refusing_guards(event: str, tool: str | None) -> list:
    """The guards that may refuse a call of (event, tool) (advisory ones left out), in order.

    ``refusing_guards("PreToolUse", "Bash")`` are the shell rules: what tests, benches and the
    transcript audit judge shell commands with, so no list of their codes is kept by hand."""
    return [g for g in guards() if not g.advisory and g.applies(event, tool)]
