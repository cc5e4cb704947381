"""Regular expressions compiled on first use, for modules on the hook's hot path.

Importing `re` brings enum, functools, collections and the regex compiler with it: a few
milliseconds of every hook process, a fifth of the interpreter's floor (bench/hook_latency.py).
A module that needs a pattern only for some commands (an arithmetic `(( ))`, a `${X:=v}`) keeps it
as a ``LazyPattern``: the same methods as a compiled pattern, compiled (and `re` imported) the
first time one is called, once per process. tests/swarmgate/hook_start_import_budget_test.py holds the hook's
imports to their list.
"""
from __future__ import annotations


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled when first used."""
    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled = None

    def compiled(self):
        if self._compiled is None:
            import re
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def __getattr__(self, name: str):
        return getattr(self.compiled(), name)


DOTALL = 16   # re.S, without importing re (tests/swarmgate/hook_start_import_budget_test.py checks the value)


def is_name(text: str) -> bool:
    """Whether ``text`` is a shell variable name: [A-Za-z_][A-Za-z0-9_]* (no `re`)."""
    return bool(text) and text.isascii() and text.isidentifier()
