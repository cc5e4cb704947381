"""Word expansion for the bash reader: quote removal, constant variables, ANSI-C escapes.

``expand(raw, variables, subst)`` returns the value of one shell word and
where its last unresolved expansion ends (-1: fully static). Unknown
expansions keep their source text, so a guard can tell ``$CMD`` from ``cargo``.
"""
from __future__ import annotations

from swarmgate import lean_os as os

C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
              "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def match_close(s: str, i: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket matching s[i] (quote-aware); len(s) if none.

    Words longer than 4000 characters are not scanned (pathological nesting
    would make expansion quadratic): the rest of the word counts as dynamic."""
    depth = 0
    n = len(s)
    if n - i > 4000:
        return n
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and open_c != "{":
            k = s.find("'", i + 1)
            i = n if k < 0 else k + 1
            continue
        if c == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            i = j + 1
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


_ENV_KNOWN = ("HOME", "USER", "LOGNAME", "TMPDIR", "SHELL")


def base_vars(cwd: str | None) -> dict:
    """Variables whose value the Bash tool's shell certainly has: a few from
    the environment the hook runs in (the same user and session), and PWD.
    Read on every call: a hook is a fresh process, so a cache gains nothing and
    a long-lived caller (tests, swarm-watch) must see the environment as it is now."""
    out: dict[str, str | None] = {k: os.environ[k] for k in _ENV_KNOWN if os.environ.get(k)}
    if cwd:
        out["PWD"] = cwd
    return out


def param_value(inner: str, variables: dict) -> str | None:
    """Value of ${inner} when it is known: NAME, NAME[0], NAME:-word, NAME-word."""
    if inner.isidentifier() or inner.isdigit() or inner in ("@", "*", "#"):
        return variables.get(inner)
    k = inner.find("[")
    if k > 0 and inner.endswith("]") and inner[:k].isidentifier() and inner[k + 1:-1] in ("0", "@", "*"):
        return variables.get(inner[:k])
    for op in (":-", ":=", "-", "="):
        k = inner.find(op)
        if k > 0 and inner[:k].isidentifier():
            name, word = inner[:k], inner[k + len(op):]
            static_word = not any(c in word for c in "$`'\"\\")
            if name not in variables:
                # not set by this text: the default is what runs unless the
                # environment sets it (judged as the default: ${CARGO:-cargo} is cargo)
                return word if static_word else None
            val = variables[name]
            if val is None:
                return None   # set to something we cannot read
            if val == "" and op.startswith(":"):
                return word if static_word else None
            return val
    return _operated_value(inner, variables)


def _operated_value(inner: str, variables: dict) -> str | None:
    """${NAME,,} ${NAME^^} ${NAME,} ${NAME^}; ${NAME#w} ${NAME##w} ${NAME%w} ${NAME%%w}; ${NAME/w/r}
    ${NAME//w/r} ${NAME/#w/r} ${NAME/%w/r}; ${NAME:off} ${NAME:off:len}, of a known NAME and literal
    words (no glob, quote or expansion in them: those stay unknown)."""
    j = 0
    while j < len(inner) and (inner[j].isalnum() or inner[j] == "_"):
        j += 1
    name, rest = inner[:j], inner[j:]
    if not rest or not name.isidentifier():
        return None
    val = variables.get(name)
    if val is None:
        return None
    if rest in (",,", "^^", ",", "^"):
        if rest == ",,":
            return val.lower()
        if rest == "^^":
            return val.upper()
        return (val[:1].lower() if rest == "," else val[:1].upper()) + val[1:]
    if any(c in rest[1:] for c in "$`'\"\\*?[{}"):
        return None
    op = rest[:2] if rest[:2] in ("##", "%%", "//") else rest[:1]
    word = rest[len(op):]
    if op in ("#", "##"):
        return val[len(word):] if val.startswith(word) else val
    if op in ("%", "%%"):
        return val[:len(val) - len(word)] if word and val.endswith(word) else val
    if op in ("/", "//"):
        pat, _, rep = word.partition("/")
        if pat[:1] == "#" and op == "/":
            return rep + val[len(pat) - 1:] if val.startswith(pat[1:]) else val
        if pat[:1] == "%" and op == "/":
            return val[:len(val) - len(pat) + 1] + rep if val.endswith(pat[1:]) else val
        if not pat:
            return val
        return val.replace(pat, rep) if op == "//" else val.replace(pat, rep, 1)
    if op == ":":
        off, _, ln = word.partition(":")
        if not off.isdigit() or (ln and not ln.isdigit()):
            return None
        start = int(off)
        return val[start:start + int(ln)] if ln else val[start:]
    return None


def expand(raw: str, variables: dict, subst=None, heredoc: bool = False) -> tuple[str, int]:
    """Quote removal and constant-variable expansion of one word.

    Returns (value, last_dynamic_end): expansions that cannot be resolved keep
    their source text in ``value``; ``last_dynamic_end`` is the index in value
    just after the last such piece (-1 when the word is fully static)."""
    if raw[:2] in ("~+", "~-") and not heredoc:
        raw = _tilde(raw, variables)
    if "$" not in raw and "'" not in raw and '"' not in raw and "\\" not in raw and "`" not in raw:
        return raw, -1
    out: list[str] = []
    olen = 0
    last = -1
    i, n = 0, len(raw)
    dq = heredoc   # an unquoted here-document body expands like "..." without the quotes
    while i < n:
        c = raw[i]
        if heredoc and c == '"':
            out.append(c)
            olen += 1
            i += 1
            continue
        if c == "\\":
            if i + 1 < n:
                nx = raw[i + 1]
                if nx == "\n":
                    pass
                elif dq and nx not in '$`"\\':
                    out.append("\\" + nx)
                    olen += 2
                else:
                    out.append(nx)
                    olen += 1
            i += 2
            continue
        if c == '"':
            dq = not dq
            i += 1
            continue
        if c == "'" and not dq:
            k = raw.find("'", i + 1)
            k = n if k < 0 else k
            piece = raw[i + 1:k]
            out.append(piece)
            olen += len(piece)
            i = k + 1
            continue
        if c == "`":
            j = i + 1
            while j < n and raw[j] != "`":
                j += 2 if raw[j] == "\\" else 1
            piece = raw[i:j + 1]
            val = subst(raw[i + 1:j]) if subst is not None else None
            if val is not None:
                out.append(val)
                olen += len(val)
                i = j + 1
                continue
            out.append(piece)
            olen += len(piece)
            last = olen
            i = j + 1
            continue
        if c in "<>" and not dq and i + 1 < n and raw[i + 1] == "(":
            # process substitution: a /dev/fd path known only at run time
            j = match_close(raw, i + 1, "(", ")")
            piece = raw[i:j]
            out.append(piece)
            olen += len(piece)
            last = olen
            i = j
            continue
        if c == "$" and i + 1 < n:
            nx = raw[i + 1]
            if nx == "'" and not dq:
                j = i + 2
                while j < n and raw[j] != "'":
                    j += 2 if raw[j] == "\\" else 1
                piece = c_unescape(raw[i + 2:j])
                out.append(piece)
                olen += len(piece)
                i = j + 1
                continue
            if nx == '"' and not dq:   # $"..." locale string
                i += 1
                continue
            if nx == "(":
                j = match_close(raw, i + 1, "(", ")")
                piece = raw[i:j]
                val = subst(raw[i + 2:j - 1]) if subst is not None and not piece.startswith("$((") else None
                if val is not None:
                    out.append(val)
                    olen += len(val)
                    i = j
                    continue
                out.append(piece)
                olen += len(piece)
                last = olen
                i = j
                continue
            if nx == "{":
                j = match_close(raw, i + 1, "{", "}")
                inner = raw[i + 2:j - 1]
                val = param_value(inner, variables)
                if val is None:
                    piece = raw[i:j]
                    out.append(piece)
                    olen += len(piece)
                    last = olen
                else:
                    out.append(val)
                    olen += len(val)
                i = j
                continue
            if nx.isalpha() or nx == "_":
                j = i + 1
                while j < n and (raw[j].isalnum() or raw[j] == "_"):
                    j += 1
                name = raw[i + 1:j]
                val = variables.get(name)
                if val is None:
                    piece = raw[i:j]
                    out.append(piece)
                    olen += len(piece)
                    last = olen
                else:
                    out.append(val)
                    olen += len(val)
                i = j
                continue
            if nx.isdigit() or nx in "@*#?$!-":
                val = variables.get(nx) if nx in "0123456789@*#" else None
                if val is None:
                    out.append(raw[i:i + 2])
                    olen += 2
                    last = olen
                else:
                    out.append(val)
                    olen += len(val)
                i += 2
                continue
        out.append(c)
        olen += 1
        i += 1
    return "".join(out), last



def shell_quote(word: str) -> str:
    """Quote a word so that parsing it again gives it back (dynamic words keep their $)."""
    if word and all(c.isalnum() or c in "-_./=:,+%@^" for c in word):
        return word
    if "$" in word:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'
    return "'" + word.replace("'", "'\\''") + "'"


def c_unescape(s: str) -> str:
    """Backslash escapes as $'...', echo -e and printf decode them (\\n, \\xHH, \\NNN, \\uHHHH)."""
    if "\\" not in s:
        return s
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n:
            e = s[i + 1]
            if e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                j = i + 2
                while j < n and j < i + 2 + width and s[j] in "0123456789abcdefABCDEF":
                    j += 1
                if j > i + 2:
                    try:
                        out.append(chr(int(s[i + 2:j], 16)))
                    except (ValueError, OverflowError):
                        out.append(s[i:j])
                    i = j
                    continue
            if e in "01234567":
                j = i + 1
                while j < n and j < i + 4 and s[j] in "01234567":
                    j += 1
                out.append(chr(int(s[i + 1:j], 8) & 0xFF))
                i = j
                continue
            out.append(C_ESCAPES.get(e, "\\" + e))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_TILDES = {"~+": "PWD", "~-": "OLDPWD"}   # `~` itself stays as typed: its readers expand it (expanduser)


def _tilde(raw: str, variables: dict) -> str:
    """Tilde expansion of a word's unquoted prefix `~+` ($PWD) and `~-` ($OLDPWD), when the value is
    known (an unknown value stays as typed)."""
    k = raw.find("/")
    prefix = raw if k < 0 else raw[:k]
    name = _TILDES.get(prefix)
    value = variables.get(name) if name else None
    if not isinstance(value, str) or not value:
        return raw
    return value.replace("\\", "\\\\").replace("$", "\\$").replace("'", "\\'").replace('"', '\\"').replace(
        "`", "\\`") + raw[len(prefix):]


def expand_braces(word: str, limit: int = 64) -> list[str]:
    """Bash brace expansion of an unquoted word: ``a{b,c}d`` -> abd acd, ``{1..3}``,
    ``{a..c}``, ``{01..10..3}``, nested. More than ``limit`` results: the word unexpanded
    (the caller decides whether that is unverifiable)."""
    out = _braces(word, limit)
    return out if out is not None else [word]


def _braces(word: str, limit: int):
    i = _brace_open(word)
    if i < 0:
        return [word]
    j, parts = _brace_parts(word, i)
    if j < 0:
        return [word]
    pre, post = word[:i], word[j + 1:]
    alts: list[str] = []
    if len(parts) == 1:
        seq = _brace_sequence(parts[0])
        if seq is None:
            # `{x}` is literal; expansion continues after it
            rest = _braces(post, limit)
            return None if rest is None else [pre + "{" + parts[0] + "}" + r for r in rest]
        alts = seq
    else:
        for p in parts:
            sub = _braces(p, limit)
            if sub is None:
                return None
            alts.extend(sub)
    tails = _braces(post, limit)
    if tails is None or len(alts) * len(tails) > limit:
        return None
    return [pre + a + t for a in alts for t in tails]


def _skip_quoted(word: str, k: int) -> int:
    """Index past a quoted part, an expansion or an escape starting at ``word[k]``, or ``k``."""
    c = word[k]
    if c == "\\":
        return k + 2
    if c == "'":
        j = word.find("'", k + 1)
        return len(word) if j < 0 else j + 1
    if c == '"':
        j = k + 1
        while j < len(word) and word[j] != '"':
            j += 2 if word[j] == "\\" else 1
        return j + 1
    if c == "`":
        j = word.find("`", k + 1)
        return len(word) if j < 0 else j + 1
    if c == "$" and k + 1 < len(word) and word[k + 1] in "({":
        return match_close(word, k + 1, word[k + 1], ")" if word[k + 1] == "(" else "}")
    return k


def _brace_open(word: str) -> int:
    k = 0
    while k < len(word):
        j = _skip_quoted(word, k)
        if j != k:
            k = j
            continue
        if word[k] == "{":
            return k
        k += 1
    return -1


def _brace_parts(word: str, i: int):
    depth, k, start, parts = 0, i, i + 1, []
    while k < len(word):
        j = _skip_quoted(word, k)
        if j != k:
            k = j
            continue
        c = word[k]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(word[start:k])
                return k, parts
        elif c == "," and depth == 1:
            parts.append(word[start:k])
            start = k + 1
        k += 1
    return -1, parts


def _brace_sequence(inner: str):
    bits = inner.split("..")
    if len(bits) not in (2, 3):
        return None
    a, b = bits[0], bits[1]
    step = 1
    if len(bits) == 3:
        try:
            step = abs(int(bits[2])) or 1
        except ValueError:
            return None
    try:
        x, y = int(a), int(b)
        width = max(len(a), len(b)) if (a.lstrip("-").startswith("0") and len(a.lstrip("-")) > 1) or \
            (b.lstrip("-").startswith("0") and len(b.lstrip("-")) > 1) else 0
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        if len(rng) > 1000:
            return None
        return [str(v).zfill(width) if width else str(v) for v in rng]
    except ValueError:
        pass
    if len(a) == 1 and len(b) == 1 and a.isalpha() and b.isalpha():
        x, y = ord(a), ord(b)
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        return [chr(v) for v in rng]
    return None
