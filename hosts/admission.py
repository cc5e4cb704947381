"""Admission: does this run fit in the shared total now? (SPEC §5.1 layer 3). Pure.

    slice's non-reclaimable use
  + Σ over running bookings of max(booked − its current non-reclaimable use, 0)
  + this run's predicted need
  ≤ total

A run that could never fit (nothing running, and need + non-reclaimable use >
total) is told so at once instead of waiting an hour. Waiters are served in
order with backfill: a run may pass the longest waiter only if both fit.

Predicted need: the history peak for the label (capped at the run's cap); the
cap when there is no history, or when the label was pushed out or hit its
ceiling before.
"""
from __future__ import annotations

# oom_score_adj per basis: the gambler dies first when a prediction was too low
OOM_SCORE_ADJ = {"unbounded": 1000, "history": 500, "cap": 0}


class Prediction:
    __slots__ = ("need", "basis", "why")

    def __init__(self, need: int, basis: str, why: str) -> None:
        self.need = need
        self.basis = basis  # "history" | "cap" | "unbounded"
        self.why = why


def predict(cap: int, entry: dict | None, unbounded: bool = False,
            book_cap: bool = False) -> Prediction:
    """What this run books. ``book_cap`` is the baseline (break switch book-cap-not-peak)."""
    peak = None
    if entry:
        try:
            peak = int(entry.get("peak") or 0) or None
        except (TypeError, ValueError):
            peak = None
        if entry.get("pushed_out"):
            return Prediction(cap, "unbounded" if unbounded else "cap",
                              "pushed out by the total last time: books its cap")
        if entry.get("ceiling_hit"):
            return Prediction(cap, "unbounded" if unbounded else "cap",
                              "hit its cap last time: books its cap")
    if peak is None or book_cap:
        return Prediction(cap, "unbounded" if unbounded else "cap",
                          "no history: books its cap" if peak is None else "books its cap")
    need = min(peak, cap)
    return Prediction(need, "unbounded" if unbounded else "history", "history peak")


class Running:
    """One running booking as admission sees it."""

    __slots__ = ("booked", "current")

    def __init__(self, booked: int, current: int) -> None:
        self.booked = booked
        self.current = current  # its cgroup's non-reclaimable use now (0 before it exists)

    @property
    def not_grown(self) -> int:
        return max(self.booked - self.current, 0)


class Decision:
    __slots__ = ("admit", "never_fits", "non_reclaimable", "pending", "need", "total", "short")

    def __init__(self, admit: bool, never_fits: bool, non_reclaimable: int, pending: int,
                 need: int, total: int) -> None:
        self.admit = admit
        self.never_fits = never_fits
        self.non_reclaimable = non_reclaimable
        self.pending = pending
        self.need = need
        self.total = total
        self.short = max(non_reclaimable + pending + need - total, 0)


def decide(total: int, slice_usage: int, slice_reclaimable: int, running: list[Running],
           need: int, subtract_page_cache: bool = True, head_need: int = 0) -> Decision:
    """The admission rule. ``subtract_page_cache=False`` is the break switch's bug.

    ``head_need``: the need of the longest waiter ahead of this run (0 when this run is
    the head of the queue). A run may pass it only if both fit, so a big job at the
    head is never starved by a stream of small ones.
    """
    used = slice_usage - (slice_reclaimable if subtract_page_cache else 0)
    used = max(used, 0)
    pending = sum(r.not_grown for r in running)
    fits = used + pending + need <= total
    admit = fits and (head_need <= 0 or used + pending + need + head_need <= total)
    never = (not fits) and not running and need + used > total
    return Decision(admit, never, used, pending, need, total)
