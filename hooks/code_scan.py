"""Interpreter programs scanned for command patterns (the guards' side of ``python -c``).

The bash reader records the code it hands to an interpreter (``Analysis.programs``:
``python -c CODE``, ``node -e CODE``, a program on stdin) without judging it. This
module judges it against the configured patterns: a string literal that, read as a
shell text, runs a command matching a pattern, or a list of literals that spells one
as an argv (``["cargo", "test", "--workspace"]``), makes the command unverifiable:
the interpreter could run it, and nothing can tell statically whether it does.
"""
from __future__ import annotations

import time

from swarmgate.hooks import command_patterns as cp
from swarmgate.hooks.bash_results import Unverifiable
from swarmgate.hooks.bash_words import C_ESCAPES

_LITERAL_BUDGET_S = 0.2


def unverifiable_programs(analysis, patterns, *, deadline: float | None = None) -> list:
    """``Unverifiable`` entries for the programs of ``analysis`` that could run a pattern."""
    pats = [p for p in patterns if isinstance(p, str) and p.split()]
    if not pats or not getattr(analysis, "programs", None):
        return []
    out = []
    for prog in analysis.programs:
        if prog.code is None:
            out.append(Unverifiable(f"the program fed to {prog.interpreter} on its input cannot be "
                                    "read statically", prog.text[:500]))
            continue
        hit = scan_code(prog.code, pats, cwd=prog.cwd, deadline=deadline)
        if hit:
            out.append(Unverifiable(f"{prog.interpreter} one-liner runs a shell command matching "
                                    f"{hit!r} from its code: it cannot be judged as a command",
                                    prog.text[:500]))
    return out


def scan_code(code: str, patterns, *, cwd: str | None = None, deadline: float | None = None) -> str | None:
    """The first pattern that a string literal of ``code`` runs as a shell command (each
    literal read as shell text once), or that a list of literals spells as an argv."""
    groups: list[list[str]] = []
    for lit, joined_prev in string_literals(code):
        if joined_prev and groups:
            groups[-1].append(lit)
        else:
            groups.append([lit])
    compiled = [cp.compile_pattern(p) for p in patterns]
    firsts = {p.name for p in compiled}
    globby = any(p.name_glob for p in compiled)
    for g in groups:
        for lit in g:
            if not globby and not any(f in lit for f in firsts):
                continue
            cmds = _literal_commands(lit, cwd, deadline)
            for p in compiled:
                if any(cp.matches(c, p) for c in cmds):
                    return p.text
        if len(g) > 1:
            words = [w for lit in g for w in lit.split()]
            for p in compiled:
                for k, w in enumerate(words):
                    if cp.matches_words(cp.basename(w), words[k + 1:], p):
                        return p.text
    return None


def _literal_commands(lit: str, cwd: str | None, deadline: float | None) -> list:
    from swarmgate.hooks.bash_tree import analyze

    budget = _LITERAL_BUDGET_S
    if deadline is not None:
        budget = max(0.01, min(budget, deadline - time.monotonic()))
    try:
        return analyze(lit, cwd=cwd or "/", max_depth=2, budget_s=budget).commands
    except Exception:  # noqa: BLE001 - a literal that cannot be read runs nothing we can see
        return []


def string_literals(code: str) -> list[tuple[str, bool]]:
    """String literals of a python/js/perl/ruby one-liner, in order, each with
    whether it directly follows the previous literal in a list (``, ``)."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(code)
    last_end = -10
    while i < n:
        c = code[i]
        if c == "#" and (i == 0 or code[i - 1] in " \t\n;"):
            j = code.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "'\"`":
            q = c
            if code.startswith(q * 3, i):
                j = code.find(q * 3, i + 3)
                j = n if j < 0 else j
                lit = code[i + 3:j]
                end = j + 3
            else:
                j = i + 1
                buf = []
                while j < n and code[j] != q:
                    if code[j] == "\\" and j + 1 < n:
                        buf.append(C_ESCAPES.get(code[j + 1], code[j + 1]))
                        j += 2
                        continue
                    buf.append(code[j])
                    j += 1
                lit = "".join(buf)
                end = j + 1
            between = code[last_end:i] if last_end >= 0 else "x"
            joined = last_end >= 0 and between.strip(" \t\n,[]()") == ""
            out.append((lit, joined))
            last_end = end
            i = end
            continue
        i += 1
    return out
