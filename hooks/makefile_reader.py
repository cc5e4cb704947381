"""Makefiles as the bash reader needs them: variables, rules, recipes, the default goal.

Pure text in, data out; the walker decides which targets run and reads each
recipe line as a shell text.
"""
from __future__ import annotations

from swarmgate.hooks.bash_words import match_close

MAKE_BUILTINS = {"CC": "cc", "CXX": "g++", "AR": "ar", "AS": "as", "LD": "ld", "RM": "rm -f",
                  "INSTALL": "install", "LEX": "lex", "YACC": "yacc", "FC": "f77", "CPP": "cc -E",
                  "SHELL": "/bin/sh", "CFLAGS": "", "CXXFLAGS": "", "LDFLAGS": "", "LDLIBS": "",
                  "CPPFLAGS": "", "ARFLAGS": "rv", "MAKEFLAGS": "", "CURDIR": "."}


def parse_makefile(text: str):
    """(variables, recipes{target: [lines]}, prereqs{target: [names]}, default target)."""
    lines: list[str] = []
    buf = ""
    for raw in text.split("\n"):
        if raw.endswith("\\"):
            buf += raw[:-1] + " "
            continue
        lines.append(buf + raw)
        buf = ""
    if buf:
        lines.append(buf)
    mvars: dict[str, str] = {}
    recipes: dict[str, list[str]] = {}
    prereqs: dict[str, list[str]] = {}
    default = None
    current: list[str] = []
    for line in lines:
        if line.startswith("\t"):
            if current:
                body = line[1:].lstrip()
                while body[:1] in ("@", "-", "+"):
                    body = body[1:].lstrip()
                if body and not body.startswith("#"):
                    for t in current:
                        recipes.setdefault(t, []).append(body)
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        for op in ("::=", ":=", "?=", "+=", "!=", "="):
            k = stripped.find(op)
            colon = stripped.find(":")
            if k > 0 and (colon < 0 or colon >= k or op in ("::=", ":=")) and \
                    stripped[:k].strip().replace("override ", "").replace("export ", "").strip().replace("_", "a").replace(".", "a").isalnum():
                name = stripped[:k].strip().replace("override ", "").replace("export ", "").strip()
                val = stripped[k + len(op):].strip()
                if op == "+=":
                    mvars[name] = (mvars.get(name, "") + " " + val).strip()
                elif op == "?=":
                    mvars.setdefault(name, val)
                elif op == "!=":
                    mvars[name] = None
                else:
                    mvars[name] = val
                current = []
                break
        else:
            if ":" in stripped and not stripped.startswith((".", "include", "-include", "ifeq", "ifneq",
                                                            "ifdef", "ifndef", "else", "endif", "define")):
                head, _, rest = stripped.partition(":")
                rest = rest.lstrip(":")
                rest, _, inline = rest.partition(";")
                names = head.split()
                current = names
                for t in names:
                    prereqs.setdefault(t, []).extend(rest.split())
                    if default is None and "%" not in t:
                        default = t
                if inline.strip():
                    for t in names:
                        recipes.setdefault(t, []).append(inline.strip())
            elif stripped.startswith("."):
                head = stripped.partition(":")[0]
                current = [] if head.strip() in (".PHONY", ".SUFFIXES", ".DEFAULT_GOAL") else head.split()
            else:
                current = []
    return mvars, recipes, prereqs, default


def make_expand(line: str, mvars: dict, target: str, prereqs, level: int = 0) -> str:
    """Expand make's $(VAR) ${VAR} $@ $< $^ $$ in a recipe line into shell text."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nx = line[i + 1]
        if nx == "$":
            out.append("$")
            i += 2
            continue
        if nx in "@<^+*?":
            out.append({"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs),
                        "+": " ".join(prereqs), "*": target, "?": " ".join(prereqs)}[nx])
            i += 2
            continue
        if nx in "({":
            close = ")" if nx == "(" else "}"
            j = match_close(line, i + 1, nx, close)
            inner = line[i + 2:j - 1]
            name = inner.strip()
            if name in ("MAKE", "MAKE_COMMAND"):
                out.append("make")
            elif name in mvars and mvars[name] is not None and level < 5:
                out.append(make_expand(mvars[name], mvars, target, prereqs, level + 1))
            else:
                safe = "".join(ch if ch.isalnum() else "_" for ch in name)[:40] or "x"
                out.append("${MAKE_" + safe + "}")
            i = j
            continue
        out.append("${MAKE_" + nx + "}" if nx.isalnum() else "$" + nx)
        i += 2
    return "".join(out)
