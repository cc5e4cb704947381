"""What an install or an uninstall would write, for every client's settings file: the plan of
writes, removals and backups (``Plan``, applied only when nothing failed), the JSON settings read
tolerantly (``load_settings``), swarmgate's hook groups and deny rules merged in and taken out
(``wire_settings``, ``unwire_settings``: the manifest record makes uninstall exact), and the
program the hooks call (``hook_program``).

swarmgate/install.py wires Claude Code with it, swarmgate/client_install.py Codex CLI and Gemini CLI;
both import this module, and it imports neither.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Sequence

import swarmgate
from swarmgate.hook_entry import search_path
from swarmgate.hook_wiring import HOOK_START_FLAGS, is_our_group

BACKUP_MARK = ".swarmgate-backup-"


class InstallError(Exception):
    """Installing cannot go on; the message names the file and the fix."""


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_bytes(path: str, data: bytes) -> None:
    if os.path.islink(path):
        path = os.path.realpath(path)  # the user's own symlinked file: write through to it
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.swarmgate-tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def hook_program(entry: str) -> tuple[str, list[str]]:
    """(command, the arguments before the event) of the hooks this install wires.

    When ``entry`` is this install's own entry point in a virtual environment (a regular install,
    pipx, `uv tool`, or a development install): its interpreter with -I -S on
    swarmgate/hook_start.py, which puts exactly the package and the venv's site-packages on the
    path, skipping `site` (docs/install.md, "The hook's speed"). Otherwise (an install outside a
    virtual environment, whose site-packages only `site` knows) the `swarmgate` console script."""
    python = sys.executable
    start = os.path.join(os.path.dirname(os.path.abspath(swarmgate.__file__)), "hook_start.py")
    if (sys.prefix != sys.base_prefix and os.path.isabs(python) and os.path.isfile(start)
            and os.path.dirname(entry) == os.path.dirname(python)):
        _, site_packages = search_path(start, python, sys.version_info)
        if site_packages is None or os.path.isdir(site_packages):
            return python, [*HOOK_START_FLAGS, start]
    return entry, ["hook"]


def load_settings(path: str, config_keys: Sequence[str] = ()) -> tuple[bytes | None, dict]:
    """(raw bytes or None when absent, parsed object). InstallError names the file when malformed.

    ``config_keys``: keys of `hooks` that are settings, not events (Gemini CLI's `enabled`,
    `disabled`, `notifications`): they are not lists of matcher groups and are left alone."""
    raw = read_bytes(path)
    if raw is None:
        return None, {}
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except UnicodeDecodeError as e:
        raise InstallError(f"{path}: not UTF-8 ({e}); fix or move it away, nothing was written") from None
    except ValueError as e:
        raise InstallError(f"{path}: not valid JSON ({e}); fix or move it away, nothing was written") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: expected a JSON object at the top, found a {type(data).__name__}; "
                           "fix or move it away, nothing was written")
    hooks = data.get("hooks")
    if hooks is not None:
        if not isinstance(hooks, dict):
            raise InstallError(f"{path}: `hooks` is a {type(hooks).__name__}, expected an object "
                               "(event -> list of matcher groups); nothing was written")
        for event, groups in hooks.items():
            if not isinstance(groups, list) and event not in config_keys:
                raise InstallError(f"{path}: `hooks.{event}` is a {type(groups).__name__}, expected a list "
                                   "of matcher groups; nothing was written")
    perms = data.get("permissions")
    if perms is not None:
        if not isinstance(perms, dict):
            raise InstallError(f"{path}: `permissions` is a {type(perms).__name__}, expected an object; "
                               "nothing was written")
        deny = perms.get("deny")
        if deny is not None and not isinstance(deny, list):
            raise InstallError(f"{path}: `permissions.deny` is a {type(deny).__name__}, expected a list of "
                               "rules; nothing was written")
    return raw, data


def merge_hooks(data: dict, wanted: dict[str, list[dict]], is_ours=None) -> dict:
    """A copy of ``data`` with our groups replaced by ``wanted``; user groups untouched, in place.

    Our groups for an event go where the first of our old groups stood (so a
    re-run keeps the order), else at the end of that event's list. ``is_ours`` tells
    our groups (default: Claude Code's, ``is_our_group``).
    """
    ours = is_ours or is_our_group
    new = json.loads(json.dumps(data))
    hooks = new.setdefault("hooks", {})
    for event, groups in wanted.items():
        old = hooks.get(event, [])
        at = next((i for i, g in enumerate(old) if ours(g)), None)
        kept = [g for g in old if not ours(g)]
        if at is None:
            merged = kept + groups
        else:
            before = sum(1 for g in old[:at] if not ours(g))
            merged = kept[:before] + groups + kept[before:]
        hooks[event] = merged
    return new


def merge_deny(data: dict, rules: Sequence[str]) -> tuple[dict, list[str]]:
    """A copy of ``data`` with every rule of ``rules`` in `permissions.deny` (missing ones appended,
    the user's own rules untouched and in place), and the rules that were added."""
    new = json.loads(json.dumps(data))
    perms = new.setdefault("permissions", {})
    deny = perms.setdefault("deny", [])
    added = [r for r in rules if r not in deny]
    deny.extend(added)
    return new, added


def strip_deny(data: dict, added: Sequence[str], created_permissions_key: bool = False,
               created_deny_key: bool = False) -> dict:
    """A copy of ``data`` without the deny rules install added; a `deny` list (and `permissions`)
    install created is dropped when nothing else is left in it."""
    new = json.loads(json.dumps(data))
    perms = new.get("permissions")
    if not isinstance(perms, dict) or not isinstance(perms.get("deny"), list):
        return new
    ours = set(added)
    perms["deny"] = [r for r in perms["deny"] if r not in ours]
    if not perms["deny"] and created_deny_key:
        del perms["deny"]
    if not perms and created_permissions_key:
        del new["permissions"]
    return new


def strip_hooks(data: dict, created_events: Sequence[str] = (), created_hooks_key: bool = False,
                is_ours=None) -> dict:
    """A copy of ``data`` without our groups; event lists (and `hooks`) we created are dropped when empty."""
    ours = is_ours or is_our_group
    new = json.loads(json.dumps(data))
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = [g for g in groups if not ours(g)]
        if len(kept) != len(groups):
            hooks[event] = kept
            if not kept and event in created_events:
                del hooks[event]
    if not hooks and created_hooks_key:
        del new["hooks"]
    return new


def _indent_of(raw: bytes | None) -> int | str:
    """The indentation the user's file uses (2 when unknown), so a rewrite looks like theirs."""
    if raw:
        m = re.search(rb"\n([ \t]+)\S", raw)
        if m:
            ws = m.group(1)
            return "\t" if ws.startswith(b"\t") else len(ws)
    return 2


def dump_settings(data: dict, indent: int | str = 2) -> bytes:
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def backup_path(path: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    cand = f"{path}{BACKUP_MARK}{stamp}"
    n = 1
    while os.path.lexists(cand):
        cand = f"{path}{BACKUP_MARK}{stamp}-{n}"
        n += 1
    return cand


# --- the plan: what install / uninstall would do ---

class Plan:
    """Writes and removals computed first, applied only when nothing failed (and not on --dry-run)."""

    def __init__(self, repo: str, entry: str = "") -> None:
        self.repo = repo
        self.entry = entry  # the swarmgate entry point the hooks call
        self.writes: list[tuple[str, bytes]] = []    # (relative path, content)
        self.removes: list[str] = []                  # relative paths
        self.backups: list[tuple[str, str]] = []      # (source, backup) absolute
        self.lines: list[str] = []

    def say(self, verb: str, what: str) -> None:
        self.lines.append(f"  {verb:<10} {what}")

    def apply(self) -> None:
        for src, dest in self.backups:
            shutil.copy2(src, dest)
        for rel, data in self.writes:
            write_bytes(os.path.join(self.repo, rel), data)
        for rel in self.removes:
            try:
                os.unlink(os.path.join(self.repo, rel))
            except FileNotFoundError:
                pass
        # directories swarmgate made that are empty now
        for rel in (".claude/rules", ".claude/agents", ".swarmgate/cache", ".swarmgate", ".claude", ".codex",
                    ".gemini"):
            d = os.path.join(self.repo, rel)
            if self.removes and os.path.isdir(d) and not os.listdir(d):
                os.rmdir(d)


def wire_settings(plan: Plan, rel: str, wanted: dict[str, list[dict]], record: dict | None, is_ours=None,
                  config_keys: Sequence[str] = (), deny_rules: Sequence[str] = ()) -> dict:
    """Add to ``plan`` what merges our ``wanted`` groups (and ``deny_rules`` into permissions.deny)
    into the settings file ``rel``; return its manifest record: the state before swarmgate first
    touched the file, for an exact uninstall, and the deny rules install added."""
    path = os.path.join(plan.repo, rel)
    raw, data = load_settings(path, config_keys)
    new = merge_hooks(data, wanted, is_ours)
    added_deny: list[str] = []
    if deny_rules:
        new, added_deny = merge_deny(new, deny_rules)
    record = dict(record or {})
    if new == data and raw is not None:
        plan.say("unchanged", f"{rel} (swarmgate's hooks{' and deny rules' if deny_rules else ''} already in place)")
        return record
    old_hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else None
    old_perms = data.get("permissions") if isinstance(data.get("permissions"), dict) else None
    created = set(new["hooks"]) - set(old_hooks or {})
    if "before" not in record:
        # the state before swarmgate first touched the file, for an exact uninstall
        record = {"before": None if raw is None else raw.decode("utf-8"),
                  "created_hooks_key": old_hooks is None, "created_events": sorted(created)}
    else:  # a newer swarmgate may wire events the last install did not
        record["created_events"] = sorted(set(record.get("created_events") or ()) | created)
    if added_deny:  # the deny rules this install adds (a rule the user already had stays theirs)
        record["added_deny"] = sorted(set(record.get("added_deny") or ()) | set(added_deny))
        if old_perms is None:
            record["created_permissions_key"] = True
        if old_perms is None or "deny" not in old_perms:
            record["created_deny_key"] = True
    if raw is not None:
        backup = backup_path(path)
        plan.backups.append((path, backup))
        plan.say("backup", os.path.relpath(backup, plan.repo))
    plan.writes.append((rel, dump_settings(new, _indent_of(raw))))
    plan.say("wired", f"{rel}: {sum(len(g) for g in wanted.values())} hook groups calling {plan.entry}")
    if added_deny:
        plan.say("denied", f"{rel}: {len(added_deny)} permissions.deny rules (a second line behind the hooks)")
    return record


def unwire_settings(plan: Plan, rel: str, record: dict | None, is_ours=None, config_keys: Sequence[str] = ()) -> None:
    """Add to ``plan`` what removes our groups and deny rules from the settings file ``rel``: the
    exact bytes of before install when nothing else changed since (or no file, when install created
    it), else only what install added, after a backup."""
    path = os.path.join(plan.repo, rel)
    raw, data = load_settings(path, config_keys)
    if raw is None:
        return
    record = record or {}
    stripped = strip_deny(strip_hooks(data, record.get("created_events") or (), bool(record.get("created_hooks_key")),
                                      is_ours),
                          record.get("added_deny") or (), bool(record.get("created_permissions_key")),
                          bool(record.get("created_deny_key")))
    before = record.get("before", False)
    try:
        before_data = ({} if before is None or (isinstance(before, str) and not before.strip())
                       else json.loads(before) if isinstance(before, str) else False)
    except ValueError:
        before_data = False
    if stripped == data:
        plan.say("unchanged", f"{rel} (no swarmgate hooks in it)")
    elif before_data is not False and stripped == before_data:
        # nothing else changed since install: put back the user's exact bytes
        if before is None:
            plan.removes.append(rel)
            plan.say("removed", f"{rel} (swarmgate created it)")
        else:
            plan.writes.append((rel, before.encode("utf-8")))
            plan.say("restored", f"{rel} (byte for byte as it was before install)")
    else:
        plan.backups.append((path, backup_path(path)))
        plan.writes.append((rel, dump_settings(stripped, _indent_of(raw))))
        plan.say("unwired", f"{rel}: swarmgate's hook groups{' and deny rules' if record.get('added_deny') else ''} "
                            "removed, the rest kept")
