"""Makefiles as the bash reader needs them, and what ``make`` runs.

``parse_makefile`` (pure): variables, explicit and pattern rules with their recipe
lines (and whether a line runs under ``-n``: a ``+`` prefix or ``$(MAKE)``), the
default goal (the first target, or ``.DEFAULT_GOAL``), ``include`` lines, ``define``
blocks, and the ``$(shell ...)`` texts make runs while reading the file.

``run_make`` (the walker's side): ``make [-C DIR] [-f FILE|-f -] [--eval TEXT]
[VAR=value] [TARGET...]`` reads ``MAKEFILES``, the makefile and its includes, runs the
``$(shell ...)`` texts, then the recipes of the targets (pattern rules included) and
of their prerequisites, each line a shell text (via ``make:TARGET``). Under ``-n``/``-q``
only the lines make runs anyway (``+``, ``$(MAKE)``). A makefile read from stdin that is
not literal, or one this command wrote with unknown content, is unverifiable.
"""
from __future__ import annotations

from swarmgate import lean_os as os

from swarmgate.hooks.bash_words import match_close

MAKE_BUILTINS = {"CC": "cc", "CXX": "g++", "AR": "ar", "AS": "as", "LD": "ld", "RM": "rm -f",
                 "INSTALL": "install", "LEX": "lex", "YACC": "yacc", "FC": "f77", "CPP": "cc -E",
                 "SHELL": "/bin/sh", "CFLAGS": "", "CXXFLAGS": "", "LDFLAGS": "", "LDLIBS": "",
                 "CPPFLAGS": "", "ARFLAGS": "rv", "MAKEFLAGS": "", "CURDIR": "."}
_DIRECTIVES = ("include", "-include", "sinclude", "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif",
               "define", "endef", "export", "unexport", "override", "vpath", "undefine", "private")
_MAX_INCLUDES = 8


class Makefile:
    """A parsed makefile. ``recipes``/``patterns`` hold (line, runs_under_n) pairs."""
    __slots__ = ("vars", "recipes", "prereqs", "default", "patterns", "includes", "shell_texts")

    def __init__(self) -> None:
        self.vars: dict[str, str | None] = {}
        self.recipes: dict[str, list] = {}
        self.prereqs: dict[str, list] = {}
        self.default: str | None = None
        self.patterns: list = []          # [(target pattern, [prereq patterns], [(line, plus)])]
        self.includes: list[tuple[str, bool]] = []   # (path as written, optional)
        self.shell_texts: list[str] = []

    def merge(self, other: Makefile) -> None:
        for k, v in other.vars.items():
            self.vars.setdefault(k, v)
        for t, r in other.recipes.items():
            self.recipes.setdefault(t, []).extend(r)
        for t, p in other.prereqs.items():
            self.prereqs.setdefault(t, []).extend(p)
        self.patterns.extend(other.patterns)
        self.shell_texts.extend(other.shell_texts)
        if self.default is None:
            self.default = other.default


def _shell_calls(s: str) -> list[str]:
    out = []
    k = s.find("$(shell ")
    while k >= 0 and len(out) < 16:
        j = match_close(s, k + 1, "(", ")")
        out.append(s[k + 8:j - 1])
        k = s.find("$(shell ", j)
    return out


def parse_makefile(text: str) -> Makefile:
    mk = Makefile()
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
    current: list[str] = []
    current_pattern: list | None = None
    define: tuple[str, list] | None = None
    goal = None
    for line in lines:
        if define is not None:
            if line.strip() == "endef":
                mk.vars[define[0]] = "\n".join(define[1])
                define = None
            else:
                define[1].append(line)
            continue
        if line.startswith("\t"):
            body = line[1:].lstrip()
            plus = False
            while body[:1] in ("@", "-", "+"):
                plus = plus or body[0] == "+"
                body = body[1:].lstrip()
            if body and not body.startswith("#"):
                plus = plus or "$(MAKE)" in body or "${MAKE}" in body
                if current_pattern is not None:
                    current_pattern.append((body, plus))
                for t in current:
                    mk.recipes.setdefault(t, []).append((body, plus))
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        s = stripped.strip()
        mk.shell_texts.extend(_shell_calls(s))
        word = s.split(None, 1)[0]
        if word in ("include", "-include", "sinclude"):
            for p in s.split()[1:]:
                mk.includes.append((p, word != "include"))
            current, current_pattern = [], None
            continue
        if word == "define":
            name = s.split()[1] if len(s.split()) > 1 else ""
            define = (name, [])
            continue
        if word in ("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "vpath", "unexport", "undefine"):
            continue
        for op in ("::=", ":::=", ":=", "?=", "+=", "!=", "="):
            k = stripped.find(op)
            colon = stripped.find(":")
            head = stripped[:k].strip() if k > 0 else ""
            for pre in ("override ", "export ", "private "):
                head = head.replace(pre, "")
            head = head.strip()
            if k > 0 and (colon < 0 or colon >= k or op in ("::=", ":::=", ":=")) and \
                    head.replace("_", "a").replace(".", "a").replace("-", "a").isalnum():
                val = stripped[k + len(op):].strip()
                if head == ".DEFAULT_GOAL":
                    goal = val or None
                elif op == "+=":
                    prev = mk.vars.get(head)
                    mk.vars[head] = None if prev is None and head in mk.vars else (
                        ((prev or "") + " " + val).strip())
                elif op == "?=":
                    mk.vars.setdefault(head, val)
                elif op == "!=":
                    mk.shell_texts.append(val)   # VAR != CMD runs CMD while reading
                    mk.vars[head] = None
                else:
                    mk.vars[head] = val
                current, current_pattern = [], None
                break
        else:
            if ":" in stripped and not stripped.startswith(_DIRECTIVES):
                head, _, rest = stripped.partition(":")
                rest = rest.lstrip(":")
                rest, _, inline = rest.partition(";")
                names = head.split()
                if head.strip().startswith(".") and head.strip() in (".PHONY", ".SUFFIXES", ".DEFAULT_GOAL",
                                                                      ".PRECIOUS", ".SECONDARY", ".INTERMEDIATE",
                                                                      ".NOTPARALLEL", ".ONESHELL",
                                                                      ".SILENT", ".IGNORE", ".EXPORT_ALL_VARIABLES",
                                                                      ".DELETE_ON_ERROR", ".POSIX"):
                    current, current_pattern = [], None
                    continue
                if any("%" in t for t in names):
                    current_pattern = []
                    mk.patterns.append(([t for t in names if "%" in t], rest.split(), current_pattern))
                    current = [t for t in names if "%" not in t]
                else:
                    current_pattern = None
                    current = names
                for t in current:
                    mk.prereqs.setdefault(t, []).extend(rest.split())
                    if mk.default is None and not t.startswith("."):
                        mk.default = t
                if inline.strip():
                    if current_pattern is not None:
                        current_pattern.append((inline.strip(), False))
                    for t in current:
                        mk.recipes.setdefault(t, []).append((inline.strip(), False))
            else:
                current, current_pattern = [], None
    if goal:
        mk.default = goal
    return mk


def make_expand(line: str, mvars: dict, target: str, prereqs, level: int = 0, stem: str = "") -> str:
    """Expand make's $(VAR) ${VAR} $@ $< $^ $* $$ $(shell CMD) in a recipe line into shell text."""
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
                        "+": " ".join(prereqs), "*": stem or target, "?": " ".join(prereqs)}[nx])
            i += 2
            continue
        if nx in "({":
            close = ")" if nx == "(" else "}"
            j = match_close(line, i + 1, nx, close)
            inner = line[i + 2:j - 1]
            name = inner.strip()
            if name.startswith("shell ") and level < 5:
                out.append("$(" + make_expand(name[6:], mvars, target, prereqs, level + 1, stem) + ")")
            elif name in ("MAKE", "MAKE_COMMAND"):
                out.append("make")
            elif name in mvars and mvars[name] is not None and level < 5:
                out.append(make_expand(mvars[name], mvars, target, prereqs, level + 1, stem))
            else:
                safe = "".join(ch if ch.isalnum() else "_" for ch in name)[:40] or "x"
                out.append("${MAKE_" + safe + "}")
            i = j
            continue
        out.append("${MAKE_" + nx + "}" if nx.isalnum() else "$" + nx)
        i += 2
    return "".join(out)


def _pattern_match(pat: str, target: str) -> str | None:
    pre, _, post = pat.partition("%")
    if target.startswith(pre) and target.endswith(post) and len(target) >= len(pre) + len(post):
        return target[len(pre):len(target) - len(post)] if post else target[len(pre):]
    return None


def _dry(args: list, env: dict) -> bool:
    for a in args:
        if a == "--":
            break
        if a in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question"):
            return True
        if a.startswith("-") and not a.startswith("--"):
            letters = ""
            for c in a[1:]:
                if not c.isalpha():
                    break
                letters += c
                if c in "jlCfIoWE":
                    break
            if "n" in letters or "q" in letters:
                return True
    flags = env.get("MAKEFLAGS", "").split()
    if flags and not flags[0].startswith("-") and "=" not in flags[0] and ("n" in flags[0] or "q" in flags[0]):
        return True
    return any(f in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question") for f in flags)


def run_make(wk, name, args, largs, env, ctx, text):
    """``make [targets]``: see the module doc."""
    mdir = wk.project_dir()
    mfiles: list = []
    evals: list = []
    targets: list = []
    overrides: dict = {}
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a in ("-C", "--directory") and i + 1 < n:
            mdir = os.path.join(mdir, args[i + 1]) if mdir else None
            i += 2
            continue
        if a.startswith("-C") and len(a) > 2:
            mdir = os.path.join(mdir, a[2:]) if mdir else None
        elif a.startswith("--directory="):
            mdir = os.path.join(mdir, a.split("=", 1)[1]) if mdir else None
        elif a in ("-f", "--file", "--makefile") and i + 1 < n:
            mfiles.append((args[i + 1], largs[i + 1]))
            i += 2
            continue
        elif a.startswith(("--file=", "--makefile=")):
            mfiles.append((a.split("=", 1)[1], largs[i]))
        elif a.startswith("-f") and len(a) > 2:
            mfiles.append((a[2:], largs[i]))
        elif a == "--eval" and i + 1 < n:
            evals.append((args[i + 1], largs[i + 1]))
            i += 2
            continue
        elif a.startswith("--eval="):
            evals.append((a.split("=", 1)[1], largs[i]))
        elif a in ("-o", "-W", "-I", "--old-file", "--what-if", "--include-dir", "--assume-old",
                   "--assume-new", "--new-file", "-E") and i + 1 < n:
            i += 2
            continue
        elif a in ("-j", "-l", "--jobs", "--load-average") and i + 1 < n and args[i + 1].isdigit():
            i += 2
            continue
        elif a.startswith("-"):
            pass
        elif "=" in a:
            k, v = a.split("=", 1)
            overrides[k.strip(":+?")] = v
        else:
            if largs[i] >= 0:
                wk.unverifiable(f"make runs a target whose name cannot be read statically ({a})", text,
                                exec_judged=(name,))
                return True
            targets.append(a)
        i += 1
    dry = _dry(args, env)
    if mdir is None or not wk._known_dir(mdir):
        wk.unverifiable("make: cannot tell which directory it runs in", text, exec_judged=(name,))
        return True
    mdir = os.path.normpath(mdir)
    mk = Makefile()
    sources: list = []
    for p in env.get("MAKEFILES", "").split():
        sources.append(("file", os.path.join(mdir, p), True))
    if mfiles:
        for f, last in mfiles:
            if last >= 0:
                wk.unverifiable(f"make -f {f}: the makefile path cannot be read statically", text)
                return True
            if f in ("-", "/dev/stdin"):
                body = wk._input_text()
                if body is None:
                    wk.unverifiable("make -f -: the makefile comes from input that cannot be read statically",
                                    text)
                    return True
                sources.append(("text", body, False))
            else:
                sources.append(("file", os.path.normpath(os.path.join(mdir, f)), False))
    else:
        for cand in ("GNUmakefile", "makefile", "Makefile"):
            p = os.path.join(mdir, cand)
            if os.path.isfile(p) or p in wk.written:
                sources.append(("file", p, False))
                break
        else:
            if not evals:
                return True   # no makefile: make fails, nothing runs
    for ev, last in evals:
        if last >= 0:
            wk.unverifiable("make --eval: the text cannot be read statically", text)
            return True
        sources.append(("text", ev, False))
    seen_files: set = set()
    queue = list(sources)
    while queue:
        kind, what, optional = queue.pop(0)
        if kind == "file":
            if what in seen_files or len(seen_files) >= _MAX_INCLUDES:
                continue
            seen_files.add(what)
            if not (os.path.isfile(what) or what in wk.written):
                continue   # make would try to remake it, or fail
            parsed = wk.project_cache.get(("makefile", what))
            if parsed is None:
                body = wk.read_project_file(what, text, "make", as_script=True)
                if body is None:
                    return True
                parsed = parse_makefile(body)
                wk.project_cache[("makefile", what)] = parsed
        else:
            parsed = parse_makefile(what)
        mk.merge(parsed)
        for inc, opt in parsed.includes:
            if "$" in inc:
                mvars = dict(MAKE_BUILTINS, **{k: v for k, v in mk.vars.items() if v is not None})
                inc = make_expand(inc, mvars, "", [])
                if "$" in inc:
                    if not opt:
                        wk.unverifiable(f"make: an include whose name cannot be read ({inc})", text)
                    continue
            queue.append(("file", os.path.normpath(os.path.join(mdir, inc)), opt))
    mvars = {**MAKE_BUILTINS, **mk.vars}
    mvars.update(overrides)
    mvars["CURDIR"] = mdir
    sub = ctx.sub("make $(shell)")
    for s in mk.shell_texts[:16]:
        wk.run_in(make_expand(s, mvars, "", []), sub, "make $(shell)", text, cwd=mdir)
    done: set = set()
    steps = [0]

    def run_target(t: str, level: int) -> None:
        if t in done or level > 16:
            return
        if steps[0] >= 128:
            wk.unverifiable("make: too many targets to follow", text)
            return
        done.add(t)
        steps[0] += 1
        lines = mk.recipes.get(t)
        pre = list(mk.prereqs.get(t, ()))
        stem = ""
        if not lines:
            for pats, ppats, plines in mk.patterns:
                for pat in pats:
                    st = _pattern_match(pat, t)
                    if st is not None and plines:
                        stem = st
                        lines = plines
                        pre += [p.replace("%", st) for p in ppats]
                        break
                if lines:
                    break
        for p in pre:
            run_target(p, level + 1)
        for line, plus in lines or ():
            if dry and not plus:
                continue
            body = make_expand(line, mvars, t, pre, stem=stem)
            wk.run_in(body, ctx.sub(f"make:{t}"), f"make {t}", text, cwd=mdir)

    for t in targets or ([mk.default] if mk.default else []):
        run_target(t, 0)
    return True
