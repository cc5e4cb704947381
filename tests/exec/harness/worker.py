"""The execution harness's worker: runs inside the sandbox (a private mount namespace and network
namespace, started by run.py with `unshare -m -n`), sets the sandbox's world up, then for every case

1. asks the real hook (`swarmgate hook PreToolUse`, the installed entry point) about the command,
   as the main agent or as a subagent;
2. when the hook lets it through, runs it for real exactly as Claude Code 2.1.332 runs a Bash
   command: the command the hook returned in ``updatedInput`` (if any), after the session's
   ``$CLAUDE_ENV_FILE`` text, in ``bash -c`` (FACTS.md, measured);
3. waits for whatever it left running (bounded), kills the rest, and reports the markers the heavy
   targets left.

Reads the spec (JSON) on stdin; writes one JSON line per case on stdout, then a summary line.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import world  # noqa: E402

from swarmgate.hosts import cgroups  # noqa: E402

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, CHECKOUT)   # the checkout: tests.*
from tests.proc_env import pids_with_env  # noqa: E402

ROOT = "/tmp/exec"
REPO = os.path.join(ROOT, "repo")
STATE = os.path.join(ROOT, "state")
MARKERS = os.path.join(ROOT, "markers")
HOME = os.path.join(ROOT, "home")
STANDIN = os.path.join(ROOT, "standin")
ENV_FILE = os.path.join(ROOT, "session-env", "sessionstart-hook-0.sh")
CWD_FILE = os.path.join(ROOT, "cwd")
CASE_ENV = "EXEC_HARNESS_CASE"
STANDIN_NAMES = ("qemu-system-x86_64", "herd7", "playwright",
                 "cargo", "rustup", "firejail", "bwrap", "numactl", "unbuffer", "chronic", "xvfb-run", "uvx",
                 "pipx", "conda", "hyperfine", "watchexec", "entr", "expect", "just", "task", "tox", "nox",
                 "yarn", "pnpm", "pre-commit", "docker", "uv", "poetry", "faketime", "eatmydata")


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


def _real_cargos() -> list[str]:
    """Every cargo (and rustup) binary of this machine: each gets the stand-in mounted over it."""
    found = set()
    for d in os.environ.get("EXEC_HOST_PATH", "").split(":") + ["/root/.cargo/bin", "/usr/local/bin", "/usr/bin"]:
        for name in ("cargo", "rustup"):
            p = os.path.join(d, name)
            if d and os.path.lexists(p):
                found.add(d)
    return sorted(found)


def toolchain_bins() -> list[str]:
    return sorted(glob.glob(os.path.expanduser("/root/.rustup/toolchains/*/bin")))


def _private_tmp(tmp: str, size: str) -> None:
    """A fresh tmpfs at ``tmp``; the checkout and the interpreter's prefix stay reachable when they lie
    under it (a clone in /tmp): bound back through a descriptor of the directory the tmpfs hides."""
    keep = [p for p in {os.path.realpath(CHECKOUT), os.path.realpath(sys.prefix)}
            if p.startswith(tmp.rstrip("/") + "/")]
    old = os.open(tmp, os.O_PATH | os.O_DIRECTORY)
    try:
        sh("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", tmp)
        for p in sorted(keep):
            os.makedirs(p, exist_ok=True)
            src = f"/proc/self/fd/{old}/{os.path.relpath(p, tmp)}"
            # --no-canonicalize: mount would resolve the descriptor path to its name, now the new tmpfs
            subprocess.run(["mount", "--no-canonicalize", "--bind", src, p], check=True, capture_output=True,
                           pass_fds=(old,))
    finally:
        os.close(old)


def setup(spec: dict) -> dict:
    """Private /tmp and /var/tmp; stand-ins over the machine's cargo; the world; the session start."""
    sh("mount", "--make-rprivate", "/")
    for tmp, size in (("/tmp", "512m"), ("/var/tmp", "64m")):
        _private_tmp(tmp, size)
    for d in (ROOT, STATE, MARKERS, HOME, STANDIN, os.path.dirname(ENV_FILE)):
        os.makedirs(d, exist_ok=True)
    standin_py = os.path.join(STANDIN, "standin.py")
    shutil.copy(os.path.join(HERE, "standin.py"), standin_py)
    with open(standin_py) as f:
        body = f.read()
    with open(standin_py, "w") as f:
        f.write(f"#!{sys.executable}\n" + body.split("\n", 1)[1])
    os.chmod(standin_py, 0o755)
    for name in STANDIN_NAMES:
        os.symlink(standin_py, os.path.join(STANDIN, name))
    # the machine's own cargo is out of reach: every directory holding one gets a tmpfs of stand-ins
    tc_bins = toolchain_bins()
    for d in _real_cargos() + tc_bins:
        keep = {n: os.path.realpath(os.path.join(d, n)) for n in os.listdir(d)} if os.path.isdir(d) else {}
        sh("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", d)
        for n in ("cargo", "rustup") if d not in tc_bins else ("cargo",):
            os.symlink(standin_py, os.path.join(d, n))
        for n, target in keep.items():   # other tools of that directory stay reachable (rustc, ...)
            if n not in ("cargo", "rustup") and os.path.exists(target) and not os.path.exists(os.path.join(d, n)):
                if os.path.realpath(target).endswith("/rustup"):
                    continue
                os.symlink(target, os.path.join(d, n))
    if shutil.which("docker"):
        sh("mount", "--bind", standin_py, shutil.which("docker"))
    world.build(ROOT, spec["slice"], tuple(spec.get("guards_off") or ()), spec.get("config"))
    env = base_env(spec, tc_bins)
    start = hook("SessionStart", {"session_id": world.SESSION, "cwd": REPO, "transcript_path": "",
                                  "hook_event_name": "SessionStart", "source": "startup"},
                 env, extra={"CLAUDE_ENV_FILE": ENV_FILE}, fresh_repo=True)
    try:
        env_text = open(ENV_FILE).read()
    except OSError:
        env_text = ""
    return {"env": env, "env_text": env_text, "session_start": start}


def base_env(spec: dict, tc_bins: list) -> dict:
    venv_bin = os.path.dirname(sys.executable)
    path = ":".join([STANDIN, venv_bin, "/root/.cargo/bin", "/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                     "/usr/bin", "/sbin", "/bin"])
    return {"PATH": path, "HOME": HOME, "LANG": "C.UTF-8", "TMPDIR": "/tmp", "SWARMGATE_STATE_DIR": STATE,
            "SWARMGATE_HOSTS_CONFIG": os.path.join(ROOT, "no-hosts.toml"), "EXEC_MARKERS": MARKERS,
            "EXEC_TOOLCHAINS": ":".join(os.path.dirname(b) for b in tc_bins), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@example.invalid",
            "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@example.invalid",
            "RUSTUP_HOME": "/root/.rustup", "CARGO_HOME": os.path.join(HOME, ".cargo"),
            "npm_config_cache": os.path.join(ROOT, "npm-cache"), "npm_config_offline": "true",
            "npm_config_update_notifier": "false", "npm_config_audit": "false", "npm_config_fund": "false",
            "PYTHONDONTWRITEBYTECODE": "1", "CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": world.SESSION}


def hook(event: str, payload: dict, env: dict, extra: dict | None = None, fresh_repo: bool = False) -> dict:
    if fresh_repo:
        reset_repo()
    exe = os.path.join(os.path.dirname(sys.executable), "swarmgate")
    e = dict(env)
    e["CLAUDE_PROJECT_DIR"] = REPO
    e.update(extra or {})
    t0 = time.monotonic()
    p = subprocess.run([exe, "hook", event], input=json.dumps(payload), capture_output=True, text=True,
                       env=e, cwd=REPO, timeout=120)
    out: dict = {"rc": p.returncode, "ms": round((time.monotonic() - t0) * 1000), "stderr": p.stderr[-500:]}
    try:
        out["answer"] = json.loads(p.stdout) if p.stdout.strip() else {}
    except ValueError:
        out["answer"] = {"unparsed": p.stdout[-500:]}
    return out


def reset_repo() -> None:
    shutil.rmtree(REPO, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "template"), REPO, symlinks=True)
    for name in os.listdir(MARKERS):
        os.unlink(os.path.join(MARKERS, name))


def claude_command_line(command: str, env_text: str) -> str:
    """What Claude Code 2.1.332 runs for a Bash call (FACTS.md; the snapshot is empty here)."""
    quoted = "'" + command.replace("'", "'\"'\"'") + "'"
    return (f"source /dev/null 2>/dev/null || true && {env_text}: && eval {quoted} < /dev/null "
            f"&& pwd -P >| {CWD_FILE}")


def case_pids(token: str) -> list[int]:
    return pids_with_env(CASE_ENV, token)


def run_case(case: dict, ctx: dict, timeout: float) -> dict:
    reset_repo()
    for rel, text in (case.get("files") or {}).items():
        if case.get("instrument"):
            text = world.instrument(rel, text)
        path = os.path.join(REPO, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if rel.endswith((".sh", ".py", ".pl")) or "/bin/" in rel:
            os.chmod(path, 0o755)
    payload = {"session_id": world.SESSION, "transcript_path": "", "cwd": REPO, "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_use_id": f"toolu_{case['id']}",
               "tool_input": {"command": case["command"], "description": "harness case"}}
    if case["agent"] == "sub":
        payload.update(world.SUBAGENT)
    h = hook("PreToolUse", payload, ctx["env"])
    hso = (h["answer"] or {}).get("hookSpecificOutput") or {}
    decision = hso.get("permissionDecision") or "allow"
    result = {"id": case["id"], "class": case["class"], "kind": case["kind"], "agent": case["agent"],
              "command": case["command"], "hook": decision, "hook_ms": h["ms"],
              "reason": (hso.get("permissionDecisionReason") or "")[:400], "rewritten": "updatedInput" in hso,
              "ran": False, "rc": None, "markers": [], "exec_refusals": 0, "stderr": "", "leftovers": 0}
    if decision in ("deny", "ask") or h["rc"] != 0:
        return result
    command = (hso.get("updatedInput") or {}).get("command") or case["command"]
    token = f"{case['id']}-{time.monotonic_ns()}"
    env = dict(ctx["env"], **{CASE_ENV: token})
    line = claude_command_line(command, ctx["env_text"])
    p = subprocess.Popen(["/bin/bash", "-c", line], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         errors="replace")
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        result["timed_out"] = True
    result.update({"ran": True, "rc": p.returncode, "stdout": out[-300:], "stderr": err[-600:]})
    # what it left running gets a moment to finish (a backgrounded heavy run counts), then is killed
    deadline = time.monotonic() + float(case.get("linger", 3.0))
    while case_pids(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = case_pids(token)
    result["leftovers"] = len(left)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    result["markers"] = sorted(n for n in os.listdir(MARKERS))
    log = os.path.join(REPO, ".swarmgate", "log", "decisions.jsonl")
    try:
        with open(log) as f:
            result["exec_refusals"] = sum(1 for x in f if '"event":"Exec"' in x and '"decision":"deny"' in x)
    except OSError:
        pass
    return result


def teardown(spec: dict) -> None:
    os.environ["SWARMGATE_STATE_DIR"] = STATE
    try:
        cgroups.get("auto").remove_slice(spec["slice"])
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"teardown_error": str(e)}), flush=True)


def main() -> int:
    spec = json.load(sys.stdin)
    ctx = setup(spec)
    print(json.dumps({"session_start": ctx["session_start"], "env_text": ctx["env_text"]}), flush=True)
    try:
        for case in spec["cases"]:
            try:
                res = run_case(case, ctx, float(spec.get("timeout", 20)))
            except Exception as e:  # noqa: BLE001 - one broken case is reported, the others still run
                res = {"id": case["id"], "class": case["class"], "kind": case["kind"], "agent": case["agent"],
                       "command": case["command"], "error": f"{type(e).__name__}: {e}"}
            print(json.dumps(res), flush=True)
    finally:
        teardown(spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
