"""json.loads / json.dumps for the hook's hot path: json's results and json's errors, without the
json package, and for the hook's small documents without the C accelerator `_json` either."""
# `import json` costs ~2 ms here (json.decoder, json.scanner and json.encoder compile regular
# expressions at import); loading `_json` (a shared library in lib-dynload: that directory's finder,
# dlopen, relocations) ~0.3 ms more, on every hook call, where the hook reads one payload of a few
# hundred bytes and writes one answer and one log line. So:
# - loads(text) returns exactly json.loads(text). A str of up to LOADS_PURE_MAX characters, while
#   `_json` is not loaded (by this module or by json), is read by the recursive-descent reader
#   below (str.find, str.replace: C speed on long strings); a larger text, or any once `_json` is
#   loaded, goes to the C scanner json itself uses. On any error, or anything the reader does not
#   take (bytes, nesting deeper than MAX_DEPTH, a \uXXXX in U+D000..U+DFFF), the text goes to the
#   C scanner and on error to json.loads, so errors and their messages are json's own.
# - dumps(obj, ...) is exactly json.dumps(obj, ensure_ascii=..., separators=..., sort_keys=...)
#   (no indent): dict, list, tuple, str, int, float, bool, None are written below; on any error (a
#   type json cannot write, a circular reference, a key of a wrong type, keys a sort cannot compare)
#   the C encoder runs and raises today's error with today's message. Once `_json` is loaded, the C
#   encoder writes everything.
# Each KB of this module's bytecode costs the hook ~7 us to read: keep it small.
from __future__ import annotations

from sys import modules as _modules
from _codecs import unicode_escape_decode as _unicode_escape_decode   # built in, loaded at start-up

# What loads reads in Python while `_json` is not loaded: texts of up to LOADS_PURE_MAX characters
# and LOADS_PURE_COMMAS commas. The reader's cost is mostly per value (~1-2.5 us each, a comma
# apiece) plus a little per character; the C scanner's is ~10x less, after ~300 us to load `_json`
# (bench/fast_json_speed.py: a 4 KB document of small values, 139 commas, breaks even; a 17 KB
# Write payload, mostly one string, costs the reader ~1.5x the C scanner and its load).
LOADS_PURE_MAX = 8 << 10
LOADS_PURE_COMMAS = 120
# What dumps writes in Python: ~1 us a value, ~10x the C encoder; past ~1000 values (4 pieces of
# text each), or a non-ASCII string of over 4 KB to escape, the C encoder's load pays for itself
DUMPS_PURE_PIECES = 4000
DUMPS_PURE_ESCAPED = 4 << 10
MAX_DEPTH = 200   # nesting the reader follows; deeper goes to the C scanner (and its RecursionError)

_json = None      # the C accelerator, once loaded
_scan = None
_WS = " \t\n\r"
# the control characters but whitespace: none may be anywhere in a JSON text
_CONTROL = ("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15"
            "\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f")
_NAN = float("nan")
_INF = float("inf")
_CONSTANTS = {"-Infinity": -_INF, "Infinity": _INF, "NaN": _NAN}
_DIGITS = "0123456789"
# the one-character escapes but \\" and \\\\ (the reader's stand-ins took those)
_SHORT = (("\\/", "/"), ("\\b", "\b"), ("\\f", "\f"), ("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t"))
# Unicode noncharacters (reserved for a program's internal use): the reader's text has _B for
# each escaped backslash and _Q for each escaped quote, so str.find finds a string's closing quote
_B, _Q = "\ufdd0", "\ufdd1"


class _Unread(Exception):
    """The reader (or the writer) does not take this input: the C accelerator (and its errors) will."""


# what the reader raises on a text it does not take: its own refusal, an index past the end, an
# int past Python's digit limit or a bad \uXXXX (ValueError), a caller already deep
_NOT_READ = (_Unread, LookupError, ValueError, RecursionError)


def _load_c():
    global _json, _scan
    import _json as c

    class Context:
        """What the C scanner reads from a JSONDecoder (json.loads's defaults)."""
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = _CONSTANTS.__getitem__
        memo: dict = {}

    _scan = c.make_scanner(Context())
    _json = c
    return c


def loads(text: str):
    """Like json.loads(text)."""
    if (_json is None and type(text) is str and len(text) <= LOADS_PURE_MAX and "_json" not in _modules
            and text.count(",") <= LOADS_PURE_COMMAS):
        try:
            return _read(text)
        except _NOT_READ:
            pass
    return _c_loads(text)


def _read(text: str):
    """The value of a whole JSON text, read in Python; raises one of _NOT_READ where json would
    raise an error, or where the reader leaves the text to the C scanner."""
    if _B in text or _Q in text:
        raise _Unread   # the C scanner reads it
    if not text.isprintable():
        for c in _CONTROL:
            if c in text:
                raise _Unread
    if "\\" in text:
        # backslash runs read as pairs from their left (json's escapes), outside strings too,
        # where any backslash is an error
        text = text.replace("\\\\", _B).replace('\\"', _Q)
    n = len(text)
    i = 0
    while text[i] in _WS:
        i += 1
    obj, i = _value(text, i, 0)
    while i < n and text[i] in _WS:
        i += 1
    if i != n:
        raise _Unread
    return obj


def _c_loads(text):
    if not isinstance(text, str):
        import json
        return json.loads(text)
    if _json is None:
        _load_c()
    n = len(text)
    i = 0
    while i < n and text[i] in _WS:
        i += 1
    try:
        obj, end = _scan(text, i)
    except Exception:  # noqa: BLE001 - let json raise its own error with its own message
        import json
        return json.loads(text)
    while end < n and text[end] in _WS:
        end += 1
    if end != n:
        import json
        return json.loads(text)  # raises "Extra data"
    return obj


def _value(s: str, i: int, depth: int):
    # (the JSON value that starts at s[i], the index after it), in the C scanner's grammar
    c = s[i]
    if c == '"':
        return _string(s, i + 1)
    if c == "{" or c == "[":
        if depth >= MAX_DEPTH:
            raise _Unread
        close, out = ("}", {}) if c == "{" else ("]", [])
        i += 1
        while s[i] in _WS:
            i += 1
        if s[i] == close:
            return out, i + 1
        while True:
            if close == "]":
                v, i = _value(s, i, depth + 1)
                out.append(v)
            else:
                if s[i] != '"':
                    raise _Unread
                key, i = _string(s, i + 1)
                while s[i] in _WS:
                    i += 1
                if s[i] != ":":
                    raise _Unread
                i += 1
                while s[i] in _WS:
                    i += 1
                out[key], i = _value(s, i, depth + 1)
            while s[i] in _WS:
                i += 1
            if s[i] == close:
                return out, i + 1
            if s[i] != ",":
                raise _Unread
            i += 1
            while s[i] in _WS:
                i += 1
    if c == "n" and s.startswith("null", i):
        return None, i + 4
    if c == "t" and s.startswith("true", i):
        return True, i + 4
    if c == "f" and s.startswith("false", i):
        return False, i + 5
    if c == "N" and s.startswith("NaN", i):
        return _NAN, i + 3
    if c == "I" and s.startswith("Infinity", i):
        return _INF, i + 8
    if c == "-" and s.startswith("-Infinity", i):
        return -_INF, i + 9
    return _number(s, i)


def _number(s: str, i: int):
    """-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)? at s[i], as the C scanner matches it: a '.' or
    an exponent without digits after it is not part of the number."""
    n = len(s)
    j = i + 1 if s[i] == "-" else i
    c = s[j]
    if c == "0":
        j += 1
    elif "1" <= c <= "9":
        j += 1
        while j < n and s[j] in _DIGITS:
            j += 1
    else:
        raise _Unread
    is_float = False
    if j + 1 < n and s[j] == "." and s[j + 1] in _DIGITS:
        j += 2
        while j < n and s[j] in _DIGITS:
            j += 1
        is_float = True
    if j < n and s[j] in "eE":
        k = j + 1
        if k < n and s[k] in "+-":
            k += 1
        if k < n and s[k] in _DIGITS:
            k += 1
            while k < n and s[k] in _DIGITS:
                k += 1
            j = k
            is_float = True
    return (float(s[i:j]) if is_float else int(s[i:j])), j


def _string(s: str, i: int):
    """(the string whose body starts at s[i] in the reader's text, the index after its closing
    quote); strict as json: no control character below 0x20 inside."""
    j = s.find('"', i)
    if j < 0:
        raise _Unread
    body = s[i:j]
    if "\\" not in body and body.isprintable():
        return body, j + 1
    if "\n" in body or "\r" in body or "\t" in body:   # strict (_read refused the other controls)
        raise _Unread
    if "\\" in body:
        for e, ch in _SHORT:
            if e in body:
                body = body.replace(e, ch)
        if "\\" in body:   # \\uXXXX (or not an escape)
            return _unescape(body), j + 1
    return _literal(body), j + 1


def _literal(t: str) -> str:
    """t with the reader's stand-ins for the escaped quotes and backslashes put back"""
    if _Q in t:
        t = t.replace(_Q, '"')
    if _B in t:
        t = t.replace(_B, "\\")
    return t


def _unescape(body: str) -> str:
    # a body with \\uXXXX escapes (its other escapes read): the unicode_escape codec reads them at C
    # speed (UnicodeDecodeError, a ValueError, on a bad one) and the rest as is. A surrogate pair is
    # one character to json, not to the codec: an escape in U+D000..U+DFFF goes to the C scanner.
    if body.count("\\") != body.count("\\u") or "\\ud" in body or "\\uD" in body:
        raise _Unread
    if _Q in body:
        body = body.replace(_Q, '"')
    if _B in body:
        body = body.replace(_B, "\\\\")
    return _unicode_escape_decode(body.encode("ascii", "backslashreplace"))[0]


# dumps


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


class _AsciiEscapes(dict):
    """str.translate's table for ensure_ascii: each character as json writes it (' '..'~' as is but
    '"' and '\\', the short escapes, \\uXXXX for the rest, a surrogate pair past the BMP); filled as
    met, up to a bound (nothing is built at import: the hook pays for what it writes)."""

    def __missing__(self, n: int) -> str:
        c = chr(n)
        if " " <= c <= "~" and c != '"' and c != "\\":
            e = c
        elif c in _ESCAPES:
            e = _ESCAPES[c]
        elif n < 0x10000:
            e = f"\\u{n:04x}"
        else:
            m = n - 0x10000
            e = f"\\u{0xD800 | (m >> 10):04x}\\u{0xDC00 | (m & 0x3FF):04x}"
        if len(self) < 4096:
            self[n] = e
        return e


_ASCII = _AsciiEscapes()


def _str_ascii(s: str) -> str:
    if s.isascii() and "\x7f" not in s:   # ASCII: the same escapes as without ensure_ascii (but DEL's)
        return _str_text(s)
    if len(s) > DUMPS_PURE_ESCAPED:
        raise _Unread   # str.translate's table costs ~50 ns a character: the C encoder writes it
    return '"' + s.translate(_ASCII) + '"'


def _str_text(s: str) -> str:
    if '"' in s or "\\" in s:
        s = s.replace("\\", "\\\\").replace('"', '\\"')
    if not s.isprintable():
        for n in range(0x20):
            c = chr(n)
            if c in s:
                s = s.replace(c, _ESCAPES.get(c) or f"\\u{n:04x}")
    return '"' + s + '"'


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _encode(o, out: list, enc, item_sep: str, key_sep: str, sort_keys: bool) -> None:
    # o's text onto out, in the C encoder's order of type checks; a circular reference recurses
    # into RecursionError, and the C encoder then raises its own error
    if o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, str):
        out.append(enc(o))
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    elif isinstance(o, (list, tuple)):
        sep = "["
        for v in o:
            if len(out) > DUMPS_PURE_PIECES:
                raise _Unread
            out.append(sep)
            sep = item_sep
            _encode(v, out, enc, item_sep, key_sep, sort_keys)
        out.append("]" if o else "[]")
    elif isinstance(o, dict):
        sep = "{"
        for k, v in (sorted(o.items()) if sort_keys else o.items()):
            if isinstance(k, str):
                k = enc(k)
            elif isinstance(k, float):
                k = '"' + _float(k) + '"'
            elif k is True or k is False or k is None:
                k = '"true"' if k else '"false"' if k is False else '"null"'
            elif isinstance(k, int):
                k = '"' + int.__repr__(k) + '"'
            else:
                raise _Unread   # the C encoder's TypeError
            if len(out) > DUMPS_PURE_PIECES:
                raise _Unread
            out.append(sep)
            sep = item_sep
            out.append(k)
            out.append(key_sep)
            _encode(v, out, enc, item_sep, key_sep, sort_keys)
        out.append("}" if o else "{}")
    else:
        raise _Unread   # _default's TypeError, from the C encoder


def _default(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj, *, ensure_ascii: bool = True, separators: tuple[str, str] = (", ", ": "),
          sort_keys: bool = False) -> str:
    """Like json.dumps(obj, ensure_ascii=..., separators=..., sort_keys=...)."""
    if _json is None and "_json" not in _modules:   # loaded already (json is imported): it costs nothing
        try:
            return _write(obj, ensure_ascii, separators, sort_keys)
        except Exception:  # noqa: BLE001 - the C encoder raises today's error with today's message
            pass
    return _c_dumps(obj, ensure_ascii, separators, sort_keys)


def _write(obj, ensure_ascii: bool, separators: tuple[str, str], sort_keys: bool) -> str:
    """json.dumps's text for obj, written in Python; raises where json would, or where the writer
    leaves obj to the C encoder."""
    enc = _str_ascii if ensure_ascii else _str_text
    if type(obj) is str:
        return enc(obj)
    out: list[str] = []
    item_sep, key_sep = separators
    _encode(obj, out, enc, item_sep, key_sep, sort_keys)
    return "".join(out)


def _c_dumps(obj, ensure_ascii: bool, separators: tuple[str, str], sort_keys: bool) -> str:
    c = _json or _load_c()
    encode = c.encode_basestring_ascii if ensure_ascii else c.encode_basestring
    if isinstance(obj, str):
        return encode(obj)
    item_sep, key_sep = separators
    it = c.make_encoder({}, _default, encode, None, key_sep, item_sep, sort_keys, False, True)
    return "".join(it(obj, 0))
