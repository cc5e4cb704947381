"""A reader of the YAML subset that task files use (Taskfile.yml, .pre-commit-config.yaml,
pnpm-workspace.yaml): block mappings and sequences, plain and quoted scalars, block
scalars (``|``, ``>``, with ``-``/``+``), one-line flow sequences and mappings, comments.

Anything else (anchors, aliases, tags, multi-line flow collections, complex keys) raises
``YamlUnsupported``: the caller treats the file as unreadable (unverifiable), never as
empty. Scalars stay strings (``true`` is "true"): callers only need text. Standard library
only; no PyYAML in the hook.
"""
from __future__ import annotations


class YamlUnsupported(ValueError):
    """The text uses YAML this reader does not understand."""


def load(text: str):
    """The first document of ``text`` as dicts, lists and strings (None for an empty one)."""
    lines = []
    for no, raw in enumerate(text.split("\n"), 1):
        if raw.startswith("---") and raw[3:].strip() in ("", "|", ">") and not lines:
            continue
        if raw.rstrip() in ("---", "...") and lines:
            break
        if "\t" in raw[:len(raw) - len(raw.lstrip())]:
            raise YamlUnsupported(f"line {no}: a tab in the indentation")
        lines.append((no, raw.rstrip("\r")))
    p = _Parser(lines)
    p.skip_blank()
    if p.i >= len(p.lines):
        return None
    value = p.node(_indent(p.lines[p.i][1]))
    p.skip_blank()
    if p.i < len(p.lines):
        raise YamlUnsupported(f"line {p.lines[p.i][0]}: unexpected text")
    return value


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def _strip_comment(s: str) -> str:
    """``s`` without a trailing `` # comment`` (quotes respected)."""
    q = None
    for k, c in enumerate(s):
        if q:
            if c == q:
                q = None
            continue
        if c in "'\"" and (k == 0 or s[k - 1] in " :[{,-"):
            q = c
        elif c == "#" and (k == 0 or s[k - 1] in " \t"):
            return s[:k].rstrip()
    return s.rstrip()


class _Parser:
    def __init__(self, lines) -> None:
        self.lines = lines
        self.i = 0

    def skip_blank(self) -> None:
        while self.i < len(self.lines):
            s = self.lines[self.i][1].strip()
            if s and not s.startswith("#"):
                return
            self.i += 1

    def node(self, indent: int):
        self.skip_blank()
        if self.i >= len(self.lines):
            return None
        no, raw = self.lines[self.i]
        s = raw.strip()
        if s.startswith(("&", "*", "!", "? ")):
            raise YamlUnsupported(f"line {no}: anchors, aliases, tags and complex keys are not read")
        if s == "-" or s.startswith("- "):
            return self.sequence(_indent(raw))
        if _key_split(s) is not None:
            return self.mapping(_indent(raw))
        self.i += 1
        return scalar(_strip_comment(s), no)

    def sequence(self, indent: int) -> list:
        out = []
        while True:
            self.skip_blank()
            if self.i >= len(self.lines):
                return out
            no, raw = self.lines[self.i]
            ind = _indent(raw)
            s = raw.strip()
            if ind < indent or not (s == "-" or s.startswith("- ")):
                if ind > indent:
                    raise YamlUnsupported(f"line {no}: bad indentation")
                return out
            if ind > indent:
                raise YamlUnsupported(f"line {no}: bad indentation")
            rest = s[1:].strip()
            if not rest or rest.startswith("#"):
                self.i += 1
                out.append(self.node(indent + 1))
                continue
            # `- key: value` starts a mapping whose keys line up with `key`
            col = ind + (len(s) - len(rest))
            if _key_split(_strip_comment(rest)) is not None and not rest.startswith(("'", '"', "[", "{")):
                self.lines[self.i] = (no, " " * col + rest)
                out.append(self.mapping(col))
                continue
            self.i += 1
            out.append(self.inline(rest, no, ind))
        return out

    def mapping(self, indent: int) -> dict:
        out: dict = {}
        while True:
            self.skip_blank()
            if self.i >= len(self.lines):
                return out
            no, raw = self.lines[self.i]
            ind = _indent(raw)
            if ind < indent:
                return out
            if ind > indent:
                raise YamlUnsupported(f"line {no}: bad indentation")
            s = _strip_comment(raw.strip())
            kv = _key_split(s)
            if kv is None:
                if s.startswith("- "):
                    return out   # a sequence at the same indent as the parent's keys ends here
                raise YamlUnsupported(f"line {no}: expected `key: value`")
            key, rest = kv
            self.i += 1
            if key in ("<<",):
                raise YamlUnsupported(f"line {no}: merge keys are not read")
            if not rest:
                self.skip_blank()
                if self.i < len(self.lines):
                    nraw = self.lines[self.i][1]
                    nind = _indent(nraw)
                    ns = nraw.strip()
                    if nind > ind or (nind == ind and (ns == "-" or ns.startswith("- "))):
                        out[key] = self.node(nind)
                        continue
                out[key] = None
                continue
            out[key] = self.inline(rest, no, ind)
        return out

    def inline(self, rest: str, no: int, indent: int):
        rest = _strip_comment(rest)
        if rest[:1] in ("|", ">"):
            return self.block_scalar(rest, indent)
        if rest.startswith(("&", "*", "!")):
            raise YamlUnsupported(f"line {no}: anchors, aliases and tags are not read")
        if rest.startswith(("[", "{")):
            return flow(rest, no)
        if rest.startswith(('"', "'")) and not _closed(rest):
            # a quoted scalar over several lines
            buf = [rest]
            while self.i < len(self.lines) and not _closed(" ".join(buf)):
                buf.append(self.lines[self.i][1].strip())
                self.i += 1
            return scalar(" ".join(buf), no)
        # a plain scalar may continue on more-indented lines
        buf = [rest]
        while self.i < len(self.lines):
            nno, nraw = self.lines[self.i]
            ns = nraw.strip()
            if not ns or _indent(nraw) <= indent or ns.startswith(("#", "- ")) or _key_split(ns) is not None:
                break
            buf.append(_strip_comment(ns))
            self.i += 1
        return scalar(" ".join(buf), no)

    def block_scalar(self, head: str, indent: int) -> str:
        style, chomp = head[0], "clip"
        for c in head[1:]:
            if c == "-":
                chomp = "strip"
            elif c == "+":
                chomp = "keep"
        body: list[str] = []
        block_indent = None
        while self.i < len(self.lines):
            no, raw = self.lines[self.i]
            if raw.strip() == "":
                body.append("")
                self.i += 1
                continue
            ind = _indent(raw)
            if block_indent is None:
                if ind <= indent:
                    break
                block_indent = ind
            if ind < block_indent:
                break
            body.append(raw[block_indent:])
            self.i += 1
        while body and body[-1] == "" and chomp != "keep":
            body.pop()
        if style == "|":
            text = "\n".join(body)
        else:
            text = ""
            for line in body:
                if not line:
                    text += "\n"
                elif text and not text.endswith("\n"):
                    text += " " + line
                else:
                    text += line
        if chomp != "strip":
            text += "\n"
        return text


def _closed(s: str) -> bool:
    q = s[0]
    if q == "'":
        body = s[1:].replace("''", "")
        return "'" in body
    k = 1
    while k < len(s):
        if s[k] == "\\":
            k += 2
            continue
        if s[k] == '"':
            return True
        k += 1
    return False


def _key_split(s: str):
    """(key, rest) for ``key: rest`` / ``"key": rest``, else None."""
    if s.startswith(("'", '"')):
        q = s[0]
        j = s.find(q, 1)
        if j > 0 and s[j + 1:j + 2] == ":" and (len(s) == j + 2 or s[j + 2] == " "):
            return s[1:j], s[j + 2:].strip()
        return None
    if s.startswith(("- ", "[", "{", "#")) or s == "-":
        return None
    k = s.find(":")
    while k >= 0:
        if k + 1 == len(s) or s[k + 1] == " ":
            key = s[:k].strip()
            if key and not key.startswith(("'", '"')):
                return key, s[k + 1:].strip()
            return None
        k = s.find(":", k + 1)
    return None


def scalar(s: str, no: int = 0) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] == "'":
        return s[1:-1].replace("''", "'")
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return _unescape(s[1:-1])
    if s in ("~", "null", "Null", "NULL"):
        return ""
    return s


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0",
                        " ": " "}.get(s[i + 1], "\\" + s[i + 1]))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def flow(s: str, no: int = 0):
    """A one-line flow sequence or mapping (one level of nesting)."""
    value, end = _flow(s, 0, no)
    if s[end:].strip():
        raise YamlUnsupported(f"line {no}: text after a flow collection")
    return value


def _flow(s: str, i: int, no: int):
    open_c = s[i]
    close_c = "]" if open_c == "[" else "}"
    items: list = []
    i += 1
    buf = ""
    q = None
    while i < len(s):
        c = s[i]
        if q:
            buf += c
            if c == q:
                q = None
            i += 1
            continue
        if c in "'\"":
            q = c
            buf += c
            i += 1
            continue
        if c in "[{":
            v, i = _flow(s, i, no)
            items.append(v)
            buf = ""
            while i < len(s) and s[i] in " ,":
                i += 1
            continue
        if c == "," or c == close_c:
            if buf.strip():
                items.append(buf.strip())
            buf = ""
            i += 1
            if c == close_c:
                break
            continue
        buf += c
        i += 1
    else:
        raise YamlUnsupported(f"line {no}: a flow collection over several lines")
    if open_c == "[":
        return [scalar(x) if isinstance(x, str) else x for x in items], i
    out: dict = {}
    for x in items:
        if not isinstance(x, str):
            raise YamlUnsupported(f"line {no}: nested flow mapping")
        kv = _key_split(x) if ": " in x or x.endswith(":") else (x, "")
        if kv is None:
            raise YamlUnsupported(f"line {no}: bad flow mapping")
        out[scalar(kv[0])] = scalar(kv[1])
    return out, i
