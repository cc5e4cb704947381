"""The guard registry: every guard module, in the order guards are checked.

A guard module defines GUARDS (a tuple of swarmgate.guard.Guard). Guard
modules must stay light at import time (no bashlex, psutil, rich, pynvml at
module level): the hook imports them on every call. tests check this.
"""
from __future__ import annotations

import importlib

# Order matters only for the order of reasons in a combined answer.
MODULES = (
    "swarmgate.hooks.file_guards",
    "swarmgate.hooks.bash_guards",
    "swarmgate.hooks.timer_guards",
    "swarmgate.hooks.write_scope",
    "swarmgate.hooks.resource_report",
    "swarmgate.hooks.watch_start",
    "swarmgate.hooks.dispatch_guards",
    "swarmgate.hooks.message_guards",
    "swarmgate.hooks.subagent_context",
    "swarmgate.hooks.stop_guards",
    "swarmgate.hooks.command_history",
    "swarmgate.hooks.session_context",
)

_cache: list | None = None


def guards() -> list:
    global _cache
    if _cache is None:
        out = []
        for name in MODULES:
            out.extend(importlib.import_module(name).GUARDS)
        _cache = out
    return _cache


def by_code() -> dict:
    return {g.code: g for g in guards()}
