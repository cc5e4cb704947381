"""The config's TOML, read without tomllib when it keeps to a plain subset.

The hook reads `.claude/swarmgate.toml` on every call. `import tomllib` costs 10-16 ms here (it
compiles regular expressions and imports half the standard library), which is why the validated
config used to be cached as JSON in `.swarmgate/cache/config.json`: a file any agent running as
the same user could rewrite, key included, to switch every guard off. Nothing a hook reads may
decide what it enforces unless it is derived from the config itself, so the config is parsed on
every call, by this reader when the text keeps to the subset below and by tomllib otherwise.

The subset: comments; `[table]` and `[[array.of.tables]]` headers of bare keys joined by dots;
`key = value` with a bare key; values that are basic or literal one-line strings, decimal
integers, decimal floats (`12.5`), booleans, and arrays of those (on one line or several, with
comments and a trailing comma). What ``loads`` returns for such a text is exactly what
``tomllib.loads`` returns (a differential test holds it to that). Anything else - an inline
table, a date, a multi-line string, a quoted or dotted key, a table header after a table below it,
a redefined key, anything malformed - raises Unsupported, and the caller parses with tomllib,
which also gives the real error for invalid TOML. The reader never guesses.
"""
from __future__ import annotations

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DIGITS = frozenset("0123456789")
_ESCAPES = {'"': '"', "\\": "\\", "b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r"}
_WS = " \t"


class Unsupported(Exception):
    """The text is outside the subset (or not TOML): parse it with tomllib."""


def _bare_key(s: str) -> str:
    if not (s and s.isascii() and s.replace("-", "").replace("_", "").isalnum()) and not (
            s and all(c in _BARE for c in s)):
        raise Unsupported(s)
    return s


def _control(c: str) -> bool:
    o = ord(c)
    return (o < 0x20 and c != "\t") or o == 0x7F


class _Reader:
    __slots__ = ("text", "pos", "n")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.n = len(text)

    def skip_ws(self) -> None:
        t, i, n = self.text, self.pos, self.n
        while i < n and t[i] in _WS:
            i += 1
        self.pos = i

    def skip_comment(self) -> None:
        t, i = self.text, self.pos
        if i < self.n and t[i] == "#":
            j = t.find("\n", i)
            j = self.n if j < 0 else j
            body = t[i + 1:j]
            if body.endswith("\r") and j < self.n:
                body = body[:-1]  # the CR of a CRLF line end
            if not body.isprintable():  # fast path for plain text; exact check otherwise
                for c in body:
                    if _control(c):
                        raise Unsupported("control character in a comment")
            self.pos = j if not t.startswith("\r\n", j - 1) or j >= self.n else j - 1

    def end_of_line(self) -> None:
        """Whitespace, an optional comment, then a newline or the end."""
        self.skip_ws()
        self.skip_comment()
        t, i = self.text, self.pos
        if i >= self.n:
            return
        if t[i] == "\n":
            self.pos = i + 1
            return
        if t.startswith("\r\n", i):
            self.pos = i + 2
            return
        raise Unsupported("text after a value")

    def skip_blank_and_comments(self) -> None:
        """Inside an array: whitespace, newlines and comments."""
        t = self.text
        while self.pos < self.n:
            self.skip_ws()
            if self.pos >= self.n:
                return
            c = t[self.pos]
            if c == "#":
                self.skip_comment()
            elif c == "\n":
                self.pos += 1
            elif t.startswith("\r\n", self.pos):
                self.pos += 2
            else:
                return

    def value(self):
        t, i = self.text, self.pos
        if i >= self.n:
            raise Unsupported("missing value")
        c = t[i]
        if c == '"':
            if t.startswith('"""', i):
                raise Unsupported("multi-line string")
            return self.basic_string()
        if c == "'":
            if t.startswith("'''", i):
                raise Unsupported("multi-line string")
            j = t.find("'", i + 1)
            if j < 0:
                raise Unsupported("unterminated string")
            s = t[i + 1:j]
            if "\n" in s or any(_control(ch) for ch in s):
                raise Unsupported("control character in a string")
            self.pos = j + 1
            return s
        if c == "[":
            return self.array()
        if t.startswith("true", i):
            self.pos = i + 4
            self._after_scalar()
            return True
        if t.startswith("false", i):
            self.pos = i + 5
            self._after_scalar()
            return False
        return self.number()

    def _after_scalar(self) -> None:
        if self.pos < self.n and self.text[self.pos] not in " \t\r\n,]#":
            raise Unsupported("unexpected text after a value")

    def basic_string(self) -> str:
        t, i, n = self.text, self.pos + 1, self.n
        j = t.find('"', i)
        if j >= 0:  # fast path: no escape, plain printable text
            seg = t[i:j]
            if "\\" not in seg and seg.isprintable():
                self.pos = j + 1
                return seg
        out = []
        start = i
        while True:
            if i >= n:
                raise Unsupported("unterminated string")
            c = t[i]
            if c == '"':
                out.append(t[start:i])
                self.pos = i + 1
                return "".join(out)
            if c == "\\":
                out.append(t[start:i])
                if i + 1 >= n:
                    raise Unsupported("unterminated escape")
                e = t[i + 1]
                if e in _ESCAPES:
                    out.append(_ESCAPES[e])
                    i += 2
                elif e in "uU":
                    width = 4 if e == "u" else 8
                    hexs = t[i + 2:i + 2 + width]
                    if len(hexs) != width or not all(h in "0123456789abcdefABCDEF" for h in hexs):
                        raise Unsupported("bad unicode escape")
                    code = int(hexs, 16)
                    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                        raise Unsupported("escape of a non-scalar value")
                    out.append(chr(code))
                    i += 2 + width
                else:
                    raise Unsupported("unknown escape")
                start = i
                continue
            if c == "\n" or _control(c):
                raise Unsupported("control character in a string")
            i += 1

    def number(self):
        t, i, n = self.text, self.pos, self.n
        j = i
        while j < n and t[j] not in " \t\r\n,]#":
            j += 1
        word = t[i:j]
        self.pos = j
        body = word[1:] if word[:1] in "+-" else word
        if not body:
            raise Unsupported("missing value")
        if "." in body:
            whole, _, frac = body.partition(".")
            if (not whole or not frac or not all(c in _DIGITS for c in whole + frac)
                    or (len(whole) > 1 and whole[0] == "0")):
                raise Unsupported(word)
            return float(word)
        if not all(c in _DIGITS for c in body) or (len(body) > 1 and body[0] == "0"):
            raise Unsupported(word)  # hex, octal, underscores, exponents, dates, inf, nan, words
        return int(word)

    def array(self) -> list:
        self.pos += 1
        out = []
        while True:
            self.skip_blank_and_comments()
            if self.pos >= self.n:
                raise Unsupported("unterminated array")
            if self.text[self.pos] == "]":
                self.pos += 1
                return out
            out.append(self.value())
            self.skip_blank_and_comments()
            if self.pos >= self.n:
                raise Unsupported("unterminated array")
            c = self.text[self.pos]
            if c == ",":
                self.pos += 1
            elif c == "]":
                self.pos += 1
                return out
            else:
                raise Unsupported("expected , or ] in an array")


def loads(text: str) -> dict:
    """What ``tomllib.loads(text)`` returns, for a text in the subset; Unsupported otherwise."""
    root: dict = {}
    defined: set = set()         # tables defined by a header (a second header for one is an error)
    headers: list = []           # header paths in order: a header under an earlier one's sibling is fine
    rest = _plain_lines(text, root, defined, headers)
    if rest is None:
        return root
    return _read(text, rest[0], root, rest[1], defined, headers)


def _plain_lines(text: str, root: dict, defined: set, headers: list) -> tuple | None:
    """Read the lines a config is made of with a few string methods each: blank lines, comments,
    `[table]` headers and `key = value` with a value that is a basic string without escapes, an
    unsigned decimal integer, true, false or a one-line array of such strings, then at most a
    printable comment. None when that was the whole text; else (where the first other line starts,
    the current table), for the character reader to go on from. It only answers what that reader
    would: it refuses nothing itself (a header goes to the same ``_open_table``), the reader gives
    every error."""
    if "\r" in text:   # CR and CRLF line ends: the reader's
        return 0, root
    current = root
    pos = 0
    for line in text.split("\n"):
        start = pos
        pos += len(line) + 1
        s = line.lstrip(" \t")
        if not s:
            continue
        c = s[0]
        if c == "#":
            if s.isprintable():
                continue
            return start, current   # a tab or a control character: the reader tells them apart
        if c == "[":
            close = s.find("]")
            inner = s[1:close]
            path = tuple(inner.split("."))
            tail = s[close + 1:].lstrip(" \t")
            if (close < 0 or not inner.isascii() or "" in path
                    or not inner.replace("-", "").replace("_", "").replace(".", "").isalnum()
                    or (tail and (tail[0] != "#" or not tail.isprintable()))):
                return start, current   # [[array.of.tables]], a quoted key, text after it ...
            current = _open_table(root, path, False, defined, headers)
            continue
        key, eq, v = s.partition("=")
        key = key.rstrip(" \t")
        if not (eq and key.isascii() and (key.isidentifier() or key.replace("-", "").replace("_", "").isalnum())
                ) or key in current:
            return start, current
        v = v.lstrip(" \t")
        c = v[:1]
        if c == '"':
            j = v.find('"', 1)
            value = v[1:j]
            tail = v[j + 1:].lstrip(" \t")
            if j < 0 or "\\" in value or not value.isprintable():
                return start, current
        elif c == "[":
            close = v.find("]")
            parts = v[1:close].split('"')   # separators and the strings between them
            tail = v[close + 1:].lstrip(" \t")
            value = parts[1::2]
            if close < 0 or not len(parts) & 1 or parts[0].strip(" \t") or parts[-1].strip(" \t") not in ("", ","):
                return start, current
            for k in range(2, len(parts) - 1, 2):
                if parts[k].strip(" \t") != ",":
                    return start, current
            for item in value:
                if "\\" in item or not item.isprintable():
                    return start, current
        else:
            word, hash_, comment = v.partition("#")
            word = word.rstrip(" \t")
            tail = hash_ + comment
            if word == "true":
                value = True
            elif word == "false":
                value = False
            elif word.isdigit() and word.isascii() and (word[0] != "0" or len(word) == 1):
                value = int(word)
            else:
                return start, current
        if tail and (tail[0] != "#" or not tail.isprintable()):
            return start, current
        current[key] = value
    return None


def _read(text: str, pos: int, root: dict, current: dict, defined: set, headers: list) -> dict:
    """The character reader, from ``pos`` (the start of a line) to the end."""
    r = _Reader(text)
    r.pos = pos
    t = text
    n = len(t)
    while True:
        # fast path for the lines most configs are made of: blank lines and whole-line comments
        pos = r.pos
        eol = t.find("\n", pos)
        eol = n if eol < 0 else eol
        line = t[pos:eol]
        body = line.lstrip(" \t")
        if body == "\r" and eol >= n:
            raise Unsupported("a CR that ends no line")
        if not body or body == "\r" or body[0] == "#":
            body = body[1:] if body[:1] == "#" else body
            if body.endswith("\r") and eol < n:
                body = body[:-1]  # the CR of a CRLF line end
            if body and not body.isprintable() and any(_control(ch) for ch in body):
                raise Unsupported("control character in a comment or a blank line")
            if eol >= n:
                return root
            r.pos = eol + 1
            continue
        r.pos = pos + (len(line) - len(body))
        c = t[r.pos]
        if c == "\n":
            r.pos += 1
            continue
        if t.startswith("\r\n", r.pos):
            r.pos += 2
            continue
        if c == "[":
            aot = t.startswith("[[", r.pos)
            close = t.find("]]" if aot else "]", r.pos)
            line_end = t.find("\n", r.pos)
            if close < 0 or (0 <= line_end < close):
                raise Unsupported("header")
            path = tuple(_bare_key(k) for k in t[r.pos + (2 if aot else 1):close].split("."))
            r.pos = close + (2 if aot else 1)
            r.end_of_line()
            current = _open_table(root, path, aot, defined, headers)
            continue
        simple = None if "\r" in body else _simple_line(body)
        if simple is not None:   # the commonest lines, read with string methods (same result)
            key, value = simple
            if key in current:
                raise Unsupported("key defined twice")
            current[key] = value
            if eol >= n:
                return root
            r.pos = eol + 1
            continue
        j = r.pos
        while j < r.n and t[j] not in " \t=\n":
            j += 1
        key = _bare_key(t[r.pos:j])
        r.pos = j
        r.skip_ws()
        if r.pos >= r.n or t[r.pos] != "=":
            raise Unsupported("expected =")
        r.pos += 1
        r.skip_ws()
        value = r.value()
        if key in current:
            raise Unsupported("key defined twice")
        current[key] = value
        r.end_of_line()


def _word_end(v: str) -> int:
    end = len(v)
    for stop in " \t#,]":
        k = v.find(stop)
        if 0 <= k < end:
            end = k
    return end


def _simple_scalar(v: str) -> tuple | None:
    """(value, the text after it) for a basic string without escapes, an unsigned decimal integer,
    true or false at the start of ``v``; None for anything else."""
    c = v[:1]
    if c == '"':
        j = v.find('"', 1)
        s = v[1:j]
        if j < 0 or "\\" in s or not s.isprintable():
            return None
        return s, v[j + 1:]
    end = _word_end(v)
    word = v[:end]
    if c in _DIGITS:
        if not (word.isdigit() and word.isascii()) or (len(word) > 1 and word[0] == "0"):
            return None
        return int(word), v[end:]
    if word == "true":
        return True, v[end:]
    if word == "false":
        return False, v[end:]
    return None


def _simple_line(body: str) -> tuple | None:
    """(key, value) of a `key = value` line in the shapes most configs are made of: a bare key; a
    value from ``_simple_scalar`` or a one-line array of them; then at most a printable comment.
    None for anything else, which the character reader then reads (or refuses): this only ever
    answers what that reader would."""
    key, eq, rest = body.partition("=")
    key = key.rstrip(_WS)
    if not eq or not key or not key.isascii() or not key.replace("-", "").replace("_", "").isalnum():
        return None
    v = rest.lstrip(_WS)
    if v[:1] == "[":
        items: list = []
        v = v[1:].lstrip(_WS)
        while v[:1] != "]":
            got = _simple_scalar(v)
            if got is None:
                return None
            items.append(got[0])
            v = got[1].lstrip(_WS)
            if v[:1] == ",":
                v = v[1:].lstrip(_WS)
            elif v[:1] != "]":
                return None
        value, tail = items, v[1:]
    else:
        got = _simple_scalar(v)
        if got is None:
            return None
        value, tail = got
    tail = tail.lstrip(_WS)
    if tail and (tail[0] != "#" or not tail[1:].isprintable()):
        return None
    return key, value


def _open_table(root: dict, path: tuple, aot: bool, defined: set, headers: list) -> dict:
    """The table a header opens. Within the subset every table comes from a header (no inline
    tables, no dotted keys), so a dict met on the way is a table; the rest is Unsupported:
    a header after a header below it (`[a.b]` then `[a]`, valid TOML), anything under an array
    of tables, a table or array of tables over a value, a table defined twice."""
    for earlier in headers:
        if len(earlier) > len(path) and earlier[:len(path)] == path:
            raise Unsupported("table defined after a table below it")
    node = root
    for k in path[:-1]:
        nxt = node.get(k)
        if nxt is None:
            nxt = node[k] = {}
        elif not isinstance(nxt, dict):
            raise Unsupported("table under a value or an array of tables")
        node = nxt
    last = path[-1]
    if aot:
        lst = node.get(last)
        if lst is None:
            lst = node[last] = []
        elif not isinstance(lst, list) or path not in headers or path in defined:
            raise Unsupported("array of tables over a value")
        table: dict = {}
        lst.append(table)
        headers.append(path)
        return table
    if path in defined or last in node:
        raise Unsupported("table defined twice")
    table = node[last] = {}
    defined.add(path)
    headers.append(path)
    return table
