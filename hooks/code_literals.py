"""The string literals of interpreter code (python, js, perl, ruby, php, awk, Tcl-ish), read without a parser.

A heuristic lexer, one place for what the code readers share: ``code_scan`` (heavy patterns in a
one-liner), ``embedded_shell`` (the shell commands the code hands to a shell), ``interpreter_writes``
(the paths it writes) and ``task_files`` (nox sessions).

- ``literal_spans(code)``: (literal, start, end) of each literal in order, escapes decoded (not for
  raw ``r"..."`` strings); quotes ``'`` ``"`` and backticks, triple quotes, ``#`` comments skipped;
- ``string_literals(code)``: the literals with concatenation (``"a" + "b"``, ``"a" "b"``, perl's
  ``"a" . "b"``) joined, each with whether it directly follows the previous one in a list;
- ``literal_flags(code)``: (literal, only printed) for each literal.

No ``re``: the hook loads this module for every command that holds interpreter code.
"""
from __future__ import annotations

from swarmgate.hooks.bash_words import c_unescape as _unescape

PRINTERS = ("print(", "print ", "console.log(", "console.error(", "console.info(", "puts ", "puts(",
            "say ", "say(", "echo ", "printf(", "println(", "println!(", "logging.info(", "logger.info(",
            "log(", "warn(", "printf ", "System.out.println(", "sys.stdout.write(", "sys.stderr.write(",
            "process.stdout.write(", "p ", "pp ", "print_r(", "var_dump(", "help=", "description=",
            "desc=", "usage=")


def literal_spans(code: str):
    """(literal, start, end) of each string literal in order; ``start`` is the opening quote's
    offset, ``end`` just past the closing one."""
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "#" and (i == 0 or code[i - 1] in " \t\n;"):
            j = code.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "'\"`":
            q = c
            raw = i > 0 and code[i - 1] in "rR" and (i < 2 or not code[i - 2].isalnum())
            if code.startswith(q * 3, i):
                j = code.find(q * 3, i + 3)
                j = n if j < 0 else j
                lit = code[i + 3:j]
                end = j + 3
            else:
                j = i + 1
                while j < n and code[j] != q:
                    j += 2 if code[j] == "\\" else 1
                lit = code[i + 1:j]
                end = j + 1
            yield (lit if raw else _unescape(lit)), i, end
            i = end
            continue
        i += 1


def string_literals(code: str) -> list[tuple[str, bool]]:
    """String literals of a one-liner, in order, each with whether it directly follows the
    previous literal in a list (``, ``). Concatenated literals (``"a" + "b"``, ``"a" "b"``,
    perl's ``"a" . "b"``) are joined into one."""
    out: list[tuple[str, bool]] = []
    last_end = -10
    for lit, start, end in literal_spans(code):
        between = code[last_end:start] if last_end >= 0 else "x"
        # string prefixes (f"", b'', u"") belong to the literal
        between = between.rstrip("fbuFBU")
        glue = between.strip(" \t\n")
        if last_end >= 0 and out and glue in ("+", ".", ""):
            out[-1] = (out[-1][0] + lit, out[-1][1])
            last_end = end
            continue
        joined = last_end >= 0 and between.strip(" \t\n,[]()") == ""
        out.append((lit, joined))
        last_end = end
    return out


def literal_flags(code: str):
    """(literal, only_printed) for each literal: printed when the text before it is a print call
    and the literal is its whole argument, not piped anywhere."""
    for lit, start, end in literal_spans(code):
        before = code[max(0, start - 24):start].rstrip("fbuFBUr")
        after = code[end:end + 3].lstrip(" ")
        printed = before.rstrip(" \t").endswith(PRINTERS) or before.endswith(PRINTERS)
        piped = after.startswith("|") or code[end:end + 40].lstrip().startswith(("|", ">"))
        yield lit, printed and not piped and (after[:1] in (")", ",", ";", "\n", "") or after.startswith(" "))
