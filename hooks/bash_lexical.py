"""A small, quote-aware bash parser: the fallback when bashlex cannot parse.

Parsing only, no judging. It produces the same node types that
``swarmgate.hooks.bash_tree`` builds from a bashlex tree, so one walker
serves both front ends. It knows what bashlex does not: ``(( ))``,
``[[ ]]``, ``case`` patterns, ``select``, ``coproc``, ``time -p``,
``${var//a/b}`` and friends. It is tolerant: where the text is broken
(an unbalanced quote, a missing ``done``), it closes what is open, keeps
what it found and sets ``Parser.unsure`` to a reason, so the caller can
report the command as unverifiable instead of trusting a guess.

Bounds: nesting deeper than ``MAX_NEST`` levels is not descended (the
parser stops and marks itself unsure), so 1000 levels of ``$(`` cost
microseconds, not a RecursionError.
"""
from __future__ import annotations

import time

MAX_NEST = 64
_plain = None   # compiled lazily: `re` is not free on the hook's hot path


class ParseTimeout(Exception):
    """The parser ran past its deadline."""


def _plain_run():
    global _plain
    if _plain is None:
        import re
        _plain = re.compile(r"[^ \t\n;&|()<>\\'\"`$]+")
    return _plain

# ---------------------------------------------------------------------------
# nodes shared with bash_tree (plain classes: dataclasses cost ~15 ms to import)


class Word:
    """A shell word: ``raw`` is the source text (quotes included), ``subs`` the
    command/process substitutions inside it, as (kind, node) pairs with kind in
    "cmdsubst", "backtick", "procsubst-in", "procsubst-out"."""
    __slots__ = ("raw", "subs")

    def __init__(self, raw: str, subs: list | None = None) -> None:
        self.raw = raw
        self.subs = subs or []

    def __repr__(self) -> str:
        return f"Word({self.raw!r}, subs={len(self.subs)})"


class Redir:
    """A redirection. ``op`` as written (">", ">>", "<", "<<", "<<-", "<<<",
    ">&", "<&", "&>", "&>>", ">|", "<>"); ``fd`` the explicit fd or None;
    ``target`` a Word (None when ``dup`` names an fd); ``heredoc`` the body for
    ``<<``/``<<-`` (without the delimiter line); ``quoted`` whether the heredoc
    delimiter was quoted (no expansion in the body)."""
    __slots__ = ("op", "fd", "target", "dup", "heredoc", "quoted", "delim")

    def __init__(self, op: str, fd: int | None, target: Word | None, dup: int | None = None) -> None:
        self.op = op
        self.fd = fd
        self.target = target
        self.dup = dup
        self.heredoc: str | None = None
        self.quoted = False
        self.delim = ""


class Cmd:
    """A simple command: prefix assignments, words, redirections."""
    __slots__ = ("assigns", "words", "redirs", "text")

    def __init__(self, assigns: list, words: list, redirs: list, text: str) -> None:
        self.assigns = assigns
        self.words = words
        self.redirs = redirs
        self.text = text


class Seq:
    """A list: ``items`` is [(node, terminator)] with terminator one of
    ";", "&&", "||", "&", "" (end)."""
    __slots__ = ("items", "text")

    def __init__(self, items: list, text: str) -> None:
        self.items = items
        self.text = text


class Pipe:
    __slots__ = ("cmds", "text")

    def __init__(self, cmds: list, text: str) -> None:
        self.cmds = cmds
        self.text = text


class Group:
    """``{ ...; }`` (kind "brace") or ``( ... )`` (kind "subshell")."""
    __slots__ = ("kind", "body", "redirs", "text")

    def __init__(self, kind: str, body, redirs: list, text: str) -> None:
        self.kind = kind
        self.body = body
        self.redirs = redirs
        self.text = text


class If:
    """``if``: ``parts`` are the condition and branch bodies in order."""
    __slots__ = ("parts", "redirs", "text")

    def __init__(self, parts: list, redirs: list, text: str) -> None:
        self.parts = parts
        self.redirs = redirs
        self.text = text


class Loop:
    """``while``/``until`` (cond, body) and ``for``/``select`` (var, words, body;
    ``words`` is None for ``for x; do`` and arithmetic ``for ((;;))``)."""
    __slots__ = ("kind", "cond", "words", "body", "redirs", "text", "var")

    def __init__(self, kind: str, cond, words: list, body, redirs: list, text: str,
                 var: str | None = None) -> None:
        self.var = var
        self.kind = kind
        self.cond = cond
        self.words = words
        self.body = body
        self.redirs = redirs
        self.text = text


class Case:
    __slots__ = ("word", "bodies", "redirs", "text")

    def __init__(self, word: Word | None, bodies: list, redirs: list, text: str) -> None:
        self.word = word
        self.bodies = bodies
        self.redirs = redirs
        self.text = text


class Func:
    __slots__ = ("name", "body", "text")

    def __init__(self, name: str, body, text: str) -> None:
        self.name = name
        self.body = body
        self.text = text


class Test:
    """``[[ ... ]]`` or ``(( ... ))``: not a command, but the substitutions
    in its words still run."""
    __slots__ = ("words", "text")

    def __init__(self, words: list, text: str) -> None:
        self.words = words
        self.text = text


# ---------------------------------------------------------------------------

_META = set(" \t\n;&|()<>")
_RESERVED_END = {"then", "elif", "else", "fi", "do", "done", "esac", "}", "in"}


class Parser:
    """``Parser(text).parse()`` -> Seq. ``unsure`` holds a reason when the
    text could not be read with confidence."""

    def __init__(self, src: str, nest: int = 0, deadline: float | None = None) -> None:
        self.s = src
        self.i = 0
        self.n = len(src)
        self.nest = nest
        self.unsure: str | None = None
        self.pending: list[Redir] = []   # heredocs whose body starts at the next newline
        self.deadline = deadline
        self.ticks = 0
        self.plain = _plain_run().match if self.n > 200 else None

    def _tick(self) -> None:
        self.ticks += 1
        if self.deadline is not None and (self.ticks & 15) == 0 and time.monotonic() > self.deadline:
            raise ParseTimeout()

    # -- helpers -----------------------------------------------------------
    def _mark(self, why: str) -> None:
        if self.unsure is None:
            self.unsure = why

    def _skip_blanks(self) -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and self.i + 1 < n and s[self.i + 1] == "\n":
                self.i += 2
            else:
                break

    def _skip_comment(self) -> None:
        if self.i < self.n and self.s[self.i] == "#":
            j = self.s.find("\n", self.i)
            self.i = self.n if j < 0 else j

    def _newline(self) -> None:
        """Consume a newline and any heredoc bodies that start after it."""
        self.i += 1
        if self.pending:
            pend, self.pending = self.pending, []
            for r in pend:
                self._read_heredoc(r)

    def _read_heredoc(self, r: Redir) -> None:
        s, n = self.s, self.n
        body: list[str] = []
        while self.i < n:
            j = s.find("\n", self.i)
            line = s[self.i:] if j < 0 else s[self.i:j]
            self.i = n if j < 0 else j + 1
            cmp = line.lstrip("\t") if r.op == "<<-" else line
            if cmp == r.delim:
                r.heredoc = "".join(body)
                return
            body.append(cmp + "\n")
        # like bash: a here-document not terminated runs to the end of the text
        # (bash only warns), so the body is what is left
        r.heredoc = "".join(body)

    def _peek_word(self) -> str:
        """The next plain word (letters etc. up to a blank/metachar), unconsumed."""
        s, j, n = self.s, self.i, self.n
        while j < n and s[j] not in _META and s[j] not in "'\"`$\\":
            j += 1
        if j < n and s[j] not in _META:
            return ""   # quoted/expanded: never a reserved word
        return s[self.i:j]

    def _at_reserved(self, words: set) -> str | None:
        w = self._peek_word()
        if w in words:
            return w
        if w.startswith("}") and "}" in words and w == "}":
            return w
        return None

    # -- grammar -------------------------------------------------------------
    def parse(self) -> Seq:
        seq = self.parse_list(stop=set(), close="")
        if self.i < self.n:
            self._mark(f"unexpected {self.s[self.i]!r} at offset {self.i}")
        for r in self.pending:   # at the end of the text: an empty body, as in bash
            r.heredoc = ""
        self.pending = []
        return seq

    def parse_list(self, stop: set, close: str) -> Seq:
        """Parse until a reserved word in ``stop``, the closing char ``close``
        (")" or "`"), ";;" (case), or EOF."""
        start = self.i
        items: list = []
        s, n = self.s, self.n
        while True:
            # separators and blank lines between items
            while True:
                self._skip_blanks()
                self._skip_comment()
                if self.i < n and s[self.i] == "\n":
                    self._newline()
                    continue
                if self.i < n and s[self.i] == ";" and not s.startswith(";;", self.i) and not items:
                    self.i += 1   # stray leading ';' is a syntax error in bash; tolerate
                    self._mark("empty command before ';'")
                    continue
                break
            if self.i >= n:
                break
            c = s[self.i]
            if close and c == close:
                break
            if s.startswith(";;", self.i) or c == ")":
                break
            if stop and self._at_reserved(stop):
                break
            self._tick()
            node = self.parse_andor_item()
            if node is None:
                break
            self._skip_blanks()
            term = ""
            if self.i < n:
                if s.startswith("&&", self.i):
                    term = "&&"
                elif s.startswith("||", self.i):
                    term = "||"
                elif s.startswith(";;", self.i):
                    term = ""
                elif s[self.i] == ";":
                    term = ";"
                elif s[self.i] == "&" and not s.startswith("&>", self.i):
                    term = "&"
            self.i += len(term)
            if term in ("&&", "||"):
                # a newline may follow && / ||
                while True:
                    self._skip_blanks()
                    self._skip_comment()
                    if self.i < n and s[self.i] == "\n":
                        self._newline()
                        continue
                    break
            items.append((node, term))
            if not term and self.i < n and s[self.i] not in "\n":
                c = s[self.i]
                if (close and c == close) or c == ")" or s.startswith(";;", self.i):
                    break
                if stop and self._at_reserved(stop):
                    break
                if c in "|&;<>(":
                    self._mark(f"unexpected {c!r} at offset {self.i}")
                    self.i += 1
        return Seq(items, s[start:self.i])

    def parse_andor_item(self):
        return self.parse_pipeline()

    def parse_pipeline(self):
        s, n = self.s, self.n
        start = self.i
        cmds = []
        self._skip_blanks()
        w = self._peek_word()
        if w == "time":
            self.i += 4
            self._skip_blanks()
            if self._peek_word() == "-p":
                self.i += 2
        self._skip_blanks()
        if self._peek_word() == "!":
            self.i += 1
        while True:
            self._skip_blanks()
            node = self.parse_command()
            if node is None:
                break
            cmds.append(node)
            self._skip_blanks()
            if self.i < n and s[self.i] == "|" and not s.startswith("||", self.i):
                self.i += 2 if s.startswith("|&", self.i) else 1
                while True:
                    self._skip_blanks()
                    self._skip_comment()
                    if self.i < n and s[self.i] == "\n":
                        self._newline()
                        continue
                    break
                continue
            break
        if not cmds:
            return None
        if len(cmds) == 1:
            return cmds[0]
        return Pipe(cmds, s[start:self.i])

    def parse_command(self):
        s, n = self.s, self.n
        if self.i >= n:
            return None
        start = self.i
        c = s[self.i]
        if c == "{" and (self.i + 1 >= n or s[self.i + 1] in " \t\n"):
            self.i += 1
            body = self._nested_list({"}"}, "")
            if self._at_reserved({"}"}):
                self.i += 1
            else:
                self._mark("'{' without '}'")
            return Group("brace", body, self._trailing_redirs(), s[start:self.i])
        if c == "(":
            if s.startswith("((", self.i) and not self._looks_like_words(self.i + 2):
                return self._arith(start)
            self.i += 1
            body = self._nested_list(set(), ")")
            if self.i < n and s[self.i] == ")":
                self.i += 1
            else:
                self._mark("'(' without ')'")
            return Group("subshell", body, self._trailing_redirs(), s[start:self.i])
        if s.startswith("[[", self.i) and (self.i + 2 >= n or s[self.i + 2] in " \t\n"):
            return self._dbl_bracket(start)
        w = self._peek_word()
        if w == "if":
            return self._if(start)
        if w in ("while", "until"):
            return self._while(w, start)
        if w in ("for", "select"):
            return self._for(w, start)
        if w == "case":
            return self._case(start)
        if w == "function":
            self.i += len(w)
            self._skip_blanks()
            name = self.read_word()
            self._skip_blanks()
            if s.startswith("()", self.i):
                self.i += 2
            return self._func_body(name.raw if name else "", start)
        if w == "coproc":
            self.i += len(w)
            self._skip_blanks()
            nxt = self._peek_word()
            # `coproc NAME { ...; }` names the coprocess; `coproc cmd args` does not
            if nxt and nxt not in ("{", "(") and not nxt.startswith("(") :
                save = self.i
                self.i += len(nxt)
                self._skip_blanks()
                if not (self.i < n and s[self.i] in "{("):
                    self.i = save
            return self.parse_command()
        if w in _RESERVED_END:
            return None
        return self._simple(start)

    def _nested_list(self, stop: set, close: str) -> Seq:
        if self.nest >= MAX_NEST:
            self._mark(f"nesting deeper than {MAX_NEST} levels")
            self.i = self.n
            return Seq([], "")
        self.nest += 1
        try:
            return self.parse_list(stop, close)
        finally:
            self.nest -= 1

    def _expect(self, word: str) -> bool:
        self._skip_blanks()
        if self._peek_word() == word:
            self.i += len(word)
            return True
        self._mark(f"expected {word!r} at offset {self.i}")
        return False

    def _if(self, start: int) -> If:
        parts = []
        self.i += 2
        while True:
            parts.append(self._nested_list({"then"}, ""))
            if not self._expect("then"):
                break
            parts.append(self._nested_list({"elif", "else", "fi"}, ""))
            self._skip_blanks()
            w = self._peek_word()
            if w == "elif":
                self.i += 4
                continue
            if w == "else":
                self.i += 4
                parts.append(self._nested_list({"fi"}, ""))
            self._expect("fi")
            break
        return If(parts, self._trailing_redirs(), self.s[start:self.i])

    def _while(self, kind: str, start: int) -> Loop:
        self.i += len(kind)
        cond = self._nested_list({"do"}, "")
        body = Seq([], "")
        if self._expect("do"):
            body = self._nested_list({"done"}, "")
            self._expect("done")
        return Loop(kind, cond, [], body, self._trailing_redirs(), self.s[start:self.i])

    def _for(self, kind: str, start: int) -> Loop:
        s, n = self.s, self.n
        self.i += len(kind)
        self._skip_blanks()
        words: list[Word] = []
        var = None
        if s.startswith("((", self.i):
            t = self._arith(self.i)
            words.extend(t.words)
        else:
            vw = self.read_word()   # the loop variable
            var = vw.raw if vw is not None and vw.raw.isidentifier() else None
            self._skip_blanks()
            # optional newlines before `in`
            while self.i < n and s[self.i] == "\n":
                self._newline()
                self._skip_blanks()
            if self._peek_word() != "in":
                var = None   # `for x; do` iterates over "$@"
            if self._peek_word() == "in":
                self.i += 2
                while True:
                    self._skip_blanks()
                    if self.i >= n or s[self.i] in ";\n&|)":
                        break
                    if s[self.i] == "#":
                        self._skip_comment()
                        break
                    w = self.read_word()
                    if w is None:
                        break
                    words.append(w)
        self._skip_blanks()
        while self.i < n and s[self.i] in ";\n":
            if s[self.i] == "\n":
                self._newline()
            else:
                self.i += 1
            self._skip_blanks()
            self._skip_comment()
        body = Seq([], "")
        if self._peek_word() == "{":
            self.i += 1
            body = self._nested_list({"}"}, "")
            self._expect("}")
        elif self._expect("do"):
            body = self._nested_list({"done"}, "")
            self._expect("done")
        return Loop(kind, None, words, body, self._trailing_redirs(), s[start:self.i], var)

    def _case(self, start: int) -> Case:
        s, n = self.s, self.n
        self.i += 4
        self._skip_blanks()
        word = self.read_word()
        bodies = []
        self._skip_blanks()
        while self.i < n and s[self.i] == "\n":
            self._newline()
            self._skip_blanks()
        if not self._expect("in"):
            return Case(word, bodies, [], s[start:self.i])
        while True:
            while True:
                self._skip_blanks()
                self._skip_comment()
                if self.i < n and s[self.i] == "\n":
                    self._newline()
                    continue
                break
            if self.i >= n:
                self._mark("'case' without 'esac'")
                break
            if self._peek_word() == "esac":
                self.i += 4
                break
            # pattern list up to the unquoted ')'
            if s[self.i] == "(":
                self.i += 1
            while self.i < n and s[self.i] != ")":
                if s[self.i] in " \t|":
                    self.i += 1
                    continue
                if s[self.i] == "\n":
                    self._newline()
                    continue
                before = self.i
                self.read_word()
                if self.i == before:
                    self.i += 1
            if self.i >= n:
                self._mark("case pattern without ')'")
                break
            self.i += 1
            bodies.append(self._nested_list({"esac"}, ""))
            self._skip_blanks()
            for term in (";;&", ";&", ";;"):
                if s.startswith(term, self.i):
                    self.i += len(term)
                    break
        return Case(word, bodies, self._trailing_redirs(), s[start:self.i])

    def _func_body(self, name: str, start: int) -> Func:
        s, n = self.s, self.n
        while True:
            self._skip_blanks()
            if self.i < n and s[self.i] == "\n":
                self._newline()
                continue
            break
        body = self.parse_command()
        if body is None:
            self._mark(f"function {name!r} without a body")
            body = Seq([], "")
        return Func(name, body, s[start:self.i])

    def _looks_like_words(self, i: int) -> bool:
        """Is the text after ``((`` commands rather than arithmetic? Bash reads
        ``((cmd args))`` as nested subshells when it is not an expression. Nested
        substitutions and subscripts (``x[$(cmd)]``) and parenthesised terms
        (``1 << (n - 1)``) are arithmetic; two words side by side are commands."""
        s = self.s
        # the text up to the `))` that closes this `((`, nested parens and brackets blanked
        # plain parentheses keep their text (`( cmd args )` inside is still commands); substitutions
        # and subscripts (`$(...)`, `[...]`) are blanked
        depth, blank, j, out = 0, 0, i, []
        stack: list = []
        while j < len(s):
            c = s[j]
            if c == "(" or c == "[":
                opening_blank = c == "[" or (c == "(" and j > 0 and s[j - 1] == "$")
                stack.append(opening_blank)
                blank += opening_blank
                depth += 1
                out.append(" ")
            elif c in ")]":
                if depth == 0:
                    break
                depth -= 1
                blank -= stack.pop() if stack else 0
                out.append(" ")
            elif blank:
                out.append("0" if c.isalnum() else " ")
            else:
                out.append(c)
            j += 1
        text = "".join(out)
        if "'" in text or '"' in text or "\\" in text:
            return True   # quotes are no arithmetic: read it as commands (the safe reading)
        toks = text.split()
        for a, b in zip(toks, toks[1:]):
            if (a[-1:].isalnum() or a[-1:] == "_") and (
                    b[:1].isalpha() or b[:1] in "_./" or (b[:1] == "-" and len(b) > 1 and b[1].isalpha())):
                return True
        return False

    def _arith(self, start: int) -> Test:
        """``(( ... ))``: skip to the matching ``))``, keep substitutions."""
        s, n = self.s, self.n
        self.i += 2
        depth = 0
        words = []
        begin = self.i
        while self.i < n:
            c = s[self.i]
            if c == "$" or c == "`" or c in "'\"":
                w = self.read_word()
                if w is not None:
                    words.append(w)
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0 and s.startswith("))", self.i):
                    self.i += 2
                    return Test(words, s[start:self.i])
                depth -= 1
            elif c == "\n":
                self._newline()
                continue
            self.i += 1
        self._mark("'((' without '))'")
        return Test(words, s[begin:self.i])

    def _dbl_bracket(self, start: int) -> Test:
        s, n = self.s, self.n
        self.i += 2
        words = []
        while True:
            self._skip_blanks()
            if self.i >= n:
                self._mark("'[[' without ']]'")
                break
            if s.startswith("]]", self.i):
                self.i += 2
                break
            c = s[self.i]
            if c == "\n":
                self._newline()
                continue
            if c in "()<>&|!;":
                self.i += 1
                continue
            before = self.i
            w = self.read_word()
            if w is not None:
                words.append(w)
            if self.i == before:
                self.i += 1
        return Test(words, s[start:self.i])

    def _trailing_redirs(self) -> list:
        out = []
        while True:
            self._skip_blanks()
            r = self._try_redir()
            if r is None:
                return out
            out.append(r)

    def _try_redir(self) -> Redir | None:
        s, n, i = self.s, self.n, self.i
        j = i
        while j < n and s[j].isdigit():
            j += 1
        fd = int(s[i:j]) if j > i and j - i < 6 else None
        if j < n and s[j] == "{":   # {varname}>file
            k = s.find("}", j)
            if k > j and s[j + 1:k].isidentifier() and k + 1 < n and s[k + 1] in "<>":
                j = k + 1
        op = None
        for cand in ("&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<<", "<>", ">", "<"):
            if s.startswith(cand, j):
                op = cand
                break
        if op is None or (fd is None and j > i):
            return None
        if s.startswith("<(", j) or s.startswith(">(", j):
            return None   # process substitution is a word
        self.i = j + len(op)
        self._skip_blanks()
        if op in (">&", "<&"):
            k = self.i
            while k < n and (s[k].isdigit() or s[k] == "-"):
                k += 1
            if k > self.i and (k >= n or s[k] in _META):
                tok = s[self.i:k]
                self.i = k
                return Redir(op, fd, None, int(tok) if tok.isdigit() else -1)
        target = self.read_word()
        if target is None:
            self._mark(f"redirection {op!r} without a target")
            return Redir(op, fd, Word(""))
        r = Redir(op, fd, target)
        if op in ("<<", "<<-"):
            raw = target.raw
            r.quoted = any(ch in raw for ch in "'\"\\")
            r.delim = raw.replace("'", "").replace('"', "").replace("\\", "")
            self.pending.append(r)
        return r

    def _simple(self, start: int):
        s, n = self.s, self.n
        assigns: list[Word] = []
        words: list[Word] = []
        redirs: list[Redir] = []
        while True:
            self._tick()
            self._skip_blanks()
            if self.i >= n:
                break
            c = s[self.i]
            if c == "#":
                # a word that starts with # begins a comment, to the end of the line
                self._skip_comment()
                break
            r = self._try_redir()
            if r is not None:
                redirs.append(r)
                continue
            if c in "\n;&|)" or (c == "(" and not words):
                break
            if c == "(" and words and words[-1].raw.endswith("=") and self.i > 0 and s[self.i - 1] == "=":
                # declare/local/export NAME=(a b): an array value belongs to the word
                k = self._match_paren(self.i)
                last = words[-1]
                words[-1] = Word(last.raw + s[self.i:k], last.subs)
                self.i = k
                continue
            if c == "(":
                # name() { ... } : a function definition
                if len(words) == 1 and not assigns and s.startswith("()", self.i):
                    self.i += 2
                    return self._func_body(words[0].raw, start)
                if (len(words) == 1 and not assigns
                        and s[self.i:self.i + 8].replace(" ", "").startswith("()")):
                    k = s.find(")", self.i)
                    self.i = k + 1
                    return self._func_body(words[0].raw, start)
                self._mark(f"unexpected '(' at offset {self.i}")
                self.i += 1
                continue
            if c == "<" or c == ">":
                # process substitution word (<( or >( ) handled by read_word
                pass
            w = self.read_word()
            if w is None:
                break
            if not words and _is_assignment(w.raw):
                assigns.append(w)
                # arrays: A=(x y)
                if w.raw.endswith("=") and self.i < n and s[self.i] == "(":
                    k = self._match_paren(self.i)
                    assigns[-1] = Word(w.raw + s[self.i:k], w.subs)
                    self.i = k
                continue
            words.append(w)
            if len(words) == 1 and w.raw in ("}",):
                break
        if not words and not assigns and not redirs:
            return None
        return Cmd(assigns, words, redirs, s[start:self.i].rstrip())

    def _match_paren(self, i: int) -> int:
        depth = 0
        s, n = self.s, self.n
        while i < n:
            c = s[i]
            if c in "'\"":
                k = s.find(c, i + 1)
                i = n if k < 0 else k + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self._mark("unbalanced '('")
        return n

    # -- words ---------------------------------------------------------------
    def read_word(self) -> Word | None:
        """Read one word at the cursor (quotes, escapes, expansions kept in raw)."""
        s, n = self.s, self.n
        start = self.i
        subs: list = []
        plain = self.plain
        while self.i < n:
            if plain is not None:
                m = plain(s, self.i)
                if m is not None:
                    self.i = m.end()
                    if self.i >= n:
                        break
            c = s[self.i]
            if c in " \t\n;&|()":
                if c == "(" and self.i > start and s[self.i - 1] in "<>" :
                    pass
                else:
                    break
            if c in "<>":
                if self.i + 1 < n and s[self.i + 1] == "(":
                    kind = "procsubst-in" if c == "<" else "procsubst-out"
                    self.i += 2
                    subs.append((kind, self._nested_list(set(), ")")))
                    if self.i < n and s[self.i] == ")":
                        self.i += 1
                    else:
                        self._mark("process substitution without ')'")
                    continue
                break
            if c == "\\":
                if self.i + 1 >= n:   # a lone backslash at the very end: nothing
                    if self.i == start:
                        self.i = n
                        return None
                    self.i = n
                    break
                self.i += 2
                continue
            if c == "'":
                k = s.find("'", self.i + 1)
                if k < 0:
                    self._mark("unbalanced single quote")
                    self.i = n
                    break
                self.i = k + 1
                continue
            if c == '"':
                self._read_dquoted(subs)
                continue
            if c == "`":
                self._read_backtick(subs)
                continue
            if c == "$":
                self._read_dollar(subs)
                continue
            self.i += 1
        if self.i == start:
            return None
        return Word(s[start:self.i], subs)

    def scan_expansions(self) -> list:
        """Substitutions in a text read like the inside of double quotes
        (an unquoted here-document body)."""
        subs: list = []
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "`":
                self._read_backtick(subs)
            elif c == "$":
                self._read_dollar(subs)
            else:
                self.i += 1
        return subs

    def _read_dquoted(self, subs: list) -> None:
        s, n = self.s, self.n
        self.i += 1
        while self.i < n:
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == '"':
                self.i += 1
                return
            if c == "`":
                self._read_backtick(subs)
                continue
            if c == "$":
                self._read_dollar(subs)
                continue
            self.i += 1
        self._mark("unbalanced double quote")

    def _read_backtick(self, subs: list) -> None:
        s, n = self.s, self.n
        j = self.i + 1
        inner = []
        while j < n:
            c = s[j]
            if c == "\\" and j + 1 < n:
                # inside backquotes, \$ \` \\ lose the backslash
                if s[j + 1] in "$`\\":
                    inner.append(s[j + 1])
                else:
                    inner.append(s[j:j + 2])
                j += 2
                continue
            if c == "`":
                break
            inner.append(c)
            j += 1
        if j >= n:
            self._mark("unbalanced backquote")
            self.i = n
            return
        self.i = j + 1
        subs.append(("backtick", self._sub_parse("".join(inner))))

    def _sub_parse(self, text: str) -> Seq:
        if self.nest >= MAX_NEST:
            self._mark(f"nesting deeper than {MAX_NEST} levels")
            return Seq([], "")
        p = Parser(text, self.nest + 1, self.deadline)
        seq = p.parse()
        if p.unsure:
            self._mark(p.unsure)
        return seq

    def _read_dollar(self, subs: list) -> None:
        s, n = self.s, self.n
        nxt = s[self.i + 1] if self.i + 1 < n else ""
        if nxt == "(":
            if s.startswith("$((", self.i) and not self._looks_like_words(self.i + 3):
                # arithmetic; may hold substitutions
                self.i += 1
                t = self._arith(self.i)
                for w in t.words:
                    subs.extend(w.subs)
                return
            self.i += 2
            subs.append(("cmdsubst", self._nested_list(set(), ")")))
            if self.i < n and s[self.i] == ")":
                self.i += 1
            else:
                self._mark("'$(' without ')'")
                self.i = n
            return
        if nxt == "{":
            depth = 0
            j = self.i + 1
            while j < n:
                c = s[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif c == "`":
                    save = self.i
                    self.i = j
                    self._read_backtick(subs)
                    j = self.i
                    self.i = save
                    continue
                elif c == '"':
                    # a double-quoted word inside ${...}: braces in it are literal,
                    # substitutions in it still run
                    save = self.i
                    self.i = j
                    self._read_dquoted(subs)
                    j = self.i
                    self.i = save
                    continue
                elif c == "'" :
                    k = s.find("'", j + 1)
                    j = n if k < 0 else k
                elif c == "$" and j + 1 < n and s[j + 1] == "(":
                    save = self.i
                    self.i = j
                    self._read_dollar(subs)
                    j = self.i
                    self.i = save
                    continue
                j += 1
            if j >= n:
                self._mark("'${' without '}'")
                self.i = n
                return
            self.i = j + 1
            return
        if nxt == "'":
            # $'...' ANSI-C quoting
            j = self.i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                self._mark("unbalanced $'...' quote")
                self.i = n
                return
            self.i = j + 1
            return
        self.i += 1


def _is_assignment(raw: str) -> bool:
    k = raw.find("=")
    if k <= 0:
        return False
    name = raw[:k]
    if name.endswith("+"):
        name = name[:-1]
    if "[" in name:
        name = name[:name.index("[")]
    return name.isidentifier()


def parse(text: str, deadline: float | None = None) -> tuple[Seq, str | None]:
    """Parse ``text``; return the tree and a reason when unsure (else None).

    Raises ParseTimeout when ``deadline`` (time.monotonic) passes."""
    p = Parser(text, 0, deadline)
    try:
        seq = p.parse()
    except RecursionError:
        return Seq([], text), "nesting too deep to read"
    return seq, p.unsure
