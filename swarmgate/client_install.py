"""Wiring Codex CLI and Gemini CLI into a repository (`swarmgate install PATH --client codex|gemini`).

The same contract as the Claude Code install (swarmgate.install; both plan with
swarmgate.install_plan): swarmgate's hook groups are merged into the client's project settings file
as groups of their own (never into the user's), every other key stays; a second run changes nothing;
a changed file is backed up first; the state before the first install is kept in the manifest, so
uninstall puts the file back byte for byte when nothing else changed since (or removes it, when
install created it).

- Codex CLI 0.169.0 reads `<repo>/.codex/hooks.json` (root keys `hooks` and `description` only;
  handler `timeout` in seconds) — for a trusted project and trusted hooks only (docs/clients.md);
- Gemini CLI 0.61.0 reads `<repo>/.gemini/settings.json` `hooks` (handler `timeout` in
  milliseconds; `hooks.enabled`/`disabled`/`notifications` are settings, not events) — in a
  trusted workspace only.

Neither client has onFailure: a hook that crashes, is not found or prints no JSON lets the call
through. So each refusing group's command ends in a shell fallback that turns any failure of
the hook into exit 2 with a reason on stderr, the one answer both clients treat as a refusal
without any JSON. The hook itself answers within the configured timeout (the engine keeps its
own budget below it), because a timeout lets the call through too.
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Any

from swarmgate import install_plan as P

# client -> settings file (relative to the repository), keys of `hooks` that are not events
SETTINGS = {"codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}
CONFIG_KEYS = {"codex": (), "gemini": ("enabled", "disabled", "notifications")}

# (client's event, matcher or None, timeout key in [hooks], refuses tool calls) — one group of ours each.
# Codex: PreToolUse on every tool (the shell tool, apply_patch, write_stdin and spawn_agent are
# judged; an unknown tool costs one quick answer, and no new shell-like tool slips past).
# Gemini: matchers are regular expressions (unanchored there: anchored here).
HOOK_GROUPS: dict[str, tuple[tuple[str, str | None, str, bool], ...]] = {
    "codex": (
        ("PreToolUse", None, "report_timeout", True),
        ("PostToolUse", "^(Bash|spawn_agent)$", "timeout", False),
        ("SessionStart", None, "timeout", False),
        ("SubagentStart", None, "timeout", False),
        ("SubagentStop", None, "timeout", False),
        ("Stop", None, "timeout", False),
    ),
    "gemini": (
        ("BeforeTool", "^(run_shell_command|write_file|replace|invoke_agent|read_file|grep_search)$",
         "report_timeout", True),
        ("AfterTool", "^run_shell_command$", "timeout", False),
        ("SessionStart", None, "timeout", False),
        ("AfterAgent", None, "timeout", False),
        ("Notification", None, "timeout", False),   # N01: waiting for a person becomes an alert
    ),
}

# what a refusing group's command does when the hook itself fails (not found, crashed, killed)
_FALLBACK = ('{ echo "swarmgate: the hook failed (exit $?) and could not judge this call: refused '
             '(fail closed). Run: swarmgate doctor" >&2; exit 2; }')


def hook_command(entry: str, client: str, event: str, refuses: bool, program: tuple | None = None) -> str:
    """The shell command of one hook: the program Claude Code's hooks start too (install_plan.hook_program:
    the venv's interpreter on swarmgate/hook_start.py at the interpreter's floor, else the console
    script ``entry``), then `--client CLIENT EVENT`. A refusing hook that cannot run refuses (exit
    2). Under Gemini any other hook that cannot run exits 1, Gemini's "warning" code: there every
    exit code but 0 and 1 is a refusal, and a refused AfterAgent makes the agent retry, forever when
    the hook can never run (measured with a deleted entry point)."""
    command, lead = program or (entry, ["hook"])
    cmd = " ".join(shlex.quote(w) for w in (command, *lead)) + f" --client {client} {event}"
    if refuses:
        return f"{cmd} || {_FALLBACK}"
    return f"{cmd} || exit 1" if client == "gemini" else cmd


def _timeout(client: str, seconds: int) -> int:
    return seconds * 1000 if client == "gemini" else seconds  # Gemini counts in milliseconds


def desired_groups(client: str, entry: str, hooks_cfg: dict) -> dict[str, list[dict]]:
    """event -> the matcher groups swarmgate owns in ``client``'s settings, in order."""
    out: dict[str, list[dict]] = {}
    for event, matcher, timeout_key, refuses in HOOK_GROUPS[client]:
        group: dict[str, Any] = {}
        if matcher is not None:
            group["matcher"] = matcher
        handler: dict[str, Any] = {"type": "command",
                                   "command": hook_command(entry, client, event, refuses, P.hook_program(entry)),
                                   "timeout": _timeout(client, int(hooks_cfg[timeout_key]))}
        if client == "gemini":
            handler["name"] = f"swarmgate {event}"
        group["hooks"] = [handler]
        out.setdefault(event, []).append(group)
    return out


def _our_command(client: str) -> re.Pattern:
    """The console script (`.../swarmgate hook`) or the interpreter on hook_start.py
    (`.../python3 -I -S .../swarmgate/hook_start.py`), then `--client CLIENT EVENT` and a fallback."""
    start = (r"(?:(?:^|/|')swarmgate'? hook|(?:^|/|')python[0-9.]*'? -I -S "
             r"(?:'[^']*/swarmgate/hook_start\.py'|/\S*/swarmgate/hook_start\.py))")
    return re.compile(start + " --client " + client + r" [A-Za-z]+(?: \|\| (?:\{ .*\}|exit 1))?$")


def our_group_test(client: str):
    """A predicate: is this matcher group one swarmgate wrote into ``client``'s settings?"""
    pattern = _our_command(client)
    group_keys = {"matcher", "hooks", "sequential"}
    handler_keys = {"type", "command", "timeout", "name"}

    def is_ours(group: Any) -> bool:
        if not isinstance(group, dict) or not set(group) <= group_keys:
            return False
        hooks = group.get("hooks")
        if not isinstance(hooks, list) or not hooks:
            return False
        for h in hooks:
            if not isinstance(h, dict) or h.get("type") != "command" or not set(h) <= handler_keys:
                return False
            cmd = h.get("command")
            if not isinstance(cmd, str) or not pattern.search(cmd.strip()):
                return False
        return True
    return is_ours


def wired(repo: str, client: str) -> bool:
    """Does ``client``'s settings file in ``repo`` hold any group of swarmgate's?"""
    try:
        _, data = P.load_settings(os.path.join(repo, SETTINGS[client]), CONFIG_KEYS[client])
    except P.InstallError:
        return False
    hooks = data.get("hooks")
    is_ours = our_group_test(client)
    return isinstance(hooks, dict) and any(
        isinstance(groups, list) and any(is_ours(g) for g in groups) for groups in hooks.values())


def plan_wire(plan: P.Plan, client: str, hooks_cfg: dict, record: dict | None) -> dict:
    """Add to ``plan`` what wires ``client``; return its manifest record."""
    return P.wire_settings(plan, SETTINGS[client], desired_groups(client, plan.entry, hooks_cfg), record,
                           our_group_test(client), CONFIG_KEYS[client])


def plan_unwire(plan: P.Plan, client: str, record: dict | None) -> None:
    """Add to ``plan`` what removes swarmgate's groups from ``client``'s settings."""
    P.unwire_settings(plan, SETTINGS[client], record, our_group_test(client), CONFIG_KEYS[client])


# --- what a person does once (printed by install, written in docs/clients.md) ---

def next_steps(client: str, repo: str) -> list[str]:
    if client == "codex":
        return [
            f"Codex loads .codex/hooks.json only for a trusted project and trusted hooks: once, run `codex` in "
            f"{repo}, trust the project when asked (or add [projects.\"{repo}\"] trust_level = \"trusted\" to "
            "~/.codex/config.toml), then open /hooks and trust swarmgate's hooks. Do it again after an install "
            "that changed them (Codex trusts each hook by its hash). `swarmgate doctor` checks both.",
        ]
    if client == "gemini":
        return [
            f"Gemini runs the hooks of .gemini/settings.json only in a trusted workspace: once, run `gemini` in "
            f"{repo} and trust the folder (it lands in ~/.gemini/trustedFolders.json). Never start it with "
            "--skip-trust there: that skips the project's hooks without a word. `swarmgate doctor` checks it.",
        ]
    return []
