"""`swarmgate doctor` for Codex CLI and Gemini CLI: is what install wrote there really in force?

Both clients skip a project's hooks without a word in some states, and let every call through
when a hook fails, so each check here is about one of those silent states:
- the settings file holds swarmgate's groups, calling an existing entry point;
- Codex: the project is trusted (`[projects."<repo>"] trust_level = "trusted"` in
  $CODEX_HOME/config.toml), and Codex itself lists swarmgate's hooks as trusted and enabled
  (asked through `codex app-server`, method `hooks/list`, when a codex binary is found:
  trust is kept per hook hash, so a hook changed by a later install is untrusted again);
- Gemini: folder trust is off, or the repository is trusted in ~/.gemini/trustedFolders.json
  (the longest matching rule wins, as in Gemini), and no swarmgate hook is in `hooks.disabled`;
- the wired PreToolUse/BeforeTool command answers a harmless call in the client's shape;
- the client's version is the one swarmgate was checked against (client_pins.json).
"""
from __future__ import annotations

import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import time
import tomllib

from swarmgate import doctor_check as D
from swarmgate import install as I
from swarmgate.client_install import CONFIG_KEYS, HOOK_GROUPS, SETTINGS, our_group_test
from swarmgate.clients import NAMES, pins


def _settings(repo: str, client: str) -> tuple[str, dict | None, str]:
    """(path, parsed settings or None, error)."""

    path = os.path.join(repo, SETTINGS[client])
    try:
        raw, data = I.load_settings(path, CONFIG_KEYS[client])
    except I.InstallError as e:
        return path, None, str(e)
    if raw is None:
        return path, None, "does not exist"
    return path, data, ""


def _our_commands(repo: str, client: str) -> dict[str, str]:
    """event -> the command of swarmgate's group wired for it."""

    _, data, _ = _settings(repo, client)
    hooks = (data or {}).get("hooks") if isinstance((data or {}).get("hooks"), dict) else {}
    is_ours = our_group_test(client)
    out = {}
    for event, groups in hooks.items():
        for g in groups if isinstance(groups, list) else ():
            if is_ours(g):
                out.setdefault(event, g["hooks"][0]["command"])
    return out


def check_settings(repo: str, client: str) -> D.Check:
    path, data, err = _settings(repo, client)
    fix = f"swarmgate install {shlex.quote(repo)} --client {client}"
    if data is None:
        return D.Check(D.FAIL, f"{path} {err}: {NAMES[client]} runs no swarmgate hook", fix)
    wired = _our_commands(repo, client)
    missing = [event for event, *_ in HOOK_GROUPS[client] if event not in wired]
    if missing:
        return D.Check(D.FAIL, f"{path} lacks swarmgate's hooks for " + ", ".join(missing), fix)
    bad = sorted({shlex.split(cmd)[0] for cmd in wired.values()
                  if not os.path.isabs(shlex.split(cmd)[0]) or not os.access(shlex.split(cmd)[0], os.X_OK)})
    if bad:
        return D.Check(D.FAIL, f"{path} calls a swarmgate that is not an existing absolute executable: "
                       + ", ".join(bad), fix + " (from the swarmgate checkout you use now)")
    return D.Check(D.OK, f"{path} wires {len(wired)} hook groups for {NAMES[client]}")


def client_binary(client: str) -> str | None:
    """The client's executable: SWARMGATE_<CLIENT>_BIN, else the one on PATH."""

    return os.environ.get(f"SWARMGATE_{client.upper()}_BIN") or shutil.which(pins()[client]["bin"])


def check_version(client: str) -> D.Check:
    pin = pins()[client]["version"]
    exe = client_binary(client)
    if not exe:
        return D.Check(D.NOTE, f"{NAMES[client]} not found (set SWARMGATE_{client.upper()}_BIN or put "
                           f"`{pins()[client]['bin']}` on PATH): its version and trust were not checked")
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return D.Check(D.NOTE, f"{exe} --version failed ({e})")
    if pin not in out.split():
        for word in out.split():
            if word.split("-")[-1] == pin:
                break
        else:
            return D.Check(D.NOTE, f"{NAMES[client]} at {exe} is {out!r}; swarmgate was checked against {pin}: a "
                               "changed hook contract lets calls through without a word",
                         f"run swarmgate's contract test against it (docs/clients.md), or install {pin}")
    return D.Check(D.OK, f"{NAMES[client]} {pin} at {exe} (the version swarmgate was checked against)")


# --- Codex trust ---

def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def codex_project_trust(repo: str, config_text: str | None) -> str | None:
    """The trust_level Codex's config gives ``repo`` (its own entry or its realpath's), or None."""

    if config_text is None:
        return None
    try:
        projects = tomllib.loads(config_text).get("projects") or {}
    except tomllib.TOMLDecodeError:
        return None
    for key in (repo, os.path.realpath(repo)):
        entry = projects.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("trust_level"), str):
            return entry["trust_level"]
    return None


def codex_hooks_list(exe: str, repo: str, timeout: float = 30.0) -> tuple[list[dict] | None, list[str], str]:
    """(hooks Codex lists for ``repo``, its config warnings, error) through `codex app-server`."""

    try:
        proc = subprocess.Popen([exe, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=repo, start_new_session=True)
    except OSError as e:
        return None, [], f"cannot start {exe} app-server: {e}"
    warnings: list[str] = []
    try:
        def send(obj: dict) -> None:
            proc.stdin.write((json.dumps(obj) + "\n").encode())
            proc.stdin.flush()

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"clientInfo": {"name": "swarmgate-doctor", "version": "1"}}})
        send({"jsonrpc": "2.0", "method": "initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [repo]}})
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        buf = b""
        while time.monotonic() < deadline:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("method") == "configWarning":
                    warnings.append(str((msg.get("params") or {}).get("summary") or ""))
                if msg.get("id") == 2:
                    if "error" in msg:
                        return None, warnings, f"hooks/list failed: {msg['error']}"
                    data = (msg.get("result") or {}).get("data") or []
                    hooks = [h for entry in data for h in entry.get("hooks") or []]
                    return hooks, warnings, ""
        return None, warnings, f"{exe} app-server did not answer hooks/list within {timeout:.0f} s"
    except OSError as e:
        return None, warnings, f"talking to {exe} app-server failed: {e}"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()


def check_codex_trust(repo: str) -> D.Check:
    """Untrusted project or untrusted hooks: Codex skips swarmgate's hooks without a word."""
    config = os.path.join(codex_home(), "config.toml")
    try:
        with open(config, encoding="utf-8") as f:
            text: str | None = f.read()
    except OSError:
        text = None
    level = codex_project_trust(repo, text)
    trust_fix = (f"run `codex` in {repo} and trust the project, or add [projects.\"{repo}\"] "
                 f"trust_level = \"trusted\" to {config}")
    if level != "trusted":
        return D.Check(D.FAIL, f"Codex does not trust this project ({config}: trust_level "
                           f"{level or 'not set'}): it skips .codex/hooks.json without a word", trust_fix)
    exe = client_binary("codex")
    if not exe:
        return D.Check(D.NOTE, "the project is trusted in Codex's config; whether Codex trusts swarmgate's hooks "
                           "was not checked (no codex binary found)", "open /hooks in codex and trust them")
    hooks, warnings, err = codex_hooks_list(exe, repo)
    if hooks is None:
        return D.Check(D.NOTE, f"the project is trusted; Codex's view of the hooks is unknown ({err})",
                     "open /hooks in codex and check swarmgate's hooks are trusted")
    ours = [h for h in hooks if " --client codex " in str(h.get("command"))
            and ("swarmgate" in str(h.get("command")))]
    if not ours:
        why = next((w for w in warnings if "trusted" in w), "")
        return D.Check(D.FAIL, "Codex lists none of swarmgate's hooks for this repository"
                           + (f" ({why.splitlines()[0]})" if why else ""), trust_fix)
    bad = [f"{h.get('eventName')}: {h.get('trustStatus')}" + ("" if h.get("enabled", True) else ", disabled")
           for h in ours if h.get("trustStatus") not in ("trusted", "managed") or not h.get("enabled", True)]
    if bad:
        return D.Check(D.FAIL, f"Codex skips swarmgate's hooks without a word: {'; '.join(bad)} (trust is kept per "
                           "hook hash: an install that changed a hook needs trusting again)",
                     f"run `codex` in {repo}, open /hooks and trust (and enable) swarmgate's hooks")
    return D.Check(D.OK, f"Codex trusts this project and swarmgate's {len(ours)} hooks")


# --- Gemini trust ---

def gemini_dir() -> str:
    return os.path.join(os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~"), ".gemini")


def gemini_path_trusted(repo: str, rules: dict) -> bool | None:
    """Gemini's own rule: the longest matching rule path decides (TRUST_PARENT covers its parent)."""
    real = os.path.realpath(repo)
    best, level = -1, None
    for rule, value in rules.items():
        effective = os.path.dirname(rule) if value == "TRUST_PARENT" else rule
        eff = os.path.realpath(effective)
        if real == eff or real.startswith(eff.rstrip("/") + "/"):
            if len(rule) > best:
                best, level = len(rule), value
    if level == "DO_NOT_TRUST":
        return False
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True
    return None


def _json_file(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_gemini_trust(repo: str) -> D.Check:
    user = _json_file(os.path.join(gemini_dir(), "settings.json")) or {}
    security = user.get("security") if isinstance(user.get("security"), dict) else {}
    folder = security.get("folderTrust") if isinstance(security.get("folderTrust"), dict) else {}
    if folder.get("enabled", True) is False:
        return D.Check(D.OK, "Gemini's folder trust is off: the project's hooks run")
    path = os.path.join(gemini_dir(), "trustedFolders.json")
    trusted = gemini_path_trusted(repo, _json_file(path) or {})
    if trusted:
        return D.Check(D.OK, f"Gemini trusts this workspace ({path})")
    return D.Check(D.FAIL, f"Gemini does not trust this workspace ({path}: "
                       f"{'DO_NOT_TRUST' if trusted is False else 'no rule'}): it runs none of the project's hooks "
                       "(GEMINI_CLI_TRUST_WORKSPACE=true trusts it for one run only)",
                 f"run `gemini` in {repo} and trust the folder")


def check_gemini_disabled(repo: str) -> D.Check:
    """A hook named in `hooks.disabled` (user or project settings) does not run."""
    wired = _our_commands(repo, "gemini")
    names = {f"swarmgate {event}" for event in wired} | set(wired.values())
    hits = []
    for path in (os.path.join(gemini_dir(), "settings.json"), os.path.join(repo, ".gemini", "settings.json")):
        data = _json_file(path) or {}
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        disabled = hooks.get("disabled") if isinstance(hooks.get("disabled"), list) else []
        hits += [f"{path}: {d}" for d in disabled if d in names]
    if hits:
        return D.Check(D.FAIL, "Gemini is told not to run swarmgate's hooks: " + "; ".join(hits),
                     "remove them from hooks.disabled")
    return D.Check(D.OK, "no swarmgate hook is in Gemini's hooks.disabled")


# --- the wired command answers ---

def check_hook_answers(repo: str, client: str) -> D.Check:
    """Run the wired refusing command as the client would, on a harmless `ls`: a JSON answer
    that lets it through, in the client's shape."""

    event = "PreToolUse" if client == "codex" else "BeforeTool"
    cmd = _our_commands(repo, client).get(event)
    if not cmd:
        return D.Check(D.NOTE, f"{NAMES[client]}'s {event} hook not run (not wired; see above)")
    tool = "Bash" if client == "codex" else "run_shell_command"
    payload = json.dumps({"session_id": "swarmgate-doctor", "transcript_path": None, "cwd": repo,
                          "hook_event_name": event, "tool_name": tool, "tool_input": {"command": "ls"},
                          "tool_use_id": "doctor"})
    t0 = time.monotonic()
    try:
        proc = subprocess.run(["/bin/sh", "-c", cmd], input=payload, capture_output=True, text=True, cwd=repo,
                              timeout=60)
    except subprocess.TimeoutExpired:
        return D.Check(D.FAIL, f"{NAMES[client]}'s {event} hook did not answer within 60 s (past its timeout the "
                           "client lets the call through)", "run `swarmgate doctor` again; report it")
    ms = (time.monotonic() - t0) * 1000
    err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    if proc.returncode != 0:
        return D.Check(D.FAIL, f"{NAMES[client]}'s {event} hook refuses a plain `ls` (exit {proc.returncode}: {err})",
                       f"./install.sh in the swarmgate checkout, then swarmgate install {shlex.quote(repo)} "
                       f"--client {client}")
    try:
        answer = json.loads(proc.stdout)
    except ValueError:
        return D.Check(D.FAIL, f"{NAMES[client]}'s {event} hook printed no JSON ({err})", "report it")
    decision = answer.get("decision") or (answer.get("hookSpecificOutput") or {}).get("permissionDecision")
    if decision in ("deny", "block"):
        reason = answer.get("reason") or answer["hookSpecificOutput"].get("permissionDecisionReason", "")
        return D.Check(D.FAIL, f"{NAMES[client]}'s {event} hook refuses a plain `ls`: {' '.join(reason.split())[:300]}",
                     "fix what the reason names")
    return D.Check(D.OK, f"{NAMES[client]}'s {event} hook answers a plain `ls` in {ms:.0f} ms")


def checks(repo: str, client: str) -> list:
    out = [lambda: check_settings(repo, client), lambda: check_hook_answers(repo, client),
           lambda: check_version(client)]
    if client == "codex":
        out.append(lambda: check_codex_trust(repo))
    if client == "gemini":
        out += [lambda: check_gemini_trust(repo), lambda: check_gemini_disabled(repo)]
    return out
