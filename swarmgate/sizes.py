"""Memory sizes as users write them ("20G", "512M", "1.5GiB", "1073741824")."""
from __future__ import annotations

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# the config (loaded by every hook) parses sizes: no `re` at import time


def _split(text: str) -> tuple[str, str] | None:
    """("1.5", "G") from "1.5GiB", "1.5 gb", "1.5g"; None when it is not a size."""
    t = text.strip().upper()
    for suffix in ("IB", "B"):
        if t.endswith(suffix) and len(t) > len(suffix):
            t = t[: -len(suffix)].rstrip()
            break
    unit = ""
    if t and t[-1] in "KMGT":
        unit, t = t[-1], t[:-1].rstrip()
    whole, dot, frac = t.partition(".")
    if not whole.isdigit() or not whole.isascii() or (dot and not (frac.isdigit() and frac.isascii())):
        return None
    return t, unit


def parse_size(text: str | int) -> int:
    """Bytes in ``text``; raise ValueError with the offending text."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a size")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"{text!r} is negative")
        return text
    parts = _split(str(text))
    if parts is None:
        raise ValueError(f"{text!r} is not a size (write e.g. 512M, 8G, 1.5G)")
    return int(float(parts[0]) * _UNITS[parts[1]])


def human(n: int | float) -> str:
    """Short human form: 1.5G, 512M, 12K."""
    n = float(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, size in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{sign}{v:.1f}{unit}".replace(".0" + unit, unit)
    return f"{sign}{int(n)}B"
