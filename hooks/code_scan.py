"""Interpreter programs scanned for command patterns (the guards' side of ``python -c``).

The bash reader records the code it hands to an interpreter (``Analysis.programs``:
``python -c CODE``, ``node -e CODE``, a program on stdin, ``python3 x.py``, nox sessions,
awk programs) without judging it. This module judges it against the configured patterns.
The command is unverifiable (the interpreter could run the pattern, and nothing can tell
statically whether it does) when:
- a string literal, read as a shell text, runs a command matching a pattern
  (``os.system("cargo test --workspace")``), unless the literal is only printed
  (``print("cargo test --workspace")``, ``console.log(...)``, ``puts``, ``say``);
- literals side by side spell one as an argv (``["cargo", "test", "--workspace"]``,
  ``" ".join(["cargo", "test"])``), also once concatenated (``"car" + "go"``) or decoded
  (``\\x63``-style escapes, ``bytes.fromhex("...")``, base64, ``chr(99)`` lists);
- the code can run commands (``subprocess``, ``os.system``, ``exec``, ``spawn``, backticks,
  ``system(``) and every word of a pattern appears in it: built in a way not decoded here.
"""
from __future__ import annotations

import time

from swarmgate.hooks import command_patterns as cp
from swarmgate.hooks.bash_results import Unverifiable
from swarmgate.hooks.code_literals import literal_flags as _literal_flags
from swarmgate.hooks.code_literals import string_literals

_LITERAL_BUDGET_S = 0.2
_SINKS = ("subprocess", "os.system", "os.popen", "os.exec", "os.spawn", "popen", "Popen", "system(",
          "system ", "exec(", "execSync", "execFile", "spawn", "child_process", "check_output",
          "check_call", "getoutput", "getstatusoutput", "pty.spawn", "`", "qx", "IO.popen", "Open3",
          "shell_exec", "passthru", "proc_open", "pytest.main", "session.run", "run_command",
          "invoke(", "sh.", "plumbum", "Command(", "shutil.which", "os.startfile", "eval(", "$(",
          "| getline", '| "', "|&")


def unverifiable_programs(analysis, patterns, *, deadline: float | None = None) -> list:
    """``Unverifiable`` entries for the programs of ``analysis`` that could run a pattern."""
    pats = [p for p in patterns if isinstance(p, str) and p.split()]
    if not pats or not getattr(analysis, "programs", None):
        return []
    out = []
    for prog in analysis.programs:
        if prog.code is None:
            where = {"stdin": "fed to it on its input", "file": "in the file it runs"}.get(
                prog.source, "it runs")
            out.append(Unverifiable(f"the program {where} ({prog.interpreter}) cannot be read statically",
                                    prog.text[:500]))
            continue
        hit = scan_code(prog.code, pats, cwd=prog.cwd, deadline=deadline)
        if hit:
            what = "one-liner" if prog.source == "inline" else "program"
            out.append(Unverifiable(f"{prog.interpreter} {what} runs a shell command matching "
                                    f"{hit!r} from its code: it cannot be judged as a command",
                                    prog.text[:500]))
    return out


def scan_code(code: str, patterns, *, cwd: str | None = None, deadline: float | None = None) -> str | None:
    """The first pattern ``code`` could run (see the module doc), or None."""
    compiled = [cp.compile_pattern(p) for p in patterns]
    firsts = {p.name for p in compiled}
    globby = any(p.name_glob for p in compiled)
    lits = string_literals(code)
    groups: list[list[str]] = []
    printed: set = set()
    for lit, joined_prev in lits:
        if joined_prev and groups:
            groups[-1].append(lit)
        else:
            groups.append([lit])
    printed = {lit for lit, flags in _literal_flags(code) if flags}
    extra = _decoded(code, lits)
    for g in groups + [[x] for x in extra]:
        for lit in g:
            if lit in printed and len(g) == 1:
                continue   # only printed: data, not a command
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
    # built some other way: the words are there and the code can run commands
    if any(s in code for s in _SINKS):
        text = " ".join(lit for lit, _ in lits) + " " + " ".join(extra) + " " + code
        for p in compiled:
            if not p.name_glob and p.name in text and all(_stem(w) in text for w in p.words):
                return p.text
    return None


def _glob(w: str) -> bool:
    return any(c in w for c in "*?[")


def _stem(w: str) -> str:
    """What a pattern word must leave in the code: itself, or a glob's text before its first wildcard
    (`tests/heavy*`: `tests/heavy`; `pytest.main(['tests/unit'])` holds none of it)."""
    for k, c in enumerate(w):
        if c in "*?[":
            return w[:k]
    return w


def _literal_commands(lit: str, cwd: str | None, deadline: float | None) -> list:
    from swarmgate.hooks.bash_tree import analyze

    budget = _LITERAL_BUDGET_S
    if deadline is not None:
        budget = max(0.01, min(budget, deadline - time.monotonic()))
    try:
        return analyze(lit, cwd=cwd or "/", max_depth=2, budget_s=budget).commands
    except Exception:  # noqa: BLE001 - a literal that cannot be read runs nothing we can see
        return []


def _decoded(code: str, lits) -> list[str]:
    """Texts hidden in the code, decoded where cheap: hex strings (bytes.fromhex), base64,
    chr() lists, reversed strings."""
    out: list[str] = []
    if "fromhex" in code or "unhexlify" in code or "hex" in code:
        for lit, _ in lits:
            s = lit.replace(" ", "")
            if len(s) >= 6 and len(s) % 2 == 0 and all(ch in "0123456789abcdefABCDEF" for ch in s):
                try:
                    out.append(bytes.fromhex(s).decode("utf-8"))
                except (ValueError, UnicodeDecodeError):
                    pass
    if "b64" in code or "base64" in code or "atob" in code or "decode" in code:
        import base64
        import binascii

        for lit, _ in lits:
            s = lit.strip()
            if len(s) >= 8 and all(ch.isalnum() or ch in "+/=_-\n" for ch in s):
                try:
                    txt = base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_" if "-" in s or "_" in s
                                           else None).decode("utf-8")
                except (binascii.Error, ValueError, UnicodeDecodeError):
                    continue
                if txt.isprintable() or "\n" in txt:
                    out.append(txt)
    if "chr" in code or "fromCharCode" in code:
        nums, cur = [], ""
        for ch in code + " ":
            if ch.isdigit():
                cur += ch
                continue
            if cur:
                v = int(cur)
                if 9 <= v < 0x110000:
                    nums.append(v)
                cur = ""
        if len(nums) >= 4:
            try:
                out.append("".join(chr(v) for v in nums))
            except (ValueError, OverflowError):
                pass
    if "[::-1]" in code or "reverse" in code:
        out.extend(lit[::-1] for lit, _ in lits if len(lit) >= 6)
    return out
