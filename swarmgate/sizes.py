"""Memory sizes as users write them ("20G", "512M", "1.5GiB", "1073741824")."""
from __future__ import annotations

import re

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """Bytes in ``text``; raise ValueError with the offending text."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a size")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"{text!r} is negative")
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a size (write e.g. 512M, 8G, 1.5G)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


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
