"""History per label: the peak memory of recent runs, their duration, and two marks.

``peak`` is the largest of the last few complete runs' cgroup peaks; it is what
admission books instead of the declared cap. ``ceiling_hit`` (the run hit its
own cap) and ``pushed_out`` (the run was admitted on its history, the total
filled up and the kernel chose it) make the next run of the label book its full
cap; a complete run booked on its cap clears them (its peak is then real).

Stored in ``state_paths.history_path()``; edited under the ledger's lock.
The label defaults to the normalised command.
"""
from __future__ import annotations

import time

from swarmgate import state_paths
from swarmgate.statefile import read_json, write_json_atomic

KEEP = 5  # peaks remembered per label


def normalise(argv: list[str]) -> str:
    """The default label: the command with runs of whitespace collapsed."""
    return " ".join(" ".join(argv).split())[:300]


def load(report=None) -> dict:
    data = read_json(state_paths.history_path(), {}, report=report)
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        return {"version": 1, "labels": {}}
    clean = {k: v for k, v in labels.items() if isinstance(v, dict)}
    return {"version": 1, "labels": clean}


def save(data: dict) -> None:
    write_json_atomic(state_paths.history_path(), data, durable=False)  # a lost update is harmless


def entry(data: dict, label: str) -> dict | None:
    return data["labels"].get(label)


def record(data: dict, label: str, *, peak: int | None, duration_s: float, outcome: str,
           basis: str, cap: int) -> dict:
    """Book one finished run. ``outcome``: ok | own_cap | pushed_out | timeout | signalled | failed."""
    e = data["labels"].setdefault(label, {"peaks": [], "runs": 0})
    e["runs"] = int(e.get("runs", 0) or 0) + 1
    e["last"] = round(time.time(), 3)
    e["last_outcome"] = outcome
    e["cap"] = cap
    complete = outcome in ("ok", "failed", "own_cap")
    peaks = [p for p in e.get("peaks", []) if isinstance(p, int) and p > 0]
    if peak and complete:
        peaks = (peaks + [int(peak)])[-KEEP:]
    e["peaks"] = peaks
    if peaks:
        e["peak"] = max(peaks)
    if complete:
        e["duration_s"] = round(duration_s, 3)
    if outcome == "own_cap":
        e["ceiling_hit"] = True
    elif outcome == "pushed_out":
        e["pushed_out"] = True
    elif outcome in ("ok", "failed") and basis in ("cap", "unbounded"):
        # a complete run on its full cap measured the real peak: trust history again
        e.pop("ceiling_hit", None)
        e.pop("pushed_out", None)
    return e
