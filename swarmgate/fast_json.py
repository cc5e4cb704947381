"""json.loads / json.dumps for the hook's hot path, without importing the json package.

`import json` costs ~2 ms here (json.decoder, json.scanner and json.encoder
compile regular expressions at import), about 5% of a bare interpreter's
start-up, on every hook call. The C accelerator `_json` that json itself
uses does the real work; this module drives it directly:

- ``loads`` returns exactly what ``json.loads`` returns; on any error (or
  trailing data) it calls ``json.loads`` itself, so errors and their
  messages are json's own;
- ``dumps`` produces exactly ``json.dumps(obj, ensure_ascii=...,
  separators=..., sort_keys=...)`` (no indent: that goes to json).
Without `_json` (another Python implementation) both fall back to json.
"""
from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None

_WS = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """What the C scanner reads from a JSONDecoder (json.loads's defaults)."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict = {}


_scan = _json.make_scanner(_Context()) if _json is not None else None


def loads(text: str):
    """Like json.loads(text) for a str."""
    if _scan is None or not isinstance(text, str):
        import json
        return json.loads(text)
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


def _default(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj, *, ensure_ascii: bool = True, separators: tuple[str, str] = (", ", ": "),
          sort_keys: bool = False) -> str:
    """Like json.dumps(obj, ensure_ascii=..., separators=..., sort_keys=...)."""
    if _json is None:
        import json
        return json.dumps(obj, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys)
    if isinstance(obj, str):
        return (_json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring)(obj)
    encode = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    item_sep, key_sep = separators
    it = _json.make_encoder({}, _default, encode, None, key_sep, item_sep, sort_keys, False, True)
    return "".join(it(obj, 0))
