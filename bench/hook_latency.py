#!/usr/bin/env python3
"""Hook latency: each wired hook, run exactly as Claude Code runs it, against the interpreter's floor.

An install (`--entry`, default this checkout's .venv) wires a temporary repository with
`swarmgate install`; the hook commands are read back from its .claude/settings.json, so what is
measured is what Claude Code starts. Interleaved in one run, so all see the same machine load:

  - floor: `PYTHON -I -S -c pass` (the interpreter of the wired hooks: no site, nothing imported
    beyond the interpreter's own start) - the baseline of issue 14;
  - same-install: `PYTHON -c pass` (the same interpreter with its site: what any tool of this
    install pays before its first line);
  - the hook on each event's benign payload: PreToolUse Bash (10 commands, cycled; the main
    agent), PreToolUse Write, PreToolUse Agent (a well-formed dispatch), SessionStart.

CPU time (user + sys of the child, from getrusage) is the measure that holds on a busy
machine; wall time is printed beside it. Bar (issue 14): the Bash hook's median CPU time <= 3.0x the
floor's (goal 2.0x); exit 1 when the must is missed (by any install measured: every kind starts
its hooks the same way), 2 when the bench could not run.

``--kinds`` measures kinds of install one after the other, each made for the run in a temporary
directory from a wheel built from this working tree (``regular``: a virtual environment and pip,
what ./install.sh makes; ``pipx``; ``uv``: `uv tool install`; ``editable``: this checkout's .venv
when it is the development install, `./install.sh --dev`; ``plugin``: the Claude Code plugin's
hooks (plugin/hooks/hooks.json through plugin/bin/swarmgate-hook) running the regular install found
on PATH, in a repository whose settings wire no hooks); the installs' dependencies come from the
package index. The whole run takes a few minutes (--n 20 halves it).

    .venv/bin/python bench/hook_latency.py [--n 40] [--entry PATH] [--events bash,write,agent,session]
    .venv/bin/python bench/hook_latency.py --kinds regular,pipx,uv,editable,plugin
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from swarmgate.host_defaults import auto_threads, machine_cores

GOAL, MUST = 2.0, 3.0

COMMANDS = [
    "ls",
    "ls -la src",
    "git status",
    "git diff --stat HEAD~1",
    "cat README.md",
    "grep -r foo src",
    "python script.py --input data.csv",
    "head -n 50 src/main.py | tail -n 20",
    "find . -name '*.py' | wc -l",
    "echo done && git log --oneline -5",
]

AGENT_MD = ("---\nname: implementer\ndescription: implements one task\ntools: Read, Edit, Bash\n---\n"
            "You implement the task in your prompt.\n")
DISPATCH = ("task: add the parser for the v2 header\nexit criterion: tests/unit/header_test.py passes\n"
            f"heavy test: do not run\nthread cap: {auto_threads(machine_cores())}\n")


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, -(-95 * len(xs) // 100) - 1))]


def run_timed(argv: list[str], stdin: bytes, cwd: str, env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of the child, the process)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc


def wired_argv(settings: dict, event: str, tool: str | None) -> list[str]:
    """The argv of the hook settings.json runs for (event, tool)."""
    for group in settings["hooks"].get(event, []):
        matcher = group.get("matcher")
        if matcher is None or (tool is not None and tool in matcher.split("|")):
            h = group["hooks"][0]
            if isinstance(h.get("args"), list):
                return [h["command"], *h["args"]]
            return ["/bin/sh", "-c", h["command"]]
    raise SystemExit(f"bench: no hook wired for {event}/{tool}")


def payloads(repo: str) -> dict[str, tuple[str, str | None, list[bytes]]]:
    """event label -> (hook event, tool, payloads)."""
    base = {"session_id": "bench", "transcript_path": "", "cwd": repo, "permission_mode": "default"}

    def pre(tool: str, ti: dict) -> bytes:
        return json.dumps({**base, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": ti}).encode()

    return {
        "bash": ("PreToolUse", "Bash", [pre("Bash", {"command": c, "description": "bench"}) for c in COMMANDS]),
        "write": ("PreToolUse", "Write", [pre("Write", {"file_path": os.path.join(repo, "src", "x.py"),
                                                        "content": "x = 1\n"})]),
        "agent": ("PreToolUse", "Agent", [pre("Agent", {"description": "implement the parser", "prompt": DISPATCH,
                                                        "subagent_type": "implementer"})]),
        "session": ("SessionStart", None, [json.dumps({**base, "hook_event_name": "SessionStart",
                                                       "source": "startup"}).encode()]),
    }


def denied(proc: subprocess.CompletedProcess) -> str:
    """Why a benign payload's answer is not a plain pass ("" when it is)."""
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-300:]}"
    try:
        answer = json.loads(proc.stdout)
    except ValueError:
        return f"not JSON: {proc.stdout[:300]!r}"
    hso = answer.get("hookSpecificOutput", {}) if isinstance(answer, dict) else {}
    if hso.get("permissionDecision") in ("deny", "ask"):
        return str(hso.get("permissionDecisionReason", ""))[:300]
    return ""


def install_kind(python: str, env: dict) -> str:
    proc = subprocess.run([python, "-m", "swarmgate.install_kind"], capture_output=True, text=True, env=env)
    return proc.stdout.strip() or f"unknown ({proc.stderr.strip()[-200:]})"


def wire_repo(entry: str, tmp: str) -> tuple[str, dict, dict] | None:
    """(repository, the hooks' environment, its settings.json) of a repository made in ``tmp`` and wired
    by ``entry``'s `swarmgate install`, with the agent type the Agent payload dispatches; None (said
    on stderr) when install failed. Everything the hooks write stays in ``tmp``."""
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "src"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("SWARMGATE_BREAK", "PYTHONPATH", "PYTHONHOME") and not k.startswith("CLAUDE_")}
    env.update(SWARMGATE_STATE_DIR=os.path.join(tmp, "state"), CLAUDE_PROJECT_DIR=repo,
               SWARMGATE_HOSTS_CONFIG=os.path.join(tmp, "hosts.toml"), HOME=tmp,
               CLAUDE_ENV_FILE=os.path.join(tmp, "claude-env.sh"))
    inst = subprocess.run([entry, "install", repo], capture_output=True, text=True, env=env)
    if inst.returncode != 0:
        print(f"bench: `swarmgate install` failed:\n{inst.stdout}{inst.stderr}", file=sys.stderr)
        return None
    os.makedirs(os.path.join(repo, ".claude", "agents"), exist_ok=True)
    with open(os.path.join(repo, ".claude", "agents", "implementer.md"), "w") as f:
        f.write(AGENT_MD)
    with open(os.path.join(repo, ".claude", "settings.json")) as f:
        return repo, env, json.load(f)


def measure(entry: str, n: int, events: list[str], plugin: str | None = None) -> tuple[int, float | None]:
    """Wire a temporary repository with ``entry``'s `swarmgate install`, measure, print the table.
    ``plugin``: the plugin folder whose hooks to measure instead of the settings' (the settings then
    wire none, as where the plugin alone wires swarmgate; ``entry``'s directory leads PATH).
    (0, the Bash hook's CPU over the floor) or (2, None) when it could not run."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="swarmgate-bench-") as tmp:
        wired = wire_repo(entry, tmp)
        if wired is None:
            return 2, None
        repo, env, settings = wired
        if plugin:
            settings.pop("hooks", None)
            with open(os.path.join(repo, ".claude", "settings.json"), "w") as f:
                json.dump(settings, f, indent=2)
            with open(os.path.join(plugin, "hooks", "hooks.json")) as f:
                settings = json.loads(f.read().replace("${CLAUDE_PLUGIN_ROOT}", plugin))
            env.update(CLAUDE_PLUGIN_ROOT=plugin, PATH=f"{os.path.dirname(entry)}{os.pathsep}{env.get('PATH', '')}")
        hooks = {}
        for label, (event, tool, datas) in payloads(repo).items():
            if label in events:
                hooks[label] = (wired_argv(settings, event, tool), datas)
        python = next(iter(hooks.values()))[0][0] if hooks else entry
        if not os.path.basename(python).startswith("python"):   # a script (the plugin's): the install's interpreter
            python = os.path.join(os.path.dirname(entry), "python")
        runs: dict[str, list] = {"floor": [], "same-install": [], **{k: [] for k in hooks}}
        argvs = {"floor": ([python, "-I", "-S", "-c", "pass"], [b""]),
                 "same-install": ([python, "-c", "pass"], [b""]), **hooks}
        # warm the page cache and the bytecode; every benign payload must simply pass
        for label, (cmd, datas) in hooks.items():
            for data in datas:
                _, _, proc = run_timed(cmd, data, repo, env)
                why = denied(proc)
                if why:
                    print(f"bench: the benign {label} payload was not simply allowed: {why}", file=sys.stderr)
                    return 2, None
        labels = list(argvs)
        for i in range(n):
            for label in (labels if i % 2 == 0 else labels[::-1]):   # alternate who goes first
                cmd, datas = argvs[label]
                wall, cpu, _ = run_timed(cmd, datas[i % len(datas)], repo, env)
                runs[label].append((wall, cpu))
        kind = install_kind(python, env)
    load_after = os.getloadavg()

    def med(label: str, k: int) -> float:
        return statistics.median(r[k] for r in runs[label])

    floor_cpu, site_cpu = med("floor", 1), med("same-install", 1)
    print(f"hook latency: {n} rounds, interleaved; CPU = user+sys of the child (median), wall median / p95")
    print(f"  install: {kind}{' (on PATH), through the plugin' if plugin else ''}")
    print(f"  hook command: {' '.join(hooks['bash'][0] if 'bash' in hooks else [])}")
    print(f"  load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after, on {os.cpu_count()} cores")
    print(f"  {'':28s} {'CPU ms':>7s} {'x floor':>8s} {'x same':>7s} {'wall ms':>8s} {'p95 ms':>7s}")
    names = {"floor": "python -I -S -c pass", "same-install": "python -c pass",
             "bash": "hook PreToolUse Bash", "write": "hook PreToolUse Write",
             "agent": "hook PreToolUse Agent", "session": "hook SessionStart"}
    for label in labels:
        cpu, wall = med(label, 1), med(label, 0)
        print(f"  {names[label]:28s} {cpu * 1000:7.1f} {cpu / floor_cpu:7.2f}x {cpu / site_cpu:6.2f}x "
              f"{wall * 1000:8.1f} {p95([r[0] for r in runs[label]]) * 1000:7.1f}")
    if "bash" not in hooks:
        return 0, None
    ratio = med("bash", 1) / floor_cpu
    verdict = (f"meets the goal (<= {GOAL}x the floor)" if ratio <= GOAL else
               f"meets the bar (<= {MUST}x) but not the goal ({GOAL}x)" if ratio <= MUST else
               f"MISSES the bar (> {MUST}x the floor)")
    print(f"  verdict (Bash, CPU over the floor): {ratio:.2f}x, {verdict}")
    return 0, ratio


KINDS = ("regular", "pipx", "uv", "editable", "plugin")


def make_installs(kinds: list[str], root: str, tmp: str) -> dict[str, str]:
    """{kind: the swarmgate entry point of an install of that kind}, made in ``tmp`` from a wheel of
    the working tree at ``root`` (editable: ``root``'s own .venv, when it is the development install)."""
    base = os.path.realpath(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "UV_", "VIRTUAL_ENV"))}
    env.update(PIPX_HOME=os.path.join(tmp, "pipx"), PIPX_BIN_DIR=os.path.join(tmp, "bin"),
               PIPX_MAN_DIR=os.path.join(tmp, "man"), UV_TOOL_DIR=os.path.join(tmp, "uv-tools"),
               UV_TOOL_BIN_DIR=os.path.join(tmp, "uv-bin"), UV_CACHE_DIR=os.path.join(tmp, "uv-cache"),
               UV_PYTHON_DOWNLOADS="never")
    tools = os.path.dirname(sys.executable)
    out: dict[str, str] = {}
    wheel = None
    if set(kinds) & {"regular", "pipx", "uv", "plugin"}:
        tree = os.path.join(tmp, "tree")
        files = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"],
                               capture_output=True, check=True).stdout.split(b"\0")
        for rel in filter(None, (f.decode() for f in files)):
            if os.path.isfile(os.path.join(root, rel)):
                os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
                shutil.copy2(os.path.join(root, rel), os.path.join(tree, rel))
        dist = os.path.join(tmp, "dist")
        subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, tree],
                       check=True, capture_output=True)
        wheel = os.path.join(dist, next(f for f in os.listdir(dist) if f.endswith(".whl")))
    for kind in kinds:
        if kind in ("regular", "plugin"):
            venv = os.path.join(tmp, "regular")
            if not os.path.isdir(venv):
                subprocess.run([base, "-m", "venv", venv], check=True, capture_output=True)
                subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "-q", "install",
                                "--disable-pip-version-check", wheel], check=True, env=env, capture_output=True)
            out[kind] = os.path.join(venv, "bin", "swarmgate")
        elif kind == "pipx":
            subprocess.run([os.path.join(tools, "pipx"), "install", "--python", base, wheel], check=True,
                           env=env, capture_output=True)
            out[kind] = os.path.join(tmp, "bin", "swarmgate")
        elif kind == "uv":
            subprocess.run([os.path.join(tools, "uv"), "tool", "install", "--python", base, wheel], check=True,
                           env=env, capture_output=True)
            out[kind] = os.path.join(tmp, "uv-bin", "swarmgate")
        elif kind == "editable":
            entry = os.path.join(root, ".venv", "bin", "swarmgate")
            got = subprocess.run([os.path.join(root, ".venv", "bin", "python"), "-m", "swarmgate.install_kind",
                                  "--kind"], capture_output=True, text=True).stdout.strip()
            if got != "editable":
                raise ValueError(f"{root}/.venv is not the development install ({got or 'none'}): "
                                 "./install.sh --dev first")
            out[kind] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=40, help="rounds (default 40)")
    p.add_argument("--entry", default=os.path.join(root, ".venv", "bin", "swarmgate"),
                   help="the swarmgate entry point of the install to measure (default: this checkout's .venv)")
    p.add_argument("--kinds", default="", help=f"measure fresh installs of these kinds instead ({','.join(KINDS)})")
    p.add_argument("--events", default="bash,write,agent,session", help="which payloads (default: all)")
    args = p.parse_args(argv)
    events = [e for e in args.events.split(",") if e]
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        print(f"bench: unknown install kind {unknown[0]!r} (known: {', '.join(KINDS)})", file=sys.stderr)
        return 2
    if not kinds:
        rc, ratio = measure(os.path.abspath(args.entry), args.n, events)
        return rc if rc else (0 if ratio is None or ratio <= MUST else 1)
    worst = 0
    with tempfile.TemporaryDirectory(prefix="swarmgate-bench-installs-") as tmp:
        try:
            entries = make_installs(kinds, root, tmp)
        except subprocess.CalledProcessError as e:
            print(f"bench: making the installs failed: {e}\n{(e.stderr or b'').decode(errors='replace')[-1500:]}",
                  file=sys.stderr)
            return 2
        except ValueError as e:
            print(f"bench: {e}", file=sys.stderr)
            return 2
        for kind in kinds:
            print(f"== {kind}", flush=True)
            plugin = os.path.join(root, "plugin") if kind == "plugin" else None
            rc, ratio = measure(entries[kind], args.n, events, plugin)
            worst = max(worst, rc, 1 if ratio is not None and ratio > MUST else 0)
    return worst


if __name__ == "__main__":
    sys.exit(main())
