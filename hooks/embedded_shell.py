"""The shell commands interpreter code hands to a shell, read from its string literals.

``shell_calls(interpreter, code)`` lists (sink, text) for each call whose command is written in the
code; ``shell_texts`` the texts alone. The bash reader walks each text like ``bash -c TEXT``
(bash_walker_rare ``_embedded_commands``), so every guard sees those commands.

- python: ``os.system``, ``os.popen``, ``subprocess.run/call/check_call/check_output/Popen`` (a string,
  with ``shell=True`` or not, or an argv list), ``subprocess.getoutput/getstatusoutput``, ``pty.spawn``,
  ``os.execv*`` / ``os.execl*`` argvs, ``asyncio.create_subprocess_shell/_exec``; the modules under an
  alias (``import subprocess as sp``), names imported bare (``from os import system``), ``__import__("os")``;
- node: ``child_process.exec/execSync`` (a shell text), ``spawn/spawnSync/execFile/execFileSync``
  (program and argument list, an argv), under ``require("child_process")`` aliases or destructured;
  bun's ``Bun.spawn([...])`` and ``$`...```;
- perl: ``system``/``exec`` (one string: a shell text; several or a list: an argv), backticks, ``qx``;
- ruby: ``system``/``exec``/``spawn``, ``IO.popen``, ``Open3.*``, backticks, ``%x``;
- php: ``shell_exec``, ``system``, ``passthru``, ``exec``, ``popen``, ``proc_open``, backticks.

Backticks run a command in perl, ruby and php, never in JavaScript (a template string). A literal
only printed (``print("os.system('x')")``) is data: a sink inside a literal is no call. What the code
computes (an f-string field, ``"rm " + d``, ``"%s" % d``, a template's ``${x}``) becomes the dynamic
word ``${CODE_VALUE}``, so the reader sees a value it cannot know rather than a wrong path.

Parsing only; the guards judge the commands. Heuristic and cheap: ``[]`` at once when no sink word
is in the code; no ``re``.
"""
from __future__ import annotations

from swarmgate.hooks.bash_words import shell_quote
from swarmgate.hooks.code_literals import literal_spans

VALUE = "${CODE_VALUE}"   # a value the code computes: dynamic to the bash reader

# the cheap test: a sink holds one of these words
_WORDS = {
    "python": ("system", "popen", "subprocess", "spawn", "exec", "getoutput", "create_subprocess"),
    "js": ("exec", "spawn", "$`"),
    "perl": ("system", "exec", "`", "qx"),
    "ruby": ("system", "exec", "spawn", "`", "%x", "popen", "Open3"),
    "php": ("shell_exec", "system", "passthru", "exec", "popen", "proc_open", "`"),
}
# kinds: "shell" a string is a shell text; "run" a string is a shell text, a list an argv; "list" one
# string a shell text, several strings or a list an argv; "argv" a program and its argument list;
# "exec_v" the second argument is the argv; "exec_l"/"args" the arguments (after the first) are it
_PY = {
    "os": {"system": "shell", "popen": "shell", "execv": "exec_v", "execve": "exec_v", "execvp": "exec_v",
           "execvpe": "exec_v", "execl": "exec_l", "execle": "exec_l", "execlp": "exec_l", "execlpe": "exec_l"},
    "subprocess": {"run": "run", "call": "run", "check_call": "run", "check_output": "run", "Popen": "run",
                   "getoutput": "shell", "getstatusoutput": "shell"},
    "pty": {"spawn": "run"},
    "asyncio": {"create_subprocess_shell": "shell", "create_subprocess_exec": "args"},
    "commands": {"getoutput": "shell", "getstatusoutput": "shell"},
}
_JS = {"exec": "shell", "execSync": "shell", "spawn": "argv", "spawnSync": "argv", "execFile": "argv",
       "execFileSync": "argv"}
_PERL = {"system": "list", "exec": "list"}
_RUBY = {"system": "list", "exec": "list", "spawn": "list"}
_RUBY_QUALIFIED = {"IO": {"popen": "list"}, "Kernel": {"system": "list", "exec": "list", "spawn": "list"},
                   "Process": {"spawn": "list", "exec": "list"},
                   "Open3": {f: "list" for f in ("capture2", "capture2e", "capture3", "popen2", "popen2e",
                                                  "popen3", "pipeline", "pipeline_r", "pipeline_w")}}
_PHP = {"shell_exec": "shell", "system": "shell", "passthru": "shell", "exec": "shell", "popen": "shell",
        "proc_open": "run"}
_IDENT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"


def language(interpreter: str) -> str | None:
    """The language of an interpreter name (``python3.11``, ``node``, ``git filter-repo``), or None."""
    name = interpreter.rsplit("/", 1)[-1]
    if name.startswith(("python", "pypy")) or name in ("nox", "git filter-repo"):
        return "python"
    if name.startswith(("node", "bun", "deno", "tsx", "ts-node")):
        return "js"
    for lang in ("perl", "ruby", "php"):
        if name.startswith(lang):
            return lang
    return None


def shell_texts(interpreter: str, code: str) -> list[str]:
    """The shell command texts ``code`` hands to a shell (see the module doc)."""
    return [text for _sink, text in shell_calls(interpreter, code)]


def shell_calls(interpreter: str, code: str) -> list[tuple[str, str]]:
    """(sink, text) for each shell command ``code`` runs, in order of the code; ``sink`` names the
    call (``os.system``, ``subprocess.run``, ``backticks``...)."""
    lang = language(interpreter)
    if lang is None or not code or not any(w in code for w in _WORDS[lang]):
        return []
    r = _Reader(code, lang)
    if lang == "python":
        r.python()
    elif lang == "js":
        r.js(interpreter)
    else:
        r.calls(_PERL if lang == "perl" else _RUBY if lang == "ruby" else _PHP, bare=True)
        if lang == "ruby":
            for qual, fns in _RUBY_QUALIFIED.items():
                r.calls(fns, quals={qual: qual})
        r.backticks()
        r.quoted_commands(("qx",) if lang == "perl" else ("%x",) if lang == "ruby" else ())
    r.found.sort()
    return [(sink, text) for _at, sink, text in r.found]


class _Reader:
    def __init__(self, code: str, lang: str) -> None:
        self.code = code
        self.lang = lang
        self.spans = list(literal_spans(code))
        self.by_start = {s: (lit, e) for lit, s, e in self.spans}
        self.starts = [s for _, s, _ in self.spans]
        self.found: list[tuple[int, str, str]] = []

    # -- where sinks are -------------------------------------------------------
    def after(self, k: int) -> int:
        """The index of the first literal starting after offset ``k``."""
        lo, hi = 0, len(self.starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.starts[mid] <= k:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def in_literal(self, k: int) -> bool:
        lo = self.after(k)
        return lo > 0 and self.spans[lo - 1][2] > k

    def occurrences(self, word: str):
        code = self.code
        k = code.find(word)
        while k >= 0:
            after = k + len(word)
            if (after >= len(code) or code[after] not in _IDENT) and not self.in_literal(k):
                yield k, after
            k = code.find(word, k + 1)

    def qualifier(self, k: int) -> str | None:
        """What stands before ``.`` ahead of offset ``k`` (``os`` of ``os.system``): "" when nothing
        does (a bare name), None for something else (``x->system``, ``$system``)."""
        code = self.code
        if k == 0 or (code[k - 1] not in _IDENT and code[k - 1] not in ".$@>:"):
            return ""
        if code[k - 2:k] == "::" and code[max(0, k - 6):k - 2] == "CORE":
            return ""
        if code[k - 1] != ".":
            return None
        j = k - 1
        if code[j - 1:j] == ")":   # __import__("os").system, require("child_process").exec
            depth, i = 0, j - 1
            while i >= 0:
                depth += {")": 1, "(": -1}.get(code[i], 0)
                if depth == 0:
                    break
                i -= 1
            first = self.after(i)
            head = code[max(0, i - 12):i]
            if first < len(self.spans) and self.starts[first] < j and head.endswith(
                    ("__import__", "require", "import_module")):
                return self.spans[first][0].removeprefix("node:")
            return None
        i = j
        while i > 0 and code[i - 1] in _IDENT + ".":
            i -= 1
        return code[i:j] or None   # `/x/.exec(...)`: a method of something else

    # -- languages ---------------------------------------------------------------
    def python(self) -> None:
        quals = {m: m for m in _PY}
        bare: dict = {}
        code = self.code
        for m in _PY:
            k = code.find(f"import {m} as ")
            if k >= 0:
                alias = code[k + len(f"import {m} as "):].split(None, 1)[:1]
                if alias:
                    quals[alias[0].rstrip(";,")] = m
            k = code.find(f"from {m} import ")
            if k >= 0:
                rest = code[k + len(f"from {m} import "):]
                line = rest.split("\n", 1)[0].split(";", 1)[0].strip("() ")
                for part in line.split(","):
                    bits = part.split()
                    if bits and bits[0] in _PY[m]:
                        bare[bits[-1]] = (m, bits[0])
        for m, fns in _PY.items():
            for fn, kind in fns.items():
                for k, after in self.occurrences(fn):
                    q = self.qualifier(k)
                    if q == "" and bare.get(fn, (None,))[0] == m:
                        self.call(k, after, f"{m}.{fn}", kind, paren_only=True)
                    elif q and quals.get(q) == m:
                        self.call(k, after, f"{m}.{fn}", kind, paren_only=True)
        for name, (m, fn) in bare.items():
            if name != fn:   # from subprocess import run as sh_run
                for k, after in self.occurrences(name):
                    if self.qualifier(k) == "":
                        self.call(k, after, f"{m}.{fn}", _PY[m][fn], paren_only=True)

    def js(self, interpreter: str) -> None:
        code = self.code
        quals = {"child_process": "child_process"}
        for q in ("'", '"', "`"):
            for mod in ("child_process", "node:child_process"):
                k = code.find(f"require({q}{mod}{q})")
                while k >= 0:
                    head = code[:k].rstrip()
                    if head.endswith("="):
                        words = head[:-1].split()
                        if words and all(c in _IDENT + "$" for c in words[-1]):
                            quals[words[-1]] = "child_process"
                    k = code.find(f"require({q}{mod}{q})", k + 1)
                k = code.find(f"from {q}{mod}{q}")
                if k >= 0:
                    head = code[:k].split()
                    if len(head) >= 2 and head[-2] == "as":
                        quals[head[-1]] = "child_process"
                    elif head and head[-1] not in ("}", "import") and not head[-1].endswith("}"):
                        quals[head[-1]] = "child_process"
        destructured = "child_process" in code
        for fn, kind in _JS.items():
            for k, after in self.occurrences(fn):
                q = self.qualifier(k)
                if (q == "" and destructured) or (q and quals.get(q) == "child_process"):
                    self.call(k, after, f"child_process.{fn}", kind, paren_only=True)
        if interpreter.rsplit("/", 1)[-1].startswith("bun") or "bun" in code:
            self.calls({"spawn": "run", "spawnSync": "run"}, quals={"Bun": "Bun"})
            for lit, s, _e in self.spans:
                if code[s] == "`" and code[s - 1:s] == "$" and (s < 2 or code[s - 2] not in _IDENT):
                    self.found.append((s, "Bun.$", _fields(lit, "${")))

    def calls(self, table: dict, *, bare: bool = False, quals: dict | None = None) -> None:
        for fn, kind in table.items():
            for k, after in self.occurrences(fn):
                q = self.qualifier(k)
                if q == "" and bare or (q and quals and q in quals):
                    self.call(k, after, f"{q}.{fn}" if q else fn, kind, paren_only=self.lang == "php")

    def backticks(self) -> None:
        for lit, s, _e in self.spans:
            if self.code[s] == "`":
                self.found.append((s, "backticks", self.interpolated(lit, s)))

    def quoted_commands(self, ops: tuple) -> None:
        """perl's ``qx{...}`` and ruby's ``%x(...)``: any delimiter, brackets nest."""
        code = self.code
        pairs = {"{": "}", "(": ")", "[": "]", "<": ">"}
        for op in ops:
            for k, after in self.occurrences(op) if op == "qx" else self._plain(op):
                if op == "qx" and k > 0 and code[k - 1] in _IDENT + "$@%>":
                    continue
                if after >= len(code):
                    continue
                d = code[after]
                if d in _IDENT or d in " \t\n=,;":
                    continue
                close = pairs.get(d, d)
                depth, i = 1, after + 1
                while i < len(code):
                    c = code[i]
                    if c == "\\":
                        i += 2
                        continue
                    if c == close and d != close:
                        depth -= 1
                    elif c == d and d != close:
                        depth += 1
                    elif c == close:
                        depth = 0
                    if depth == 0:
                        break
                    i += 1
                if i < len(code):
                    body = code[after + 1:i]
                    self.found.append((k, op, body if d == "'" else self.interpolated(body, -1)))

    def _plain(self, word: str):
        k = self.code.find(word)
        while k >= 0:
            if not self.in_literal(k):
                yield k, k + len(word)
            k = self.code.find(word, k + 1)

    # -- a call and its arguments ------------------------------------------------
    def call(self, k: int, after: int, sink: str, kind: str, *, paren_only: bool = False) -> None:
        code = self.code
        i = after
        while i < len(code) and code[i] in " \t":
            i += 1
        paren = i < len(code) and code[i] == "("
        if not paren and (paren_only or i == after):
            return   # a name, not a call (`os.system` passed around; `system` in perl needs a space)
        args = self.arguments(i + 1 if paren else i, paren)
        for text in _texts(kind, args):
            if text.strip():
                self.found.append((k, sink, text))

    def arguments(self, i: int, paren: bool) -> list:
        """The arguments from offset ``i``: ("str", text), ("list", [text or None]) or ("other", raw)."""
        code = self.code
        out: list = []
        n = len(code)
        while i < n and len(out) < 64:
            while i < n and code[i] in " \t\n\r" and (paren or code[i] != "\n"):
                i += 1
            if i >= n or code[i] in ")]}" or (not paren and code[i] in ";\n"):
                break
            end = self.arg_end(i, paren)
            out.append(self.value(i, end))
            if end < n and code[end] == ",":
                i = end + 1
                continue
            break
        return out

    def arg_end(self, i: int, paren: bool) -> int:
        code = self.code
        depth = 0
        n = len(code)
        while i < n:
            if i in self.by_start:
                i = self.by_start[i][1]
                continue
            c = code[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif depth == 0 and (c == "," or (not paren and (c in ";\n" or code.startswith(
                    (" or ", " and ", " if ", " unless ", " ||", " &&", " ? "), i)))):
                return i
            i += 1
        return n

    def value(self, a: int, b: int):
        code = self.code
        raw = code[a:b].rstrip()
        b = a + len(raw)
        if raw[:1] == "{":
            return ("other", raw)   # a hash, an object, a block
        if raw[:1] in "[(" or raw.startswith(("%w[", "%w(", "qw(")):
            start = a + (3 if raw[:1] not in "[(" else 1)
            if raw.startswith(("%w", "qw")):
                return ("list", raw[3:-1].split())
            items = self.arguments(start, True)
            return ("list", [v[1] if v[0] == "str" else None for v in items])
        pieces: list[str] = []
        i, last = a, a
        formatted = False
        while i < b:
            if i in self.by_start:
                lit, e = self.by_start[i]
                gap = code[last:i]
                if pieces and _computed(gap):
                    pieces.append(VALUE)
                elif not pieces and _computed(gap.rstrip("fFbBrRuU")):
                    pieces.append(VALUE)
                pieces.append(self.interpolated(lit, i))
                i = last = e
                continue
            i += 1
        if not pieces:
            return ("other", raw)
        tail = code[last:b].strip()
        if tail == ".split()" and len(pieces) == 1:
            return ("list", pieces[0].split())   # subprocess.run("rm -rf x".split())
        if tail.startswith(("%", ".format(")):
            formatted = tail[:1] == "%"
            if not formatted:
                pieces = [_fields(x, "{") if x != VALUE else x for x in pieces]
        elif _computed(tail):
            pieces.append(VALUE)
        text = "".join(pieces)
        if formatted:
            text = _formats(text)
        return ("str", text)

    def interpolated(self, lit: str, start: int) -> str:
        """The literal with the fields its language fills in replaced by ``VALUE``."""
        code = self.code
        q = code[start] if start >= 0 else '"'
        if self.lang == "python" and start > 0:
            prefix = code[max(0, start - 2):start].lower()
            if "f" in prefix:
                return _fields(lit, "{")
            return lit
        if self.lang == "ruby" and q in '"`':
            return _fields(lit, "#{")
        if self.lang == "js" and q == "`":
            return _fields(lit, "${")
        return lit


def _computed(gap: str) -> bool:
    """Does the code between two literals compute a value (``+ d +``), rather than only join them?"""
    return gap.strip(" \t\n+.") != ""


def _fields(text: str, opener: str) -> str:
    """``text`` with each ``{...}`` field (``opener`` ``{``, ``${`` or ``#{``) replaced by VALUE;
    ``{{``/``}}`` of a python f-string are its braces."""
    if opener not in text:
        return text.replace("{{", "{").replace("}}", "}") if opener == "{" else text
    out, i, n = [], 0, len(text)
    while i < n:
        if opener == "{" and text.startswith(("{{", "}}"), i):
            out.append(text[i])
            i += 2
            continue
        if text.startswith(opener, i):
            depth, j = 0, i + len(opener) - 1
            while j < n:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            out.append(VALUE)
            i = j + 1
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _formats(text: str) -> str:
    """A %-format string (``"rm %s" % d``) with its fields as VALUE (``str.format``'s are ``_fields``)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 1 < n:
            if text[i + 1] == "%":
                out.append("%")
                i += 2
                continue
            j = i + 1
            if text[j] == "(":
                j = text.find(")", j)
                j = n - 1 if j < 0 else j + 1
            while j < n and text[j] in "-+ #0123456789.*":
                j += 1
            if j < n and text[j] in "sdirfeExXgGco":
                out.append(VALUE)
                i = j + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _argv(words: list) -> str:
    return " ".join(VALUE if w is None else shell_quote(w) for w in words)


def _texts(kind: str, args: list) -> list[str]:
    if not args:
        return []
    if kind == "list" and args[0][0] == "other" and args[0][1].startswith("{"):
        args = args[1:]   # ruby's environment hash: system({"A" => "1"}, "make")
        if not args:
            return []
    first = args[0]
    if kind == "exec_v":
        return [_argv(args[1][1])] if len(args) > 1 and args[1][0] == "list" else []
    if kind in ("exec_l", "args"):
        words = args[1:] if kind == "exec_l" else args
        strs = [a[1] if a[0] == "str" else None for a in words]
        return [_argv(strs)] if strs and strs[0] is not None else []
    if first[0] == "list":
        words = first[1]
        return [_argv(words)] if words and words[0] is not None else []
    if first[0] != "str":
        return []
    if kind == "argv":
        rest = args[1][1] if len(args) > 1 and args[1][0] == "list" else []
        return [_argv([first[1]] + list(rest))]
    if kind == "list":
        strs = []
        for a in args:
            if a[0] != "str":
                break
            strs.append(a[1])
        if len(strs) > 1:
            return [_argv(strs)]
    return [first[1]]
