"""Which hook entries are swarmgate's, and whether a project's settings wire swarmgate for a call.

`swarmgate install` writes its hook groups into .claude/settings.json (install.py); the plugin's
hooks (plugin/hooks/hooks.json) call `hook_start.py --plugin EVENT`. When both are there, every
call would be judged twice (two decisions, two log lines, two acts). So a hook started by the
plugin first asks ``settings_wire`` whether the project's settings already run swarmgate for this
event and tool; if they do, it defers to them: it answers nothing and records nothing
(docs/plugin.md). Light at import: the plugin's hook asks this before loading the engine.

Claude Code takes its hooks from the settings when a session starts. Settings that wire swarmgate
only since then (`swarmgate install` during a session that runs the plugin alone) are not run by
that session, so the plugin defers only to a settings file older than the client process
(``loaded_by_client``): otherwise the session's calls would be judged by nobody.
"""
from __future__ import annotations

import os

from swarmgate import fast_json
from swarmgate.bounded_read import read_bytes
from swarmgate.lazy_pattern import LazyPattern

HOOK_START_FLAGS = ["-I", "-S"]   # isolated, no site: the interpreter's floor (swarmgate/hook_start.py)
HOOK_START = "/swarmgate/hook_start.py"
OUR_HOOK_KEYS = {"type", "command", "args", "timeout", "onFailure", "asyncRewake"}   # asyncRewake: the wake waiter
_SHELL_FORM = LazyPattern(r"(?:^|/|')swarmgate'? hook [A-Za-z]+$")   # what installs before the exec form wrote
SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")
SETTINGS_MAX_BYTES = 1 << 20


def _python_name(name: str) -> bool:
    """python, python3, python3.11 (the interpreter of a virtual environment)."""
    return name.startswith("python") and name[6:].replace(".", "").isdigit() or name == "python"


def is_our_hook(h: object) -> bool:
    """A hook handler swarmgate's install wrote: the interpreter on hook_start.py, the console
    script `swarmgate hook EVENT` (exec form), or the shell form older installs wrote."""
    if not isinstance(h, dict) or h.get("type") != "command" or not set(h) <= OUR_HOOK_KEYS:
        return False
    cmd = h.get("command")
    if not isinstance(cmd, str):
        return False
    args = h.get("args")
    if args is None:  # the shell form
        return bool(_SHELL_FORM.search(cmd.strip()))
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args) and args and args[-1].isalpha()
            and os.path.isabs(cmd)):
        return False
    if len(args) == 2:   # the console script: ENTRY hook EVENT
        return args[0] == "hook" and os.path.basename(cmd) == "swarmgate"
    # the interpreter on hook_start.py: PYTHON -I -S /abs/swarmgate/hook_start.py EVENT
    return (len(args) == 4 and args[:2] == HOOK_START_FLAGS and os.path.isabs(args[2])
            and args[2].endswith(HOOK_START) and _python_name(os.path.basename(cmd)))


def is_our_group(group: object) -> bool:
    """A group swarmgate wrote: only `matcher` and `hooks`, every hook one of ours."""
    if not isinstance(group, dict) or not set(group) <= {"matcher", "hooks"}:
        return False
    hooks = group.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        return False
    return all(is_our_hook(h) for h in hooks)


_EXACT_MATCHER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-|, ")


def _covers(group: dict, tool: str | None) -> bool:
    """Whether ``group``'s matcher selects ``tool``, as Claude Code reads a matcher: empty or "*"
    every tool; letters, digits, `_`, `-`, spaces, `,` and `|` only: exact names; anything else
    (`mcp__.*`): a regular expression, unanchored."""
    matcher = group.get("matcher")
    if matcher in (None, "", "*"):
        return True
    if tool is None or not isinstance(matcher, str):
        return False
    if set(matcher) <= _EXACT_MATCHER:
        return tool in {name.strip() for name in matcher.replace(",", "|").split("|")}
    import re
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def settings_wire(project_dir: str, event: str, tool: str | None) -> str | None:
    """The settings file (relative) of ``project_dir`` that runs swarmgate for (event, tool), or None.
    A file that cannot be read or parsed wires nothing (the plugin then judges the call itself)."""
    for rel in SETTINGS_FILES:
        try:
            data = fast_json.loads(read_bytes(os.path.join(project_dir, rel), SETTINGS_MAX_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        if isinstance(groups, list) and any(is_our_group(g) and _covers(g, tool) for g in groups):
            return rel
    return None


def process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch, to the clock tick), or None."""
    import time

    from swarmgate.procinfo import start_time
    ticks = start_time(pid)
    if ticks is None:
        return None
    return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME) + ticks / os.sysconf("SC_CLK_TCK")


def loaded_by_client(project_dir: str, rel: str) -> bool:
    """Whether the client that started this hook (its parent: Claude Code starts a hook in the exec
    form) can have loaded the settings file ``rel`` as it is now: the file was last changed before
    the client started. Unknown (no parent, a file that cannot be stat'ed) is False: the plugin
    then judges the call itself, so a call is judged twice at worst, never by nobody."""
    started = process_start(os.getppid())
    try:
        changed = os.stat(os.path.join(project_dir, rel), follow_symlinks=False).st_mtime
    except OSError:
        return False
    return started is not None and changed < started
