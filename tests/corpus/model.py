"""The corpus' shape: one entry = class, command, the files it needs, what must happen.

Consumers: tests/corpus/corpus_test.py (reading: every workaround refused for a subagent,
every benign and real-world command passing every Bash guard), and the execution harness
of the enforcement-in-depth layers (which runs the allowed commands for real and counts
the heavy stand-ins they reach). ``CONFIG`` is the repository config every entry runs under;
``HEAVY_TARGETS`` names the stand-in programs a heavy run would start.
"""
from __future__ import annotations

CONFIG = """\
[heavy]
patterns = ["cargo test --workspace", "cargo test --all", "make check-full", "bash .claude/gate.d/*",
            "qemu-system-*", "herd7", "pytest tests/slow", "playwright test"]
[scope]
verify_patterns = []
[bash]
make_targets = ["replay"]
[write]
main = ["**"]
implementer = ["**"]
"""

# what each heavy pattern starts, for a harness that plants stand-ins
HEAVY_TARGETS = ("cargo", "make", "bash .claude/gate.d/", "qemu-system-x86_64", "herd7", "pytest", "playwright")


class Entry:
    """``expect``: "refuse" (B01 for a subagent: a heavy run read, or unverifiable) or "pass"
    (every Bash guard passes, main agent and subagent). ``files``: created in a fresh
    repository (the command's cwd) first; ``*.sh`` and ``.git/hooks/*`` are made executable;
    ``git_init`` makes the repository a git repository first."""
    __slots__ = ("cls", "command", "files", "expect", "source", "git_init", "note")

    def __init__(self, cls: str, command: str, files: dict | None = None, expect: str = "refuse",
                 source: str = "", git_init: bool = False, note: str = "") -> None:
        self.cls = cls
        self.command = command
        self.files = files or {}
        self.expect = expect
        self.source = source
        self.git_init = git_init
        self.note = note

    def __repr__(self) -> str:
        return f"{self.cls}: {self.command[:80]!r}"

    def as_dict(self) -> dict:
        return {"class": self.cls, "command": self.command, "files": self.files, "expect": self.expect,
                "source": self.source, "git_init": self.git_init, "note": self.note}
