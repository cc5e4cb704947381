"""The machine's load, printed beside each bench figure: a figure measured on a busy machine says so
(the lead re-runs the benches on a quiet machine for the closing note)."""
from __future__ import annotations

import os


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"[load {one:.2f}, 5 min {five:.2f}, {os.cpu_count()} cores]"


def verdict(ok: bool, must: str) -> str:
    """The words a bench prints beside a must: met or MISSED."""
    return f"must {must}: {'met' if ok else 'MISSED'}"
