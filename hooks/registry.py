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
    "swarmgate.hooks.heavy_guards",
    "swarmgate.hooks.scope_guards",
    "swarmgate.hooks.shell_job_guards",
    "swarmgate.hooks.shell_protection_guards",
    "swarmgate.hooks.timer_guards",
    "swarmgate.hooks.write_scope",
    "swarmgate.hooks.resource_report",
    "swarmgate.hooks.watch_start",
    "swarmgate.hooks.dispatch_guards",
    "swarmgate.hooks.task_order",
    "swarmgate.hooks.message_guards",
    "swarmgate.hooks.subagent_context",
    "swarmgate.hooks.stop_guards",
    "swarmgate.hooks.command_history",
    "swarmgate.hooks.session_context",
    "swarmgate.hooks.exec_check",
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


def _routes_key(names: tuple) -> str | None:
    """Identity (name, mtime, size) of every file that can change where guards run: every
    module of this package (a guard's events and tools may come from a helper module),
    swarmgate/guard.py (the tool groups) and the MODULES list; None when one cannot be read."""
    import os

    import swarmgate.guard as guard_mod
    import swarmgate.hooks as pkg
    here = os.path.dirname(os.path.abspath(pkg.__file__))
    for name in names:
        if not name.startswith("swarmgate.hooks.") or name.count(".") != 2:
            return None
    parts = [",".join(names)]
    try:
        files = sorted(f for f in os.listdir(here) if f.endswith(".py"))
        for path in [os.path.join(here, f) for f in files] + [os.path.abspath(guard_mod.__file__)]:
            st = os.stat(path)
            parts.append(f"{os.path.basename(path)}:{st.st_mtime_ns}:{st.st_size}")
    except OSError:
        return None
    return "|".join(parts)


def guards_for(event: str, tool: str | None, index_path: str | None = None) -> list:
    """The guards that apply to (event, tool), importing only the modules that have any.

    The hook's hot path: importing every guard module on every call costs
    milliseconds. ``index_path`` caches which (event, tool) each module's
    guards run on, keyed by the identity of every module file (any edit of a
    guard module, or of MODULES, misses the cache: then every module is
    imported and the index rebuilt). Without an index, or when it cannot be
    read, every module is imported: never fewer guards, only slower.
    """
    if _cache is not None or not index_path:
        return [g for g in guards() if g.applies(event, tool)]
    from swarmgate import fast_json as json
    from swarmgate.statefile import StateError, read_text, write_text_atomic
    key = _routes_key(MODULES)
    routes = None
    if key is not None:
        try:
            text = read_text(index_path)
            rec = json.loads(text) if text else None
        except (OSError, ValueError, StateError):
            rec = None
        if isinstance(rec, dict) and rec.get("key") == key and isinstance(rec.get("routes"), dict):
            routes = rec["routes"]
    if routes is None:
        everything = guards()
        if key is not None:
            index = {}
            for name in MODULES:
                mod_guards = importlib.import_module(name).GUARDS
                index[name] = sorted({(ev, t) for g in mod_guards for ev in g.events for t in (g.tools or ("*",))})
            try:
                write_text_atomic(index_path, json.dumps({"key": key, "routes": index}) + "\n")
            except (OSError, StateError):
                pass
        return [g for g in everything if g.applies(event, tool)]
    out = []
    for name in MODULES:
        pairs = routes.get(name)
        if isinstance(pairs, list) and not any(
                isinstance(p, list) and len(p) == 2 and p[0] == event and p[1] in ("*", tool) for p in pairs):
            continue  # none of this module's guards runs on this (event, tool)
        out.extend(g for g in importlib.import_module(name).GUARDS if g.applies(event, tool))
    return out


def by_code() -> dict:
    return {g.code: g for g in guards()}
