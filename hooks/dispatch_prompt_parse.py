"""Pure parsing of a dispatch prompt (the `prompt` of an Agent/Task call).

The dispatch guards (D01 D15 D16 D20) judge what this module reads; nothing
here judges. Labels come from the config's `[dispatch]` section:

    heavy_line              the line every prompt carries   ("heavy test: do not run")
    thread_cap_line         label of the thread cap line    ("thread cap" -> `thread cap: 31`)
    thread_cap_reason_line  label of its justification      ("thread cap reason" -> `thread cap reason: ...`)
    scratch_line            label of a scratch directory    ("scratch" -> `scratch: /work/tmp/x`)

A labelled line may carry a Markdown bullet (`- `, `* `, `1. `) and any
case; the label is followed by optional spaces and a colon (ASCII `:` or
full-width `：`). Placeholders left by `dispatch-prompt` look like
`<task fill in>`: the one format (``PLACEHOLDER_PATTERN``, ``placeholder``, ``find_placeholders``)
is here, and the skeleton printer (agents/dispatch_prompt.py) prints with it, so the printer and
D20 never disagree.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config


# The one placeholder format: `<` + anything but `<`, `>` or a newline + `fill in>`.
PLACEHOLDER_PATTERN = r"<[^<>\n]*fill in>"

_placeholder_re = None


def find_placeholders(text: str) -> list[str]:
    """Every unfilled placeholder in ``text``, in order (empty when all are filled)."""
    global _placeholder_re
    if _placeholder_re is None:
        import re
        _placeholder_re = re.compile(PLACEHOLDER_PATTERN)
    return _placeholder_re.findall(text or "")


def placeholder(what: str) -> str:
    """The placeholder for ``what`` (e.g. ``<task fill in>``)."""
    return f"<{what} fill in>"


def _strip_bullet(line: str) -> str:
    s = line.strip()
    for mark in ("- ", "* ", "+ ", "> "):
        if s.startswith(mark):
            return s[len(mark):].strip()
    i = 0
    while i < len(s) and s[i].isdigit():
        i += 1
    if 0 < i < len(s) - 1 and s[i] in ".)" and s[i + 1] == " ":
        return s[i + 2:].strip()
    return s


def labelled_value(line: str, label: str) -> str | None:
    """The text after `label:` on ``line`` (bullets and case ignored), or None."""
    s = _strip_bullet(line)
    if len(s) < len(label) or s[:len(label)].lower() != label.lower():
        return None
    rest = s[len(label):].lstrip(" \t")
    if rest[:1] not in (":", "："):
        return None
    return rest[1:].strip()


def _unquote(text: str) -> str:
    t = text.strip()
    while len(t) >= 2 and t[0] == t[-1] and t[0] in "`'\"":
        t = t[1:-1].strip()
    return t


class ThreadCap:
    """One `thread cap:` line: its 1-based line number, raw value, parsed integer
    (None unless the value is exactly one integer), and the reason given on the
    next line (None when the next line is not `thread cap reason: ...`)."""
    __slots__ = ("line_no", "raw", "value", "reason")

    def __init__(self, line_no: int, raw: str, value: int | None, reason: str | None) -> None:
        self.line_no = line_no
        self.raw = raw
        self.value = value
        self.reason = reason

    def __repr__(self) -> str:
        return f"ThreadCap(line {self.line_no}: {self.raw!r} -> {self.value!r}, reason={self.reason!r})"


class ParsedPrompt:
    __slots__ = ("has_heavy_line", "thread_caps", "scratch", "placeholders")

    def __init__(self, has_heavy_line: bool, thread_caps: list, scratch: list, placeholders: list) -> None:
        self.has_heavy_line = has_heavy_line
        self.thread_caps = thread_caps
        self.scratch = scratch
        self.placeholders = placeholders


def parse_int(raw: str) -> int | None:
    """The integer when ``raw`` is exactly one integer (quotes/backticks allowed), else None."""
    t = _unquote(raw)
    if t.isascii() and t.isdigit():
        return int(t)
    return None


def parse(prompt: str, *, heavy_line: str, thread_cap_line: str, thread_cap_reason_line: str,
          scratch_line: str) -> ParsedPrompt:
    lines = prompt.splitlines()
    want_heavy = " ".join(heavy_line.split())
    has_heavy = False
    caps: list[ThreadCap] = []
    scratch: list[str] = []
    for i, line in enumerate(lines):
        s = _strip_bullet(line)
        if " ".join(_unquote(s).split()) == want_heavy:
            has_heavy = True
        cap = labelled_value(line, thread_cap_line)
        if cap is not None:
            reason = None
            if i + 1 < len(lines):
                r = labelled_value(lines[i + 1], thread_cap_reason_line)
                if r is not None:
                    reason = r
            caps.append(ThreadCap(i + 1, cap, parse_int(cap), reason))
        path = labelled_value(line, scratch_line)
        if path is not None:
            p = _unquote(path)
            if p:
                scratch.append(p)
    holes = find_placeholders(prompt)
    return ParsedPrompt(has_heavy, caps, scratch, holes)


def parse_with_config(prompt: str, config: Config) -> ParsedPrompt:
    d = config["dispatch"]
    return parse(prompt, heavy_line=d["heavy_line"], thread_cap_line=d["thread_cap_line"],
                 thread_cap_reason_line=d["thread_cap_reason_line"], scratch_line=d["scratch_line"])


def prompt_digest(prompt: str) -> str:
    """A stable digest of a prompt (whitespace at the ends ignored): links a dispatch to the
    agent whose transcript starts with it."""
    from swarmgate.digest import sha256_hex
    return sha256_hex(prompt.strip().encode("utf-8", "replace"))[:32]
