"""`swarmgate doctor [PATH]`: is this machine and repository wired correctly?

For each client wired in the repository (Claude Code; Codex CLI and Gemini CLI with the
checks of swarmgate.client_doctor: their trust states that skip hooks without a word).

Each check prints one line, `ok`, `note` (optional part missing) or `FAIL`
with the fix; `--json` prints one object instead. Whether the hooks are really in force in Claude
Code (settings sources, the client's version, a round trip per event, liveness) is
swarmgate.enforcement's. Exit 78 when they are not (SPEC §9's "a run condition is not met": the
configuration stops them), 1 for any other failure, 0 when all is good.
"""
from __future__ import annotations

import importlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence

from swarmgate import client_doctor, enforcement
from swarmgate.config import ConfigError, find_repo, load_config
from swarmgate.hosts_config import load_hosts_config
from swarmgate.doctor_check import FAIL, NOTE, OK, Check
from swarmgate.front_door import entry
from swarmgate.hooks import registry
from swarmgate.install import (
    HOOK_GROUPS,
    PERMISSION_DENY,
    SETTINGS,
    InstallError,
    entry_point,
    hook_argv,
    hook_executable,
    is_our_group,
    refusing_group,
    wired_clients,
)
from swarmgate.state_paths import STATE_ENV, state_dir
from swarmgate.statefile import StateError, ensure_dir, write_text_atomic
from swarmgate.tool_parser import ToolParser

def check_python() -> Check:
    v = sys.version_info
    if v < (3, 11):
        return Check(FAIL, f"python {v.major}.{v.minor} at {sys.executable}", "swarmgate needs Python 3.11+")
    return Check(OK, f"python {v.major}.{v.minor}.{v.micro} at {sys.executable}")


def check_entry_point() -> Check:
    try:
        path = entry_point()
    except InstallError as e:
        return Check(FAIL, "the `swarmgate` entry point", str(e))
    return Check(OK, f"entry point {path}")


def check_settings(repo: str) -> Check:
    path = os.path.join(repo, SETTINGS)
    fix = f"swarmgate install {shlex.quote(repo)}"
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return Check(FAIL, f"{path} does not exist: the hooks are not wired", fix)
    except (ValueError, UnicodeDecodeError) as e:
        return Check(FAIL, f"{path} is not valid JSON ({e})", "fix the file by hand, then " + fix)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return Check(FAIL, f"{path} has no `hooks`: swarmgate is not wired", fix)
    missing = []
    bad_paths: set[str] = set()
    no_timeout = 0
    fail_open = []
    for event, matcher, _ in HOOK_GROUPS:
        groups = [g for g in hooks.get(event) or [] if is_our_group(g) and g.get("matcher") == matcher]
        name = f"{event}" + (f" [{matcher}]" if matcher else "")
        if not groups:
            missing.append(name)
            continue
        for h in groups[0]["hooks"]:
            exe = hook_executable(h)
            if not os.path.isabs(exe) or not os.access(exe, os.X_OK):
                bad_paths.add(exe)
            if not isinstance(h.get("timeout"), int):
                no_timeout += 1
            if h.get("onFailure") != "block" and refusing_group(event, matcher):
                fail_open.append(name)
    if missing:
        return Check(FAIL, f"{path} lacks swarmgate's hooks for " + ", ".join(missing), fix)
    if bad_paths:
        return Check(FAIL, f"{path} calls a swarmgate that is not an existing absolute executable: "
                     + ", ".join(sorted(bad_paths)), fix + " (from the swarmgate checkout you use now)")
    if no_timeout:
        return Check(FAIL, f"{path}: {no_timeout} swarmgate hook entries have no timeout", fix)
    if fail_open:
        return Check(FAIL, f"{path}: the hooks for {', '.join(sorted(set(fail_open)))} lack `\"onFailure\": "
                     "\"block\"`: a hook that crashes, cannot start or times out lets the call through", fix)
    perms = data.get("permissions") if isinstance(data.get("permissions"), dict) else {}
    deny = perms.get("deny") if isinstance(perms.get("deny"), list) else []
    lacking = [r for r in PERMISSION_DENY if r not in deny]
    if lacking:
        return Check(FAIL, f"{path}: permissions.deny lacks {len(lacking)} of swarmgate's rules "
                     f"(e.g. {lacking[0]}), the second line behind the hooks", fix)
    return Check(OK, f"{path} wires {len(HOOK_GROUPS)} hook groups (failing hooks block) and "
                 f"{len(PERMISSION_DENY)} deny rules")


def check_hook_answers(repo: str) -> Check:
    """Run the wired Bash hook command, as Claude Code would, on a harmless `ls`."""
    try:
        with open(os.path.join(repo, SETTINGS), encoding="utf-8") as f:
            hooks = json.load(f).get("hooks") or {}
        argv = next(hook_argv(g["hooks"][0]) for g in hooks.get("PreToolUse") or []
                    if is_our_group(g) and g.get("matcher") == "Bash|Monitor")
    except (OSError, ValueError, AttributeError, StopIteration, KeyError, IndexError, TypeError):
        return Check(NOTE, "hook not run (the Bash hook is not wired; see the settings line above)")
    cmd = shlex.join(argv[2:] if argv[:2] == ["/bin/sh", "-c"] else argv)
    payload = json.dumps({"session_id": "swarmgate-doctor", "transcript_path": "", "cwd": repo,
                          "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "ls", "description": "swarmgate doctor"}})
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, input=payload, capture_output=True, text=True, cwd=repo,
                              env={**os.environ, "CLAUDE_PROJECT_DIR": repo}, timeout=60)
    except subprocess.TimeoutExpired:
        return Check(FAIL, f"the hook `{cmd}` did not answer within 60 s", "run `swarmgate doctor` again; report it")
    except OSError as e:
        return Check(FAIL, f"the hook `{cmd}` cannot start ({e})",
                     f"./install.sh in the swarmgate checkout, then swarmgate install {shlex.quote(repo)}")
    ms = (time.monotonic() - t0) * 1000
    try:
        answer = json.loads(proc.stdout)
    except ValueError:
        answer = None
    if proc.returncode != 0 or not isinstance(answer, dict):
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return Check(FAIL, f"the hook `{cmd}` exited {proc.returncode} without a JSON answer ({err})",
                     f"./install.sh in the swarmgate checkout, then swarmgate install {shlex.quote(repo)}")
    decision = (answer.get("hookSpecificOutput") or {}).get("permissionDecision")
    if decision == "deny":
        reason = answer["hookSpecificOutput"].get("permissionDecisionReason", "").splitlines()
        return Check(FAIL, f"the hook refuses a plain `ls`: {' '.join(reason)[:300]}", "fix what the reason names")
    return Check(OK, f"the Bash hook answers a plain `ls` in {ms:.0f} ms")


def check_config(repo: str) -> Check:
    try:
        cfg = load_config(repo)
    except ConfigError as e:
        return Check(FAIL, f"config: {e}", "correct the named key in the file (docs: rules/swarmgate.toml)")
    if cfg.path is None:
        return Check(NOTE, f"no {os.path.join(repo, '.claude', 'swarmgate.toml')}: the defaults apply",
                     f"swarmgate install {shlex.quote(repo)} writes a commented one")
    # what the hook reads is the file itself: re-parse it with tomllib and compare
    try:
        with open(cfg.path, "rb") as f:
            full = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        return Check(FAIL, f"config {cfg.path} reads differently with tomllib ({e})", "report it")
    if full != cfg.raw:
        return Check(FAIL, f"config {cfg.path}: the hook's reading differs from tomllib's", "report it")
    return Check(OK, f"config {cfg.path} is valid; hooks read it afresh on every call (no cache), "
                 "and tomllib reads it the same")


def check_state_caches(repo: str) -> Check:
    """Nothing a hook decides with comes from a writable cache: the route table is code, checked
    against the guards here; caches older versions kept in the repository are named (never read)."""
    gaps = registry.route_table_gaps()
    if gaps:
        return Check(FAIL, "the guard route table would skip guards: " + "; ".join(gaps[:5]),
                     "reinstall swarmgate (the table in hooks/registry.py does not match the guard modules)")
    legacy = [n for n in ("config.json", "guard-routes.json")
              if os.path.lexists(os.path.join(repo, ".swarmgate", "cache", n))]
    if legacy:
        return Check(NOTE, f"route table matches every guard; .swarmgate/cache/{', '.join(legacy)} left by an "
                     "older swarmgate: nothing reads it",
                     f"rm {shlex.quote(os.path.join(repo, '.swarmgate', 'cache'))}/*")
    return Check(OK, "route table matches every guard module; no cache decides what a hook enforces")


def check_hosts_config() -> Check:
    try:
        hc = load_hosts_config()
    except ConfigError as e:
        return Check(FAIL, f"machine config: {e}", "correct the named key")
    if hc.path is None:
        return Check(OK, "machine config: none (this host only, cross-machine switch off)")
    return Check(OK, f"machine config {hc.path} is valid ({len(hc.peers)} peers)")


def check_state_dir() -> Check:
    d = str(state_dir())
    probe = os.path.join(d, f".doctor-{os.getpid()}")
    try:
        ensure_dir(d)
        write_text_atomic(probe, "ok\n")
        os.unlink(probe)
    except (OSError, StateError) as e:
        return Check(FAIL, f"state directory {d} is not writable ({e})",
                     f"make it writable, or point {STATE_ENV} at a directory that is")
    return Check(OK, f"state directory {d} is writable")


def cgroup_backend(config_backend: str = "auto") -> tuple[str | None, str]:
    """(backend name or None, what was found) for run-with-memory-cap on this machine."""
    found = []
    try:
        with open("/proc/1/comm") as f:
            pid1 = f.read().strip()
    except OSError:
        pid1 = ""
    if pid1 == "systemd" and shutil.which("systemd-run"):
        found.append("systemd")
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            if "memory" in f.read().split() and os.access("/sys/fs/cgroup", os.W_OK):
                found.append("cgroup2")
    except OSError:
        pass
    if os.path.isdir("/sys/fs/cgroup/memory") and os.access("/sys/fs/cgroup/memory", os.W_OK):
        found.append("cgroup1")
    if config_backend != "auto":
        return (config_backend if config_backend in found else None), ", ".join(found) or "none"
    return (found[0] if found else None), ", ".join(found) or "none"


def check_cgroup(repo: str) -> Check:
    try:
        wanted = load_config(repo)["memory"]["backend"]
    except ConfigError:
        wanted = "auto"
    backend, found = cgroup_backend(wanted)
    if backend is None:
        return Check(FAIL, f"no usable cgroup backend for run-with-memory-cap (wanted {wanted}; found: {found})",
                     "run as a user who may create cgroups (systemd as PID 1, a delegated cgroup v2 subtree "
                     "with the memory controller, or a writable /sys/fs/cgroup/memory); "
                     "without one the runner refuses to run (exit 251), never uncapped")
    return Check(OK, f"cgroup backend {backend} (available: {found})")


def check_containment(repo: str) -> Check:
    """Whether subagents' commands can run in their own containment cgroups here (X02): one line."""
    try:
        config = load_config(repo)
    except ConfigError:
        return Check(NOTE, "subagent containment not checked: the config does not load (see above)")
    if config.guard_mode("X02") == "off":
        return Check(NOTE, "subagent containment is switched off ([guards] X02 = \"off\")")
    from swarmgate.hosts import agent_cgroups  # noqa: PLC0415 - only doctor makes a probe cgroup

    line = agent_cgroups.probe(config)
    if line is None:
        try:
            cap, cpus = agent_cgroups.sizes(config)
        except ValueError as e:
            return Check(FAIL, f"subagents are NOT contained: {e}", "set [memory] total or lower [memory] margin")
        return Check(OK, f"subagent containment: each subagent in its own cgroup (memory cap {cap >> 20} MiB, "
                         f"{cpus:g} CPU)")
    if line.startswith("subagents are contained"):
        return Check(NOTE, line)
    return Check(FAIL, line, "run the agents as a user who may create cgroups under the runner's slice "
                             "(see docs/containment.md), or switch X02 off knowingly")


def check_exec_shims(repo: str) -> Check:
    """The exec-time shims (X01) need a shell at /bin/sh and swarmgate's python for their slow path."""
    try:
        config = load_config(repo)
    except ConfigError:
        return Check(NOTE, "exec-time shims not checked: the config does not load (see above)")
    if config.guard_mode("X01") == "off":
        return Check(NOTE, "exec-time shims are switched off ([guards] X01 = \"off\")")
    if not os.access("/bin/sh", os.X_OK):
        return Check(FAIL, "exec-time shims cannot run: no /bin/sh", "install a POSIX shell at /bin/sh")
    from swarmgate.hooks import exec_shims  # noqa: PLC0415 - only doctor plans the shims
    from swarmgate.hooks.heavy_equivalents import workload_patterns  # noqa: PLC0415

    n = len(exec_shims.plan(config, patterns=workload_patterns(config)))
    return Check(OK, f"exec-time shims: {n} programs are checked where they start, in sessions whose client "
                     f"gives SessionStart a CLAUDE_ENV_FILE (Claude Code 2.1.332 does)")


def _wired_scripts_dir(repo: str) -> str | None:
    """The console scripts' directory of the install the repository's SessionStart hook runs."""
    from swarmgate import tools_dir  # noqa: PLC0415 - only this check needs it

    try:
        with open(os.path.join(repo, SETTINGS), encoding="utf-8") as f:
            hooks = json.load(f).get("hooks") or {}
        exe = next(hook_executable(g["hooks"][0]) for g in hooks.get("SessionStart") or [] if is_our_group(g))
    except (OSError, ValueError, AttributeError, StopIteration, KeyError, IndexError, TypeError):
        return tools_dir.scripts_dir()
    d = os.path.dirname(exe)
    return d if os.access(os.path.join(d, "swarmgate"), os.X_OK) else tools_dir.scripts_dir()


def _naming_texts(repo: str) -> list[str]:
    """The rule texts an agent reads (the repository's, else the shipped templates)."""
    from swarmgate.install import templates  # noqa: PLC0415

    out = []
    for src, rel in templates():
        if rel.endswith(".md"):
            here = os.path.join(repo, rel)
            out.append(here if os.path.isfile(here) else src)
    return out


def check_agents_path(repo: str, env=None) -> Check:
    """Every swarmgate program the rule texts and way-outs name resolves on the agents' PATH: in a
    live session (doctor typed by an agent) the PATH it has, else the one a session start gives
    (the tools' directory, swarmgate/tools_dir.py, then this shell's PATH)."""
    from swarmgate import tools_dir  # noqa: PLC0415 - only this check needs it

    env = os.environ if env is None else env
    names = tools_dir.script_names()
    if env.get("CLAUDECODE") == "1" and env.get("CLAUDE_CODE_SESSION_ID"):
        path, where = env.get("PATH", ""), "this session's PATH (the agents')"
    else:
        scripts = _wired_scripts_dir(repo)
        if scripts is None:
            return Check(FAIL, "swarmgate's console scripts are not found: the agents' PATH cannot get them",
                         "./install.sh in the swarmgate checkout (or pipx install it), then "
                         f"swarmgate install {shlex.quote(repo)}")
        d = tools_dir.location(scripts)
        first = d if os.path.isdir(d) else scripts   # made at the next session start when missing
        path = first + os.pathsep + env.get("PATH", "")
        where = f"the agents' PATH a session start gives ({d}, then your PATH)"
    missing = [n for n in names if tools_dir.resolve(n, path) is None]
    if missing:
        named = []
        for text in _naming_texts(repo):
            try:
                with open(text, encoding="utf-8", errors="replace") as f:
                    body = f.read()
            except OSError:
                continue
            if any(n in body for n in missing):
                named.append(os.path.relpath(text, repo) if text.startswith(repo + os.sep) else os.path.basename(text))
        return Check(FAIL, f"{', '.join(f'`{n}`' for n in missing)} not found on {where}: an agent that types "
                           f"{'it' if len(missing) == 1 else 'them'} (as the rule texts"
                           f"{' ' + ', '.join(named[:3]) if named else ''} and the way-outs say) gets "
                           "`command not found` (exit 127)",
                     "start a new session (its start puts the tools on PATH), or swarmgate install "
                     + shlex.quote(repo))
    return Check(OK, f"swarmgate's {len(names)} programs resolve on {where}")


def check_import(name: str, why: str) -> Check:
    try:
        importlib.import_module(name)
    except Exception as e:  # noqa: BLE001
        return Check(FAIL, f"cannot import {name} ({type(e).__name__}: {e}); {why}",
                     "./install.sh (reinstalls the dependencies into .venv)")
    return Check(OK, f"{name} importable")


def check_guards() -> Check:
    try:
        from swarmgate.hooks import registry  # noqa: PLC0415 - a registry that fails to import is reported, not raised
        n = len(registry.guards())
    except Exception as e:  # noqa: BLE001
        return Check(FAIL, f"the guard registry does not load ({type(e).__name__}: {e})",
                     "report it; the hooks refuse every tool call until it loads")
    return Check(OK, f"{n} guards registered")


def _wired(repo: str) -> list[str]:
    """The clients wired in ``repo`` (Claude Code when none is: the default install)."""
    try:
        return wired_clients(repo) or ["claude"]
    except InstallError:
        return ["claude"]


def _named(key: str, run: Callable[[], Check], enforcing: bool = False) -> Callable[[], Check]:
    """``run`` whose check carries ``key`` (its name in --json) and whether a FAIL means the hooks
    are not in force, unless the check set them itself."""
    def named() -> Check:
        c = run()
        c.key = c.key or key
        c.enforcing = c.enforcing or enforcing
        return c
    return named


def checks(repo: str) -> list[Callable[[], Check]]:
    wired = _wired(repo)
    out: list[Callable[[], Check]] = [_named("python", check_python, True),
                                      _named("entry_point", check_entry_point, True)]
    if "claude" in wired:
        out += [_named("settings", lambda: check_settings(repo), True), _named("config", lambda: check_config(repo)),
                _named("route_table", lambda: check_state_caches(repo), True),
                _named("hook_answers", lambda: check_hook_answers(repo), True)]
        out += enforcement.checks(repo)
    else:
        out += [_named("config", lambda: check_config(repo)), _named("route_table", lambda: check_state_caches(repo),
                                                                     True)]
    for client in wired:
        if client != "claude":
            out += [_named(f"{client}_{i}", run, True) for i, run in enumerate(client_doctor.checks(repo, client))]
    out += [
        _named("hosts_config", check_hosts_config),
        _named("state_dir", check_state_dir),
        _named("cgroup", lambda: check_cgroup(repo)),
        _named("containment", lambda: check_containment(repo)),
        _named("exec_shims", lambda: check_exec_shims(repo)),
        _named("agents_path", lambda: check_agents_path(repo)),
        _named("bashlex", lambda: check_import("bashlex", "the Bash guards parse commands with it"), True),
        _named("guards", check_guards, True),
    ]
    return out


NOT_IN_FORCE = 78   # SPEC §9: "a run condition is not met" (EX_CONFIG): the hooks would not run or not block


@entry("doctor")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(prog="swarmgate doctor",
                   description="Check that this machine and a repository are wired correctly, and that swarmgate's "
                               "hooks are in force in the client. Exit 0: all good; 78: the hooks are NOT in force "
                               "(switched off, not wired, failing open, not answering, or not seen running); 1: "
                               "another problem.")
    p.add_argument("path", nargs="?", default=None, metavar="PATH", help="the repository (default: this one)")
    p.add_argument("--json", action="store_true", help="one JSON object (keys: docs/install.md)")
    args = p.parse_args(argv)

    repo = os.path.abspath(args.path) if args.path else find_repo()
    if not os.path.isdir(repo):
        print(f"swarmgate doctor: {repo} is not a directory", file=sys.stderr)
        return 1
    if not args.json:
        print(f"swarmgate doctor: {repo}")
    done: list[Check] = []
    for run in checks(repo):
        try:
            c = run()
        except Exception as e:  # noqa: BLE001 - a broken check is a failed check, not a traceback
            c = Check(FAIL, f"a check crashed ({type(e).__name__}: {e})", "report it", enforcing=True)
        done.append(c)
        if not args.json:
            print(c.line())
    failed = [c for c in done if c.status == FAIL]
    in_force = not any(c.enforcing for c in failed)
    code = 0 if not failed else (1 if in_force else NOT_IN_FORCE)
    if args.json:
        print(json.dumps(report(repo, done, in_force, code), sort_keys=True))
        return code
    if not in_force:
        print(f"{len(failed)} problem(s) found: swarmgate's hooks are NOT in force (exit {NOT_IN_FORCE})")
    else:
        print(f"{len(failed)} problem(s) found" if failed else "all good")
    return code


def report(repo: str, done: list[Check], in_force: bool, code: int) -> dict:
    """`swarmgate doctor --json`: stable keys, documented in docs/install.md."""
    by_key = {c.key: c for c in done if c.key}
    switches = (by_key.get("hook_switches").data or {}) if "hook_switches" in by_key else {}
    return {
        "repo": repo,
        "enforcement_in_force": in_force,
        "exit_code": code,
        "disableAllHooks": bool(switches.get("disableAllHooks")),
        "allowManagedHooksOnly": bool(switches.get("allowManagedHooksOnly")),
        "checks": [{"key": c.key, "status": c.status, "what": c.what, "fix": c.fix if c.status != OK else "",
                    "enforcing": c.enforcing, "data": c.data or {}} for c in done],
    }
