"""`swarmgate install PATH [--client claude|codex|gemini]... [--uninstall] [--git-hook] [--dry-run]` (SPEC §2).

Wires a repository:
- merges swarmgate's hook entries into PATH/.claude/settings.json (and, with
  --client, into Codex CLI's .codex/hooks.json and Gemini CLI's
  .gemini/settings.json: swarmgate.client_install) as matcher
  groups of its own (never merged into the user's groups), keeping every
  other hook, permission and env entry; a second run changes nothing (the
  file stays byte-identical); a changed file is backed up first
  (settings.json.swarmgate-backup-<time>);
- copies the templates shipped in ``swarmgate.rules`` (swarmgate.toml,
  main-agent.md, agent-common.md, rules/*.md, agents/*.md) into PATH/.claude/,
  never overwriting a file the user changed; the hashes of what it wrote are
  kept in PATH/.claude/.swarmgate-manifest.json;
- ``--uninstall`` removes exactly what install added: its hook groups (each
  settings file goes back byte for byte to what it was before, when the user
  has not changed it since) and, once no client is left wired, the templates
  the user did not change.

Every hook entry calls the installed entry point by absolute path in the
exec form (`command` + `args`: no shell between Claude Code and the hook),
with an explicit timeout from the config's [hooks] section. Every group
where a refusing guard runs carries `"onFailure": "block"`: a hook that
cannot start (a deleted venv), crashes, times out or prints no valid JSON
then blocks the call instead of letting it through (Claude Code 2.1.332;
the client ignores it on Stop and SubagentStop). `permissions.deny` rules
(PERMISSION_DENY) are a second line for what must never happen, enforced by
the client itself even where no hook runs; uninstall removes exactly the
rules install added.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
import tomllib
from collections.abc import Sequence
from typing import Any

from swarmgate.clients import CLIENTS

import swarmgate.rules
from swarmgate import claude_md, client_install
from swarmgate.config import ConfigError, parse_toml, validate
from swarmgate.front_door import entry
from swarmgate.hook_wiring import is_our_group
from swarmgate.hook_wiring import is_our_hook as _is_our_hook  # noqa: F401 - the name older callers use
from swarmgate.hook_protocol import ALIASES
from swarmgate.gate import git_hook
from swarmgate.hooks import registry
from swarmgate.install_plan import (InstallError, Plan, hook_program, load_settings, read_bytes, unwire_settings,
                                    wire_settings)
from swarmgate.tool_parser import ToolParser

MANIFEST = ".claude/.swarmgate-manifest.json"
SETTINGS = ".claude/settings.json"


# (event, matcher or None, timeout key in [hooks]) — one group of ours each.
# Guards route by tool: D* on Agent|Task, B*/R01/T01 on Bash|Monitor, G01/W01 on
# the file tools, M01 on SendMessage, T01 on CronCreate|ScheduleWakeup.
HOOK_GROUPS: tuple[tuple[str, str | None, str], ...] = (
    ("PreToolUse", "Agent|Task", "timeout"),
    ("PreToolUse", "Bash|Monitor", "report_timeout"),
    ("PreToolUse", "Write|Edit|MultiEdit|NotebookEdit", "timeout"),
    ("PreToolUse", "Read|Grep", "timeout"),   # K01: no subagent reads a secret file
    ("PreToolUse", "SendMessage", "timeout"),
    ("PreToolUse", "CronCreate|ScheduleWakeup", "timeout"),
    ("PreToolUse", "AskUserQuestion|ExitPlanMode", "timeout"),   # Q01: a subagent does not ask a person
    ("PreToolUse", "PowerShell", "timeout"),   # B40: a PowerShell command cannot be read here
    ("PreToolUse", "mcp__.*", "report_timeout"),   # MCP tools: [mcp] tools judged as writers, runners, askers
    ("PostToolUse", "Bash|Monitor", "timeout"),
    ("PostToolUse", "Agent|Task", "timeout"),
    ("PostToolUse", "mcp__.*", "timeout"),   # K03: key-shaped strings in an MCP tool's output redacted
    ("PostToolUseFailure", "Bash|Monitor", "timeout"),  # P01: failed commands (exit != 0) come only here
    ("SessionStart", None, "timeout"),
    ("SubagentStart", None, "timeout"),
    ("SubagentStop", None, "timeout"),
    ("Stop", None, "timeout"),
    ("Notification", None, "timeout"),   # N01: a client waiting for a person becomes an alert
    ("PreSkillShellCommand", None, "report_timeout"),   # a skill's shell command: the Bash guards
    ("TaskCreated", None, "timeout"),    # A02: agent teams, counted by D07
    ("TaskCompleted", None, "timeout"),
    ("TeammateIdle", None, "timeout"),
)

# template (relative to the rules package) -> destination (relative to the repository)
_TOP_TEMPLATES = (
    ("swarmgate.toml", ".claude/swarmgate.toml"),
    ("main-agent.md", ".claude/main-agent.md"),
    ("agent-common.md", ".claude/agent-common.md"),
)
_DIR_TEMPLATES = (("rules", ".claude/rules"), ("agents", ".claude/agents"))
# keeps the repository's decision log and caches out of git
GITIGNORE = (".swarmgate/.gitignore", "# written by swarmgate install: the decision log and caches stay local\n*\n")


# The client's own rules, a second line behind the hooks for what must never happen (they hold
# even when no hook runs). Edit(...) rules cover every built-in file-writing tool; a leading /
# is the project root. Checked against the real client in tests/e2e/fail_closed_e2e_test.py.
PERMISSION_DENY: tuple[str, ...] = (
    "Edit(/.claude/settings*.json)",
    "Edit(/.claude/swarmgate.toml)",
    "Bash(git commit --no-verify*)",
    "Bash(git commit * --no-verify)",
    "Bash(git commit * --no-verify *)",
    "Bash(git commit -n *)",
    "Bash(git commit * -n)",
    "Bash(git commit * -n *)",
)


# --- where things are ---

def entry_point() -> str:
    """Absolute path of the installed `swarmgate` console script."""
    here = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "swarmgate")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which("swarmgate")
    if found:
        return os.path.abspath(found)
    raise InstallError("cannot find the installed `swarmgate` entry point next to "
                       f"{sys.executable} or on PATH; run ./install.sh first")


def templates_dir() -> str:
    return os.path.dirname(os.path.abspath(swarmgate.rules.__file__))


def templates() -> list[tuple[str, str]]:
    """(source file, destination relative to the repository) for every shipped template."""
    src = templates_dir()
    out = []
    for name, dest in _TOP_TEMPLATES:
        path = os.path.join(src, name)
        if os.path.isfile(path):
            out.append((path, dest))
    for sub, dest_dir in _DIR_TEMPLATES:
        d = os.path.join(src, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".md") and os.path.isfile(os.path.join(d, name)):
                out.append((os.path.join(d, name), f"{dest_dir}/{name}"))
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- settings.json ---

def hook_command(entry: str, event: str) -> str:
    """The shell form of a hook command (what installs before the exec form wrote; for messages)."""
    return f"{shlex.quote(entry)} hook {event}"


def hook_entry(entry: str, event: str, timeout: int, refusing: bool) -> dict[str, Any]:
    """One hook handler in the exec form: `command` is the executable, `args` its arguments
    (``hook_program``)."""
    command, lead = hook_program(entry)
    h: dict[str, Any] = {"type": "command", "command": command, "args": [*lead, event], "timeout": timeout}
    if refusing:
        h["onFailure"] = "block"
    return h


def refusing_group(event: str, matcher: str | None) -> bool:
    """Whether a refusing (non-advisory) guard runs in the group for (event, matcher)."""
    if event in ALIASES:   # judged as another event: a skill's shell command as a Bash call
        event, matcher = ALIASES[event], matcher or "Bash"
    if matcher == "mcp__.*":   # an MCP tool listed in [mcp] tools is judged as Write, Bash or AskUserQuestion
        matcher = "Write|Bash|AskUserQuestion"
    tools = set(matcher.split("|")) if matcher else None
    for g in registry.guards():
        if g.advisory or event not in g.events:
            continue
        if tools is None or not g.tools or tools & set(g.tools):
            return True
    return False


# The wake waiter (agents/wake.py): a second Stop group, run in the background by Claude Code
# (asyncRewake), that wakes the idle main agent when a reminder falls due or swarm-watch reports.
# Its timeout is a little longer than the longest it waits (wake.MAX_WAIT_S).
WAKE_GROUP = ("Stop", "Wake", 6 * 3600 + 60)


def wake_entry(entry: str) -> dict[str, Any]:
    h = hook_entry(entry, WAKE_GROUP[1], WAKE_GROUP[2], refusing=False)
    h["asyncRewake"] = True
    return h


def desired_groups(entry: str, hooks_cfg: dict) -> dict[str, list[dict]]:
    """event -> the matcher groups swarmgate owns, in order."""
    out: dict[str, list[dict]] = {}
    for event, matcher, timeout_key in HOOK_GROUPS:
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        group["hooks"] = [hook_entry(entry, event, int(hooks_cfg[timeout_key]), refusing_group(event, matcher))]
        out.setdefault(event, []).append(group)
    out.setdefault(WAKE_GROUP[0], []).append({"hooks": [wake_entry(entry)]})
    return out


def hook_argv(h: dict[str, Any]) -> list[str]:
    """The argv Claude Code runs for a command hook: the exec form as is, the shell form through sh."""
    args = h.get("args")
    if isinstance(args, list):
        return [str(h.get("command", "")), *map(str, args)]
    return ["/bin/sh", "-c", str(h.get("command", ""))]


def hook_executable(h: dict[str, Any]) -> str:
    """The program a command hook starts (the first word of the shell form)."""
    if isinstance(h.get("args"), list):
        return str(h.get("command", ""))
    words = shlex.split(str(h.get("command", "")))
    return words[0] if words else ""


# --- manifest ---

def load_manifest(repo: str) -> dict:
    path = os.path.join(repo, MANIFEST)
    raw = read_bytes(path)
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise InstallError(f"{path}: not valid JSON ({e}); it records what swarmgate installed — "
                           "restore it from git or delete it (then uninstall removes only the hook entries)") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: expected a JSON object; restore it or delete it")
    return data


def _dump_manifest(data: dict) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()


# --- the plan: what install / uninstall would do ---

def _hooks_config(repo: str, pending_toml: bytes | None) -> dict:
    """[hooks] of the repository's config (the one about to be written, if any)."""
    if pending_toml is not None:
        try:
            raw = tomllib.loads(pending_toml.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise InstallError(f"the shipped swarmgate.toml template is not valid TOML: {e}") from None
        try:
            return validate(raw, "swarmgate.toml (template)")["hooks"]
        except ConfigError as e:
            raise InstallError(str(e)) from None
    path = os.path.join(repo, ".claude", "swarmgate.toml")
    if not os.path.exists(path):
        return validate({})["hooks"]
    try:
        return validate(parse_toml(path), path)["hooks"]  # not load_config: no cache written here
    except ConfigError as e:
        raise InstallError(f"{e} (fix the config, then run install again; nothing was written)") from None


def plan_install(repo: str, entry: str, clients: Sequence[str] = ("claude",)) -> Plan:
    """What `swarmgate install` writes: the templates, and the hooks of each client in ``clients``."""
    plan = Plan(repo, entry)
    manifest = load_manifest(repo)
    files: dict[str, str] = dict(manifest.get("files") or {})
    pending_toml: bytes | None = None

    for src, rel in [*templates(), (None, GITIGNORE[0])]:
        data = GITIGNORE[1].encode() if src is None else read_bytes(src) or b""
        dest = os.path.join(repo, rel)
        cur = read_bytes(dest)
        if cur is None:
            plan.writes.append((rel, data))
            files[rel] = _sha(data)
            plan.say("wrote", rel)
            if rel == ".claude/swarmgate.toml":
                pending_toml = data
        elif cur == data:
            continue  # already what we ship (ours or the user's identical copy)
        elif rel in files and _sha(cur) == files[rel]:
            plan.writes.append((rel, data))  # ours, unchanged by the user: update to the new template
            files[rel] = _sha(data)
            plan.say("updated", rel)
            if rel == ".claude/swarmgate.toml":
                pending_toml = data
        else:
            plan.say("skipped", f"{rel} (changed by you; the shipped version is {src or 'built in'})")

    hooks_cfg = _hooks_config(repo, pending_toml)
    settings = dict(manifest.get("settings") or {})
    if "claude" in clients:
        settings = wire_settings(plan, SETTINGS, desired_groups(entry, hooks_cfg), settings,
                                 deny_rules=PERMISSION_DENY)
    others = dict(manifest.get("clients") or {})
    for client in clients:
        if client != "claude":
            others[client] = client_install.plan_wire(plan, client, hooks_cfg, others.get(client))

    new_manifest = {"version": 1, "entry_point": entry, "files": files, "settings": settings}
    if others:
        new_manifest["clients"] = others
    if "claude" in clients:   # the main agent's rules: an import line in CLAUDE.md (swarmgate.claude_md)
        content, record = claude_md.wire(read_bytes(os.path.join(repo, claude_md.PATH)), manifest.get("claude_md"))
        if content is not None:
            plan.writes.append((claude_md.PATH, content))
            plan.say("wired", f"{claude_md.PATH}: {claude_md.IMPORT} (the main agent's rules)")
        if record:
            new_manifest["claude_md"] = record
    elif manifest.get("claude_md"):
        new_manifest["claude_md"] = manifest["claude_md"]
    if plan.writes and new_manifest != manifest:
        plan.writes.append((MANIFEST, _dump_manifest(new_manifest)))
    return plan


def wired_clients(repo: str, manifest: dict | None = None) -> list[str]:
    """The clients whose settings in ``repo`` hold swarmgate's hooks (or that the manifest records)."""
    manifest = load_manifest(repo) if manifest is None else manifest
    out = []
    for client in CLIENTS:
        if client == "claude":
            recorded = bool(manifest.get("settings"))
            try:
                _, data = load_settings(os.path.join(repo, SETTINGS))
                hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
                present = any(isinstance(gs, list) and any(is_our_group(g) for g in gs) for gs in hooks.values())
            except InstallError:
                present = False
        else:
            recorded = client in (manifest.get("clients") or {})
            present = client_install.wired(repo, client)
        if recorded or present:
            out.append(client)
    return out


def plan_uninstall(repo: str, clients: Sequence[str] | None = None) -> Plan:
    """What `swarmgate install --uninstall` removes: the hooks of ``clients`` (default: every client
    wired), and the templates and the manifest once no client is left wired."""
    plan = Plan(repo)
    manifest = load_manifest(repo)
    wired = wired_clients(repo, manifest)
    targets = list(wired if clients is None else clients)
    if "claude" in targets:
        unwire_settings(plan, SETTINGS, manifest.get("settings"))
        _unwire_claude_md(plan, manifest.get("claude_md"))
    others = dict(manifest.get("clients") or {})
    for client in targets:
        if client != "claude":
            client_install.plan_unwire(plan, client, others.pop(client, None))
    left = [c for c in wired if c not in targets]
    if left:
        # other clients stay wired: they need the config and the templates; the manifest forgets the rest
        plan.say("kept", "the config and templates (still wired: " + ", ".join(left) + ")")
        rest = dict(manifest)
        if "claude" in targets:
            rest["settings"] = {}
            rest.pop("claude_md", None)
        if others:
            rest["clients"] = others
        else:
            rest.pop("clients", None)
        if rest != manifest:
            plan.writes.append((MANIFEST, _dump_manifest(rest)))
        return plan
    for rel, sha in sorted((manifest.get("files") or {}).items()):
        cur = read_bytes(os.path.join(repo, rel))
        if cur is None:
            continue
        if _sha(cur) == sha:
            plan.removes.append(rel)
            plan.say("removed", rel)
        else:
            plan.say("kept", f"{rel} (changed by you)")
    cache_dir = os.path.join(repo, ".swarmgate", "cache")  # the hooks' caches (config, guard routes)
    if os.path.isdir(cache_dir) and not os.path.islink(cache_dir):
        for name in sorted(os.listdir(cache_dir)):
            if os.path.isfile(os.path.join(cache_dir, name)):
                plan.removes.append(f".swarmgate/cache/{name}")
    if manifest:
        plan.removes.append(MANIFEST)
    return plan


def _unwire_claude_md(plan: Plan, record: dict | None) -> None:
    """CLAUDE.md without the import install added: as it was before, byte for byte, when nothing
    else changed; removed when install created it and nothing else is in it."""
    raw = read_bytes(os.path.join(plan.repo, claude_md.PATH))
    if not record or raw is None:
        return
    content = claude_md.unwire(raw, record)
    if content is None:
        plan.removes.append(claude_md.PATH)
        plan.say("removed", f"{claude_md.PATH} (swarmgate created it)")
    elif content != raw:
        plan.writes.append((claude_md.PATH, content))
        plan.say("unwired", f"{claude_md.PATH}: swarmgate's import of the main agent's rules removed, the rest kept")


def _git_hook(repo: str, uninstall: bool, dry_run: bool) -> tuple[str, bool]:
    if dry_run:
        return "git pre-commit hook: would be " + ("removed" if uninstall else "installed"), True
    func = getattr(git_hook, "uninstall" if uninstall else "install", None)
    if func is None:
        return f"git pre-commit hook: this build cannot {'uninstall' if uninstall else 'install'} it", False
    try:
        return str(func(repo)), True
    except git_hook.HookError as e:  # not a git repository, or a foreign hook in the way: say so, no traceback
        return f"git pre-commit hook: {e}", False


@entry("install")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(
        prog="swarmgate install",
        description="Wire swarmgate into a repository: hook entries in each client's settings "
                    "(.claude/settings.json, .codex/hooks.json, .gemini/settings.json), the config "
                    ".claude/swarmgate.toml, rule and agent templates.")
    p.add_argument("path", metavar="PATH", help="the repository to wire")
    p.add_argument("--client", action="append", default=None, metavar="NAME",
                   help="the coding-agent client to wire: claude (default), codex, gemini; give it several "
                        "times (or NAME,NAME) for several. With --uninstall: only these (default: every one wired)")
    p.add_argument("--uninstall", action="store_true", help="remove exactly what install added")
    p.add_argument("--git-hook", action="store_true",
                   help="also install (or remove) a git pre-commit hook running gate-staged")
    p.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
    args = p.parse_args(argv)

    clients: list[str] = []
    for item in args.client or ():
        for name in item.split(","):
            name = name.strip().lower()
            if name not in CLIENTS:
                p.error(f"--client {name!r}: choose from {', '.join(CLIENTS)}")
            if name not in clients:
                clients.append(name)

    repo = os.path.abspath(args.path)
    if not os.path.isdir(repo):
        print(f"swarmgate install: {repo} is not a directory (give the repository to wire)", file=sys.stderr)
        return 1
    for sub in (".claude", ".swarmgate", ".codex", ".gemini"):
        if os.path.lexists(os.path.join(repo, sub)) and not os.path.isdir(os.path.join(repo, sub)):
            print(f"swarmgate install: {os.path.join(repo, sub)} exists and is not a directory; "
                  "move it away, nothing was written", file=sys.stderr)
            return 1
    try:
        if args.uninstall:
            plan = plan_uninstall(repo, clients or None)
        else:
            plan = plan_install(repo, entry_point(), clients or ("claude",))
    except InstallError as e:
        print(f"swarmgate install: {e}", file=sys.stderr)
        return 1
    head = "swarmgate " + ("uninstall" if args.uninstall else "install") + f": {repo}"
    if args.dry_run:
        head += " (dry run: nothing written)"
    print(head)
    for line in plan.lines:
        print(line)
    if not args.dry_run:
        try:
            plan.apply()
        except OSError as e:
            print(f"swarmgate install: could not write in {repo}: {e}", file=sys.stderr)
            return 1
    rc = 0
    if args.git_hook:
        msg, ok = _git_hook(repo, args.uninstall, args.dry_run)
        print("  " + msg)
        rc = 0 if ok else 1
    if not args.uninstall and not args.dry_run:
        for client in clients:
            for step in client_install.next_steps(client, repo):
                print("  once, by you: " + step)
        print("  check it with: " + _tools_for_the_shell() + " doctor " + shlex.quote(repo))
    return rc


def _tools_for_the_shell() -> str:
    """swarmgate's tools directory made (the agents' PATH gets it at SessionStart) and given to the
    user's shell (swarmgate.tools_dir); print what was done, return how to call `swarmgate` now."""
    from swarmgate import tools_dir  # noqa: PLC0415 - only install gives the shell the tools

    try:
        d = tools_dir.ensure(os.path.dirname(entry_point()))
    except (OSError, InstallError) as e:
        print(f"  tools      not linked: {e}; the agents' PATH gets them at each session start")
        return "swarmgate"
    print(f"  tools      {d} (on the agents' PATH from each session start, after the exec-time shims)")
    lines, swarmgate_cmd = tools_dir.for_the_shell(d)
    for line in lines:
        print("  " + line)
    return swarmgate_cmd
