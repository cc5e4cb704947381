"""Parsing front ends of the bash reader: bashlex first (through ``bashlex_fast`` and
``bashlex_adapter``), the quote-aware ``bash_lexical`` parser where bashlex cannot or must
not be trusted. Both yield ``bash_lexical`` nodes; parse trees are cached per process by text.
"""
from __future__ import annotations

import time

from swarmgate.hooks import bash_lexical as _lx

_BASHLEX_MAX_CHARS = 6000      # bashlex costs ~30 µs/char: beyond this the lexical parser reads
_BASHLEX_MAX_NEST = 40         # and it recurses per nesting level
_CACHE_MAX = 256                # parse trees kept per process, by text
_CACHE_TEXT_MAX = 16384         # larger texts (scripts) are not kept


class OutOfTime(Exception):
    """The analysis' deadline passed."""


_cache: dict = {}
_lcache: dict = {}


def _lexical_parse(text: str, deadline: float | None):
    try:
        seq, unsure = _lx.parse(text, deadline)
    except _lx.ParseTimeout:
        return None
    return seq, "lexical", unsure


def needs_lexical(text: str) -> str | None:
    """Why bashlex should not be tried on this text (None: try it)."""
    if len(text) > _BASHLEX_MAX_CHARS:
        return f"text of {len(text)} characters"
    if text.count("(") + text.count("`") + text.count("{") > _BASHLEX_MAX_NEST:
        return "deeply nested text"
    k = text.find("((")
    while k >= 0:
        if k == 0 or text[k - 1] != "$":
            return "arithmetic (( ))"
        k = text.find("((", k + 2)
    if "$((" in text:
        return "arithmetic expansion"
    # bashlex reads `;# comment` as a command, and mishandles backslashes in backquotes
    for pair in (";#", "&#", "|#", "(#", ")#"):
        if pair in text:
            return "comment right after an operator"
    if "`" in text and "\\" in text:
        return "backslash inside backquotes"
    # bashlex neither sees substitutions inside ${...} nor splits such words right
    k = text.find("${")
    while k >= 0:
        end = text.find("}", k)
        seg = text[k:end if end >= 0 else len(text)]
        if "$(" in seg or "`" in seg:
            return "substitution inside ${...}"
        k = text.find("${", k + 2)
    # constructs bashlex rejects anyway (saves the failed attempt)
    if "[[" in text or "=(" in text:
        return "[[ ]] or an array"
    if text.lstrip().startswith(("time ", "case ", "select ", "coproc ")):
        return "time/case/select/coproc"
    return None


def parse_text(text: str, deadline: float | None = None, parser: str = "auto"):
    """Parse a shell text: (Seq, parsed_by, unsure_reason_or_None). Cached by text.

    ``parser``: "auto" (bashlex, else the lexical parser), "lexical" (never
    import bashlex). Past ``deadline`` (time.monotonic) raises OutOfTime;
    bashlex (which cannot be interrupted) is only tried when its expected cost fits."""
    hit = _cache.get(text) if parser == "auto" else _lcache.get(text)
    if hit is not None:
        return hit
    if parser == "lexical":
        result = _lexical_parse(text, deadline)
        if result is None:
            raise OutOfTime()
        if len(text) <= _CACHE_TEXT_MAX:
            if len(_lcache) >= _CACHE_MAX:
                _lcache.clear()
            _lcache[text] = result
        return result
    why = needs_lexical(text)
    if why is None and deadline is not None:
        # ~30 µs per character is bashlex's pace; keep a wide margin
        if time.monotonic() + len(text) * 1e-4 + 0.01 > deadline:
            why = "not enough time left for bashlex"
    result = None
    if why is None:
        try:
            from swarmgate.hooks import bashlex_adapter, bashlex_fast
            bashlex = bashlex_fast.load()
            trees = bashlex.parser.parse(text)
            result = (bashlex_adapter.convert(trees, text), "bashlex", None)
        except RecursionError:
            result = None
        except Exception:  # noqa: BLE001 - bashlex raises many kinds; fall back
            result = None
    if result is None:
        result = _lexical_parse(text, deadline)
        if result is None:
            raise OutOfTime()
    if len(text) <= _CACHE_TEXT_MAX and why != "not enough time left for bashlex":
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[text] = result
    return result



def clear_cache() -> None:
    """Forget every cached parse tree (benchmarks and tests that measure parsing)."""
    _cache.clear()
    _lcache.clear()
