"""Is swarmgate's enforcement in force in Claude Code, not only written down? (`swarmgate doctor`)

What install wrote into `.claude/settings.json` is only in force when Claude Code runs it. These
checks read what the client reads and what it did (docs/install.md, `swarmgate doctor`):

- the settings sources Claude Code 2.1.332 merges, lowest precedence first: the user's
  (`~/.claude/settings.json`, or `$CLAUDE_CONFIG_DIR/settings.json`), the project's
  (`.claude/settings.json`), the local one (`.claude/settings.local.json`) and the managed ones,
  which always win: `managed-settings.json` and `managed-settings.d/*.json` in the machine's
  policy folder (`/etc/claude-code` on Linux, `/Library/Application Support/ClaudeCode` on macOS,
  `C:\\Program Files\\ClaudeCode` on Windows; `$CLAUDE_CODE_MANAGED_SETTINGS_PATH` names another
  folder). The paths are the binary's own strings (`strings claude.exe`), cross-checked with the
  published settings documentation;
- `disableAllHooks`: the value of the highest source that sets it; true skips every hook that is not
  in managed settings ("they run even under a non-managed disableAllHooks"). A managed document
  setting it true counts whatever a lower source says;
- `allowManagedHooksOnly`: honoured only from managed settings; true skips the project's hooks;
  set anywhere else it is ignored (said, not counted);
- the installed client's version against the oldest one measured to honour `"onFailure": "block"`
  and `CLAUDE_ENV_FILE` (client_pins.json `min_enforcing`);
- each wired hook event answered by the wired command, as the client runs it (a live round trip);
- liveness: a Claude Code session of this repository (a transcript under `~/.claude/projects/`)
  active in the last `[hooks] liveness_days` days, and since the settings were last written, with
  no decision in the log ran without
  swarmgate's hooks; guards that decided nothing in that time are listed (a note: a guard may
  simply have had nothing to judge).

Parsing (``sources``, ``effective``) is apart from judging (the ``check_*`` functions), which
return doctor's checks; the ``data`` of each check is what `swarmgate doctor --json` prints.
"""
from __future__ import annotations

import calendar
import json
import os
import shutil
import subprocess
import sys
import time

from swarmgate import decision_log
from swarmgate import doctor_check as D
from swarmgate.clients import pins
from swarmgate.config import ConfigError, load_config
from swarmgate.hooks import registry
from swarmgate.install import SETTINGS, hook_argv, is_our_group

MANAGED_DIRS = {"linux": "/etc/claude-code", "darwin": "/Library/Application Support/ClaudeCode",
                "win32": "C:\\Program Files\\ClaudeCode"}
MANAGED_ENV = "CLAUDE_CODE_MANAGED_SETTINGS_PATH"
MANAGED = "managed"
HOOK_SWITCHES = ("disableAllHooks", "allowManagedHooksOnly")
DOCTOR_SESSION = "swarmgate-doctor"   # the session of doctor's own calls (not counted as the hooks running)


class Source:
    """One settings file Claude Code reads: its kind (user, project, local, managed), path and content."""
    __slots__ = ("kind", "path", "data", "error")

    def __init__(self, kind: str, path: str, data: dict | None, error: str = "") -> None:
        self.kind, self.path, self.data, self.error = kind, path, data, error


def managed_dir(env=None) -> str:
    env = os.environ if env is None else env
    return env.get(MANAGED_ENV) or MANAGED_DIRS.get(sys.platform, MANAGED_DIRS["linux"])


def user_settings_path(env=None) -> str:
    env = os.environ if env is None else env
    base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
    return os.path.join(base, "settings.json")


def _read(kind: str, path: str) -> Source | None:
    """The file as a Source; None when it does not exist."""
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 20)
    except FileNotFoundError:
        return None
    except OSError as e:
        return Source(kind, path, None, f"cannot be read ({e.strerror or e})")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        return Source(kind, path, None, f"is not valid JSON ({e})")
    if not isinstance(data, dict):
        return Source(kind, path, None, "is not a JSON object")
    return Source(kind, path, data)


def sources(repo: str, env=None) -> list[Source]:
    """The settings files that exist, lowest precedence first (the managed ones last)."""
    folder = managed_dir(env)
    candidates = [("user", user_settings_path(env)), ("project", os.path.join(repo, ".claude", "settings.json")),
                  ("local", os.path.join(repo, ".claude", "settings.local.json")),
                  (MANAGED, os.path.join(folder, "managed-settings.json"))]
    drop_ins = os.path.join(folder, "managed-settings.d")
    try:
        candidates += [(MANAGED, os.path.join(drop_ins, n)) for n in sorted(os.listdir(drop_ins))
                       if n.endswith(".json")]
    except OSError:
        pass
    return [s for s in (_read(kind, path) for kind, path in candidates) if s is not None]


def effective(srcs: list[Source], key: str) -> tuple[bool, str | None, list[str]]:
    """(the value Claude Code uses for the hook switch ``key``, the file that set it, files whose
    setting of it is ignored). Managed settings win; a managed true counts whatever else says;
    allowManagedHooksOnly is read from managed settings only."""
    managed = [s for s in srcs if s.kind == MANAGED and s.data is not None and key in s.data]
    others = [s for s in srcs if s.kind != MANAGED and s.data is not None and key in s.data]
    if key == "allowManagedHooksOnly":
        ignored = [s.path for s in others]
        others = []
    else:
        ignored = []
    on = [s for s in managed if s.data[key] is True]
    if on:
        return True, on[0].path, ignored
    if managed:
        return bool(managed[-1].data[key]), managed[-1].path, ignored
    if others:
        return others[-1].data[key] is True, others[-1].path, ignored
    return False, None, ignored


def _wired_in_managed(srcs: list[Source]) -> bool:
    for s in srcs:
        hooks = (s.data or {}).get("hooks") if s.kind == MANAGED else None
        if isinstance(hooks, dict) and any(is_our_group(g) for gs in hooks.values() if isinstance(gs, list)
                                           for g in gs if isinstance(g, dict)):
            return True
    return False


def check_hook_switches(repo: str, env=None) -> D.Check:
    """disableAllHooks and allowManagedHooksOnly, as the client merges them."""
    srcs = sources(repo, env)
    data: dict = {"managed_dir": managed_dir(env), "sources": [{"kind": s.kind, "path": s.path, "error": s.error}
                                                                for s in srcs]}
    problems, notes = [], []
    in_managed = _wired_in_managed(srcs)
    for key in HOOK_SWITCHES:
        value, where, ignored = effective(srcs, key)
        data[key] = value
        data[key + "_source"] = where
        if ignored:
            notes.append(f"{key} in {', '.join(ignored)} is ignored (Claude Code reads it from managed settings only)")
        spared = in_managed and key == "disableAllHooks" and where not in {s.path for s in srcs if s.kind == MANAGED}
        if value and not spared:   # swarmgate wired in managed settings runs under a non-managed disableAllHooks
            what = ("skips every hook outside managed settings, swarmgate's included" if key == "disableAllHooks"
                    else "runs only the hooks of managed settings: the project's swarmgate hooks are skipped")
            problems.append(f"{where} sets \"{key}\": true: Claude Code {what}")
    unreadable = [f"{s.path} {s.error}" for s in srcs if s.error]
    if unreadable and any(s.kind == MANAGED for s in srcs if s.error):
        problems.append("a managed settings file " + "; ".join(unreadable) + ": Claude Code cannot tell whether "
                        "hooks are allowed")
    elif unreadable:
        notes.append("; ".join(unreadable))
    data["problems"], data["notes"] = problems, notes
    if problems:
        return D.Check(D.FAIL, "hooks NOT in force: " + "; ".join(problems),
                       "remove the key from that file (a managed file: ask its administrator), then start a new "
                       "session", key="hook_switches", enforcing=True, data=data)
    read = ", ".join(f"{s.kind} {s.path}" for s in srcs) or "none"
    return D.Check(D.NOTE if notes else D.OK, "no settings source switches hooks off (disableAllHooks, "
                   f"allowManagedHooksOnly; read: {read})" + (f"; {'; '.join(notes)}" if notes else ""),
                   key="hook_switches", enforcing=True, data=data)


# --- the client's version ---

def _version(text: str) -> tuple[int, ...] | None:
    for word in text.split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts):
            return tuple(int(p) for p in parts)
    return None


def check_client_version(env=None) -> D.Check:
    env = os.environ if env is None else env
    pin = pins()["claude"]
    minimum = pin.get("min_enforcing") or pin["version"]
    exe = env.get("SWARMGATE_CLAUDE_BIN") or shutil.which("claude", path=env.get("PATH"))
    data: dict = {"path": exe, "version": None, "minimum": minimum, "ok": None}
    if not exe:
        return D.Check(D.NOTE, f"claude (Claude Code) not found: its version was not checked against {minimum}, the "
                       "oldest measured to honour \"onFailure\": \"block\" and CLAUDE_ENV_FILE",
                       key="client_version", enforcing=True, data=data)
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30, env=dict(env)).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return D.Check(D.NOTE, f"claude at {exe} did not report a version ({e})", key="client_version",
                       enforcing=True, data=data)
    got = _version(out)
    data["version"] = ".".join(map(str, got)) if got else out.strip()[:100]
    data["ok"] = bool(got and got >= _version(minimum))
    if not data["ok"]:
        return D.Check(D.FAIL, f"Claude Code at {exe} is {data['version']!r}, older than {minimum}, the oldest "
                       "measured to honour \"onFailure\": \"block\" (without it a failing hook lets the call "
                       "through) and CLAUDE_ENV_FILE (the exec-time shims)", f"install Claude Code {pin['version']}",
                       key="client_version", enforcing=True, data=data)
    return D.Check(D.OK, f"Claude Code {data['version']} at {exe} (at least {minimum}: honours \"onFailure\": "
                   "\"block\" and CLAUDE_ENV_FILE)", key="client_version", enforcing=True, data=data)


# --- a live round trip per event ---

def _payload(event: str, matcher: str | None, repo: str) -> dict:
    """A harmless call of ``event`` for the group ``matcher``: nothing refused, nothing started."""
    p: dict = {"session_id": DOCTOR_SESSION, "transcript_path": "", "cwd": repo, "hook_event_name": event}
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PreSkillShellCommand"):
        # every tool group is answered by the same engine; a plain `ls` starts no watchdog and asks nobody
        p.update(tool_name="Bash", tool_input={"command": "ls", "description": "swarmgate doctor"},
                 tool_use_id="swarmgate-doctor")
        if event.startswith("Post"):
            p["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    elif event in ("SubagentStart", "SubagentStop"):
        p.update(agent_id="swarmgate-doctor", agent_type="swarmgate-doctor")
        if event == "SubagentStop":
            p.update(stop_hook_active=True, last_assistant_message="", agent_transcript_path="")
    elif event == "Stop":
        p.update(stop_hook_active=True, last_assistant_message="")
    elif event == "SessionStart":
        p.update(source="resume")
    elif event == "Notification":
        p.update(notification_type="auth_success", message="swarmgate doctor")
    return p


def check_round_trips(repo: str) -> D.Check:
    """Run the command wired for each event once, as Claude Code would, and read its answer."""
    try:
        with open(os.path.join(repo, SETTINGS), encoding="utf-8") as f:
            hooks = json.load(f).get("hooks") or {}
    except (OSError, ValueError, AttributeError):
        return D.Check(D.NOTE, "no round trip: the settings are not readable (see the settings line)",
                       key="round_trips", enforcing=True, data={})
    data: dict = {}
    for event, groups in sorted(hooks.items()):
        ours = [g for g in groups if is_our_group(g) and not g["hooks"][0].get("asyncRewake")] \
            if isinstance(groups, list) else []
        if not ours:
            continue
        group = ours[0]
        argv = hook_argv(group["hooks"][0])
        t0 = time.monotonic()
        try:
            proc = subprocess.run(argv, input=json.dumps(_payload(event, group.get("matcher"), repo)),
                                  capture_output=True, text=True, cwd=repo, timeout=60,
                                  env={**os.environ, "CLAUDE_PROJECT_DIR": repo})
            answer = json.loads(proc.stdout) if proc.returncode == 0 else None
            error = "" if isinstance(answer, dict) else (
                f"exit {proc.returncode}: " + ((proc.stderr.strip().splitlines() or ["no JSON answer"])[-1])[:200])
        except subprocess.TimeoutExpired:
            error = "no answer within 60 s"
        except (OSError, ValueError) as e:
            error = f"{type(e).__name__}: {e}"[:200]
        else:
            decision = ((answer or {}).get("hookSpecificOutput") or {}).get("permissionDecision")
            if not error and (decision == "deny" or (answer or {}).get("decision") == "block"):
                error = "refused a harmless call: " + " ".join(str(
                    answer.get("reason") or answer["hookSpecificOutput"].get("permissionDecisionReason")).split())[:200]
        data[event] = {"ok": not error, "ms": round((time.monotonic() - t0) * 1000, 1), "error": error}
    bad = {e: r["error"] for e, r in data.items() if not r["ok"]}
    if bad:
        return D.Check(D.FAIL, "wired hooks that do not answer: " + "; ".join(f"{e}: {m}" for e, m in bad.items()),
                       f"./install.sh in the swarmgate checkout, then swarmgate install {repo}",
                       key="round_trips", enforcing=True, data=data)
    slowest = max(data.items(), key=lambda kv: kv[1]["ms"], default=("-", {"ms": 0}))
    return D.Check(D.OK, f"every wired event answered ({len(data)} events; slowest {slowest[0]} "
                   f"{slowest[1]['ms']:.0f} ms)", key="round_trips", enforcing=True, data=data)


# --- liveness ---

def project_dir_name(path: str) -> str:
    """Claude Code's folder name for a project under ~/.claude/projects: every character but letters,
    digits and - as -."""
    return "".join(c if c.isalnum() or c == "-" else "-" for c in path)


def _when(rec: dict) -> float:
    t = str(rec.get("time") or "")
    try:
        return calendar.timegm(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return 0.0


def check_liveness(repo: str, env=None, now: float | None = None) -> D.Check:
    now = time.time() if now is None else now
    try:
        days = int(load_config(repo)["hooks"]["liveness_days"])
    except ConfigError:
        days = 14
    since = now - days * 86400
    records = [r for r in decision_log.read(repo) if _when(r) >= since and r.get("session") != DOCTOR_SESSION]
    decided = {str(r.get("session") or "") for r in records}
    folder = os.path.join(os.path.dirname(user_settings_path(env)), "projects",
                          project_dir_name(os.path.realpath(repo)))
    try:   # a session last active before the hooks were wired says nothing about them
        wired_at = os.stat(os.path.join(repo, SETTINGS)).st_mtime
    except OSError:
        wired_at = now
    sessions = []
    try:
        for n in sorted(os.listdir(folder)):
            p = os.path.join(folder, n)
            if n.endswith(".jsonl") and os.path.isfile(p) and os.stat(p).st_mtime >= max(since, wired_at):
                sessions.append(n[:-len(".jsonl")])
    except OSError:
        pass
    unjudged = [s for s in sessions if s not in decided]
    fired = {c for r in records for c in (r.get("codes") or [])}
    silent = sorted({g.code for g in registry.guards()} - fired) if records else []
    data = {"days": days, "decisions": len(records), "sessions": len(sessions),
            "sessions_without_decisions": unjudged, "silent_guards": silent}
    if unjudged:
        return D.Check(D.FAIL, f"{len(unjudged)} of {len(sessions)} Claude Code session(s) of this repository in the "
                       f"last {days} days ran without one swarmgate decision (e.g. {unjudged[0]}): its hooks did not "
                       "run", "see the lines above (hooks switched off, not wired, or wired after the session started)",
                       key="liveness", enforcing=True, data=data)
    what = (f"{len(records)} decisions in the last {days} days ([hooks] liveness_days), every session of this "
            f"repository judged ({len(sessions)} seen)")
    if silent:
        return D.Check(D.NOTE, what + f"; guards with no decision in that time: {', '.join(silent[:20])}"
                       + (" ..." if len(silent) > 20 else ""), key="liveness", enforcing=True, data=data)
    return D.Check(D.OK, what, key="liveness", enforcing=True, data=data)


def checks(repo: str) -> list:
    return [lambda: check_hook_switches(repo), check_client_version, lambda: check_round_trips(repo),
            lambda: check_liveness(repo)]
