"""The main agent's rules in its context: the import lines `swarmgate install` adds to the
repository's CLAUDE.md (SPEC §13), and their exact removal.

Claude Code reads CLAUDE.md at the project root into every session and follows `@path` imports in
it, so ``@.claude/main-agent.md`` gives the main agent its rules from the first request on. A
subagent is given CLAUDE.md too (Claude Code has no per-agent switch), so the line before the import
says whose rules they are; each subagent gets its own at its start (agent-common.md, C02).

Pure functions over bytes: ``wire`` returns the new content and the manifest's record, ``unwire``
the content without what install added (None: remove the file), byte for byte as it was before
when nothing else changed since.
"""
from __future__ import annotations

PATH = "CLAUDE.md"
IMPORT = "@.claude/main-agent.md"
BLOCK = ("The main agent's rules follow (a subagent follows the rules it was given at its start instead):\n"
         f"{IMPORT}\n")


def _has_import(text: str) -> bool:
    return any(line.strip() == IMPORT for line in text.splitlines())


def wire(raw: bytes | None, record: dict | None) -> tuple[bytes | None, dict | None]:
    """(new content or None when nothing changes, the record to keep) for CLAUDE.md now ``raw``."""
    if raw is not None and _has_import(raw.decode("utf-8", "surrogateescape")):
        return None, record   # in place: ours from an earlier install, or the user's own line
    if raw is None:
        return BLOCK.encode(), {"created": True}
    text = raw.decode("utf-8", "surrogateescape")
    eol = "\r\n" if "\r\n" in text else "\n"
    added = ("" if not text or text.endswith("\n") else eol) + BLOCK.replace("\n", eol)
    return (text + added).encode("utf-8", "surrogateescape"), {"appended": added}


def unwire(raw: bytes, record: dict) -> bytes | None:
    """CLAUDE.md without what install added (``record``); None: install created it and it holds
    nothing else, remove it. What the user changed around the lines stays."""
    text = raw.decode("utf-8", "surrogateescape")
    added = BLOCK if record.get("created") else str(record.get("appended") or "")
    if added and text.endswith(added):
        rest = text[:-len(added)]
        return None if record.get("created") and not rest else rest.encode("utf-8", "surrogateescape")
    if added and added.lstrip("\r\n") in text:   # moved or followed by the user's own lines: cut just ours
        text = text.replace(added.lstrip("\r\n"), "", 1)
        return text.encode("utf-8", "surrogateescape")
    kept = [ln for ln in text.splitlines(keepends=True) if ln.strip() != IMPORT]   # the import alone
    return "".join(kept).encode("utf-8", "surrogateescape")
