#!/usr/bin/env python3
"""Hook latency per client: Claude Code's, Codex CLI's and Gemini CLI's hook on the same benign Bash
commands, against a bare interpreter, interleaved in one run so all see the same machine load.

  - Claude Code's hook (`PreToolUse`, Claude's payload), as install wires it (the venv's interpreter
    on swarmgate/hook_start.py, `-I -S`);
  - Codex's (`--client codex PreToolUse`, tool `Bash`) and Gemini's (`--client gemini BeforeTool`,
    tool `run_shell_command`), started the same way;
  - with --before ENTRY, Claude Code's hook from another checkout (e.g. one from before the client
    dialects), so "the Claude path costs what it cost" is measured side by side, not remembered;
  - `python -c pass` with the entry point's interpreter.

Each runs in a temporary repository wired for all three clients by that checkout's `swarmgate install`.
Prints median and p95 wall time, the median CPU time (user+sys, less sensitive to a busy machine),
the ratio to `python -c pass`, the modules each path imports, and the load average.

    .venv/bin/python bench/client_hook_latency.py [--n 40] [--entry PATH] [--before PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = ["ls", "ls -la src", "git status", "cat README.md", "grep -r foo src",
            "head -n 50 src/main.py | tail -n 20", "find . -name '*.py' | wc -l", "echo done && git log --oneline -5"]


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, -(-95 * len(xs) // 100) - 1))]


def payload(client: str, repo: str, command: str) -> bytes:
    if client == "gemini":
        p = {"session_id": "bench", "transcript_path": "", "cwd": repo, "hook_event_name": "BeforeTool",
             "timestamp": "2026-11-30T00:00:00Z", "tool_name": "run_shell_command",
             "tool_input": {"command": command, "description": "bench"}}
    else:
        p = {"session_id": "bench", "transcript_path": "", "cwd": repo, "hook_event_name": "PreToolUse",
             "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": command},
             "tool_use_id": "call_bench"}
        if client == "claude":
            p["tool_input"]["description"] = "bench"
    return json.dumps(p).encode()


def argv_of(entry: str, client: str, program: tuple | None = None) -> list[str]:
    """What the hook entries install wrote run: ``program`` (install.hook_program: the interpreter on
    hook_start.py) when given, else the console script ``entry`` with `hook`."""
    command, lead = program or (entry, ["hook"])
    if client == "claude":
        return [command, *lead, "PreToolUse"]
    return [command, *lead, "--client", client, "PreToolUse" if client == "codex" else "BeforeTool"]


def run(argv: list[str], stdin: bytes, cwd: str, env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, CPU seconds of the child, the process)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=env)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc


def allowed(client: str, proc: subprocess.CompletedProcess) -> bool:
    if proc.returncode != 0:
        return False
    answer = json.loads(proc.stdout or b"{}")
    return "deny" not in json.dumps(answer)


def modules(python: str, argv: list[str], stdin: bytes, cwd: str, env: dict) -> int:
    proc = subprocess.run([python, "-X", "importtime", *argv], input=stdin, capture_output=True, cwd=cwd, env=env)
    return sum(1 for line in proc.stderr.decode(errors="replace").splitlines()
               if line.startswith("import time:") and "|" in line and "imported package" not in line)


def wire(entry: str, tmp: str, name: str, env: dict, clients: tuple) -> str:
    repo = os.path.join(tmp, name)
    os.makedirs(os.path.join(repo, "src"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    args = [entry, "install", repo] + [a for c in clients for a in ("--client", c)]
    inst = subprocess.run(args, capture_output=True, text=True, env=env)
    if inst.returncode != 0:
        raise SystemExit(f"bench: `{' '.join(args)}` failed:\n{inst.stdout}{inst.stderr}")
    return repo


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=40, help="runs of each (default 40)")
    p.add_argument("--entry", default=os.path.join(os.path.dirname(here), ".venv", "bin", "swarmgate"))
    p.add_argument("--before", default=None, metavar="ENTRY",
                   help="another checkout's swarmgate entry point: its Claude Code hook is measured alongside")
    args = p.parse_args(argv)
    entry = os.path.abspath(args.entry)
    python = os.path.join(os.path.dirname(entry), "python")

    with tempfile.TemporaryDirectory(prefix="swarmgate-bench-clients-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "SWARMGATE_BREAK")}
        env["SWARMGATE_STATE_DIR"] = os.path.join(tmp, "state")
        repo = wire(entry, tmp, "repo", env, ("claude", "codex", "gemini"))
        # this checkout's hooks start as install wires them (the same interpreter runs this bench)
        sys.path.insert(0, os.path.dirname(here))
        from swarmgate.install import hook_program
        program = hook_program(entry)
        paths = {c: (argv_of(entry, c, program), repo) for c in ("claude", "codex", "gemini")}
        if args.before:
            before = os.path.abspath(args.before)
            paths["claude (before)"] = (argv_of(before, "claude"), wire(before, tmp, "repo-before", env, ()))
        times: dict[str, list[float]] = {k: [] for k in [*paths, "python -c pass"]}
        cpu: dict[str, list[float]] = {k: [] for k in times}
        for label, (cmd, r) in paths.items():  # warm up, and check every answer lets a benign call through
            client = label.split()[0]
            for c in COMMANDS:
                _, _, proc = run(cmd, payload(client, r, c), r, env)
                if not allowed(client, proc):
                    raise SystemExit(f"bench: {label} did not simply allow {c!r}: {proc.stdout!r} {proc.stderr!r}")
        labels = list(times)
        for i in range(args.n):
            c = COMMANDS[i % len(COMMANDS)]
            order = labels if i % 2 == 0 else labels[::-1]  # alternate who goes first
            for label in order:
                if label == "python -c pass":
                    dt, ct, _ = run([python, "-c", "pass"], b"", repo, env)
                else:
                    cmd, r = paths[label]
                    dt, ct, _ = run(cmd, payload(label.split()[0], r, c), r, env)
                times[label].append(dt)
                cpu[label].append(ct)
        mods = {label: modules(python if "before" not in label else os.path.join(os.path.dirname(args.before),
                                                                                  "python"),
                               cmd, payload(label.split()[0], r, "ls"), r, env)
                for label, (cmd, r) in paths.items()}

    base_wall, base_cpu = statistics.median(times["python -c pass"]), statistics.median(cpu["python -c pass"])
    print(f"hook latency per client: {args.n} runs each, interleaved, {len(COMMANDS)} benign Bash commands")
    print(f"  entry point: {entry}" + (f"; before: {os.path.abspath(args.before)}" if args.before else ""))
    print(f"  {'':22} {'median':>9} {'p95':>9} {'CPU':>9} {'ratio':>7} {'CPU ratio':>9} {'modules':>8}")
    for label in times:
        w, c = statistics.median(times[label]), statistics.median(cpu[label])
        print(f"  {label:22} {w * 1000:7.1f}ms {p95(times[label]) * 1000:7.1f}ms {c * 1000:7.1f}ms "
              f"{w / base_wall:6.2f}x {c / base_cpu:8.2f}x {mods.get(label, ''):>8}")
    print(f"  load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
