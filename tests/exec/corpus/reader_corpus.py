"""The bash reader's corpus (tests/corpus/, owned by "reader") as execution-harness cases: its
workarounds run as a subagent would type them, its benign commands as controls, under its own
config, in a world where its heavy targets leave markers (stand-ins for qemu, herd7 and
playwright; gate scripts and the `check-full` / `replay` recipes instrumented, see
tests/exec/harness/world.py). Its real-world sample is read by the reader's own test; here it
would add hours and no exec-time case (a real-world command the shims refuse is one the
reading refuses first)."""
from __future__ import annotations

from tests.corpus import benign, model, workarounds


def config() -> str:
    return model.CONFIG


def cases() -> list[dict]:
    out = []
    seen: dict = {}
    for kind, entries in (("workaround", workarounds.ENTRIES), ("control", benign.ENTRIES)):
        for e in entries:
            cls = e.cls if kind == "workaround" else "control:" + e.cls
            n = seen.get(cls, 0) + 1
            seen[cls] = n
            slug = "".join(c if c.isalnum() else "-" for c in cls)
            out.append({"id": f"reader-{slug}-{n:02d}", "class": cls, "kind": kind, "agent": "sub",
                        "command": e.command, "files": dict(e.files), "instrument": True, "linger": 2.0})
    return out
