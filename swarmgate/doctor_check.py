"""One line of `swarmgate doctor`: a status (ok, note, FAIL), what was found, and the fix.

Its own module so that swarmgate.doctor and the client checks it runs (swarmgate.client_doctor)
both build them without importing each other."""
from __future__ import annotations

OK, NOTE, FAIL = "ok", "note", "FAIL"


class Check:
    __slots__ = ("status", "what", "fix")

    def __init__(self, status: str, what: str, fix: str = "") -> None:
        self.status = status
        self.what = what
        self.fix = fix

    def line(self) -> str:
        text = f"{self.status:<4} {self.what}"
        if self.fix and self.status != OK:
            text += f" — fix: {self.fix}"
        return text
