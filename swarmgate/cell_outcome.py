"""What a self-test cell saw: the protection (green), its absence in the way the break switch
allows (red), or anything else (broken).

A cell that counts every failure as red passes its suite for the wrong reason: a tool that
crashed, refused with 251 (its answer to a break switch set outside a self-test) or hung is not
a protection switched off. So a cell says which of three things it saw:

- GREEN: the protection acted (the exit code, finding or file the cell names);
- RED: the protected-against thing happened (the job ran, the file stayed, no finding): what the
  break switch is meant to cause;
- BROKEN: anything else, named. A broken cell fails the suite whether or not a switch is on.

``by_exit`` covers the usual tool cell; ``protected`` a pure judgement. Cells return an
``Observed``; a bool is read as green/red for cells not yet converted (tests/swarmgate require every
registered cell to return an Observed).
"""
from __future__ import annotations

GREEN, RED, BROKEN = "green", "red", "broken"


class Observed:
    __slots__ = ("state", "detail")

    def __init__(self, state: str, detail: str = "") -> None:
        self.state = state
        self.detail = detail

    def __repr__(self) -> str:
        return f"Observed({self.state!r}, {self.detail!r})"


def green(detail: str = "") -> Observed:
    return Observed(GREEN, detail)


def red(detail: str = "") -> Observed:
    return Observed(RED, detail)


def broken(detail: str) -> Observed:
    return Observed(BROKEN, detail)


def _codes(x) -> frozenset:
    return frozenset(x) if isinstance(x, (set, frozenset, list, tuple)) else frozenset((int(x),))


def by_exit(code: int | None, green_codes, red_codes, what: str = "", output: str = "") -> Observed:
    """GREEN for an exit code in ``green_codes`` (the protection's), RED for one in ``red_codes``
    (the command went through), BROKEN for any other (a crash, 251, a signal) or None (a timeout)."""
    if code is None:
        return broken(f"{what} did not finish in time".strip())
    if code in _codes(green_codes):
        return green(f"{what} exit {code}".strip())
    if code in _codes(red_codes):
        return red(f"{what} exit {code}".strip())
    tail = " ".join(output.strip().splitlines()[-2:])[-200:] if output else ""
    return broken((f"{what} exit {code}, neither the protection's nor the unprotected one"
                   + (f": {tail}" if tail else "")).strip())


def protected(ok: bool, unprotected: str, detail: str = "") -> Observed:
    """A pure judgement: GREEN when it protects, RED (saying what got through) when it does not."""
    return green(detail) if ok else red(unprotected)


def of(value) -> Observed:
    if isinstance(value, Observed):
        return value
    if value is True:
        return green()
    if value is False:
        return red("(a bool cell: it does not say why)")
    return broken(f"the cell returned {type(value).__name__}, not an Observed")
