"""One line of `swarmgate doctor`: a status (ok, note, FAIL), what was found, and the fix.

Its own module so that swarmgate.doctor and the checks it runs (swarmgate.client_doctor,
swarmgate.enforcement) all build them without importing each other."""
from __future__ import annotations

OK, NOTE, FAIL = "ok", "note", "FAIL"


class Check:
    """One check's verdict. ``key``: its stable name in `--json`; ``enforcing``: a FAIL means swarmgate's
    hooks are not in force (exit 78); ``data``: the facts behind it, printed by `--json`."""
    __slots__ = ("status", "what", "fix", "key", "enforcing", "data")

    def __init__(self, status: str, what: str, fix: str = "", *, key: str = "", enforcing: bool = False,
                 data: dict | None = None) -> None:
        self.status = status
        self.what = what
        self.fix = fix
        self.key = key
        self.enforcing = enforcing
        self.data = data

    def line(self) -> str:
        text = f"{self.status:<4} {self.what}"
        if self.fix and self.status != OK:
            text += f" — fix: {self.fix}"
        return text
