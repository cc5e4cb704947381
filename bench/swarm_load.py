#!/usr/bin/env python3
"""Swarm load (issue 26): a crowd of hook callers and capped runners on one machine, for a bounded time.

One run, real processes, real cgroups (a temporary slice), a temporary repository and state dir:

  - single: one caller alone, its PreToolUse Bash calls one after the other (before the crowd, and again
    after it, so both ends of the run's machine state are seen);
  - crowd: 32 sessions x 4 agents, each agent a caller making its calls one after the other, all at
    once, for --seconds; beside them 20 runners, each running `run-with-memory-cap` jobs back to back
    (48M caps, 24M held for a moment) under a 256M total;
  - a sampler, every 50 ms: the ledger's booked total and the live run cgroups' memory use.

Every hook call carries an input of its own, so the decision log says which calls were logged. Printed:
p50/p99 hook latency (wall) of the single caller and of the crowd, and their ratio; calls answered;
lost decisions (a call not answered, or answered and not in the log exactly once: must 0); the runners'
exits; the largest booked total and cgroup use seen, over the total (must <= 1.0). Exit 1 when a must
is missed, 2 when the bench could not run (no writable cgroup v1/v2 memory controller, or not root).

    .venv/bin/python bench/swarm_load.py [--seconds 45] [--sessions 32] [--agents 4] [--runners 20]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

from machine_load import load, verdict

from swarmgate.sizes import parse_size

AGENT_MD = ("---\nname: implementer\ndescription: implements one task\ntools: Read, Edit, Bash\n---\n"
            "You implement the task in your prompt.\n")
COMMANDS = ("ls -la src", "git status", "cat README.md", "grep -r foo src", "head -n 5 src/x.py | wc -l")
HOLD = "import sys, time; b = b'x' * (24 << 20); time.sleep(float(sys.argv[1]))"


def pct(xs: list[float], p: int) -> float:
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, -(-p * len(xs) // 100) - 1))] if xs else float("nan")


class Load:
    def __init__(self, sb, bin_dir: str) -> None:
        self.sb, self.bin = sb, bin_dir
        self.env = sb.env()
        self.env.pop("PYTHONPATH", None)
        self.lock = threading.Lock()
        self.calls: list[tuple[str, float, bool]] = []   # (input, wall s, answered)
        self.exits: dict[int, int] = {}
        self.max_booked = 0
        self.max_used = 0
        self.stop = threading.Event()

    def hook(self, session: str, agent: str | None, text: str) -> tuple[float, bool]:
        p = {"session_id": session, "transcript_path": "", "cwd": self.sb.repo, "hook_event_name": "PreToolUse",
             "tool_name": "Bash", "tool_input": {"command": text, "description": "load"}}
        if agent:
            p.update(agent_id=agent, agent_type="implementer")
        t0 = time.perf_counter()
        try:
            cp = subprocess.run([os.path.join(self.bin, "swarmgate"), "hook", "PreToolUse"], input=json.dumps(p),
                                capture_output=True, text=True, cwd=self.sb.repo, env=self.env, timeout=120)
            ok = cp.returncode == 0 and cp.stdout.lstrip().startswith("{")
        except subprocess.TimeoutExpired:
            ok = False
        return time.perf_counter() - t0, ok

    def caller(self, session: str, agent: str | None, tag: str, until: float | None, n: int | None) -> None:
        i = 0
        while (until is None or time.monotonic() < until) and (n is None or i < n):
            text = f"{COMMANDS[i % len(COMMANDS)]} # {tag} {session} {agent} {i}"
            wall, ok = self.hook(session, agent, text)
            with self.lock:
                self.calls.append((text, wall, ok))
            i += 1

    def runner(self, k: int, until: float) -> None:
        i = 0
        while time.monotonic() < until:
            hold = 0.3 + (k * 7 + i) % 10 / 10
            cp = subprocess.run([os.path.join(self.bin, "run-with-memory-cap"), "48M", "--label",
                                 f"load-{k % 5}", "--", sys.executable, "-c", HOLD, str(hold)],
                                capture_output=True, cwd=self.sb.repo, env=self.env, timeout=300)
            with self.lock:
                self.exits[cp.returncode] = self.exits.get(cp.returncode, 0) + 1
            i += 1

    def sampler(self) -> None:
        from swarmgate import state_paths
        from swarmgate.statefile import read_json
        os.environ["SWARMGATE_STATE_DIR"] = self.sb.state   # this process's reads only: the ledger's path
        ledger = state_paths.ledger_path()
        backend = self.sb.backend()
        while not self.stop.is_set():
            try:
                data = read_json(ledger, {}, report=lambda _m: None)
                booked = sum(int(b.get("booked") or 0) for b in (data.get("bookings") or {}).values())
                runs = [backend.run_path(self.sb.slice, r) for r in backend.runs(self.sb.slice)]
                used = sum(backend.counters(r).usage for r in runs)
            except Exception:  # noqa: BLE001 - a run cgroup removed between listing and reading
                booked = used = 0
            self.max_booked = max(self.max_booked, booked)
            self.max_used = max(self.max_used, used)
            self.stop.wait(0.05)


def logged_counts(repo: str) -> dict[str, int]:
    from swarmgate import decision_log
    out: dict[str, int] = {}
    for r in decision_log.read(repo):
        text = r.get("input") or ""
        out[text] = out.get(text, 0) + 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=45.0)
    ap.add_argument("--sessions", type=int, default=32)
    ap.add_argument("--agents", type=int, default=4)
    ap.add_argument("--runners", type=int, default=20)
    ap.add_argument("--single", type=int, default=25, help="calls of the single caller, before and after")
    ap.add_argument("--total", default="256M")
    args = ap.parse_args(argv)

    from swarmgate.hosts.runner_selftest import Sandbox
    try:
        sb = Sandbox(total=args.total, prefix="sgload")
        sb.backend().ensure_slice(sb.slice, parse_size(args.total))
    except Exception as e:  # noqa: BLE001 - no cgroups here: the bench cannot run
        print(f"swarm_load: cannot run here: {e}", file=sys.stderr)
        return 2
    try:
        os.makedirs(os.path.join(sb.repo, ".claude", "agents"), exist_ok=True)
        with open(os.path.join(sb.repo, ".claude", "agents", "implementer.md"), "w") as f:
            f.write(AGENT_MD)
        subprocess.run(["git", "init", "-q", sb.repo], check=True)
        ld = Load(sb, os.path.dirname(sys.executable))
        t0 = time.monotonic()
        ld.caller("single", None, "single-before", None, args.single)
        single_n = len(ld.calls)
        sampler = threading.Thread(target=ld.sampler, daemon=True)
        sampler.start()
        until = time.monotonic() + args.seconds
        threads = [threading.Thread(target=ld.runner, args=(k, until)) for k in range(args.runners)]
        threads += [threading.Thread(target=ld.caller, args=(f"s{s:02d}", f"a{s:02d}-{a}", "crowd", until, None))
                    for s in range(args.sessions) for a in range(args.agents)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ld.stop.set()
        sampler.join()
        crowd = ld.calls[single_n:]
        ld.caller("single", None, "single-after", None, args.single)
        single = ld.calls[:single_n] + ld.calls[single_n + len(crowd):]
        elapsed = time.monotonic() - t0

        logged = logged_counts(sb.repo)
        lost = sum(1 for text, _w, ok in ld.calls if not ok or logged.get(text, 0) != 1)
        total = parse_size(args.total)
        s_wall = [w * 1000 for _t, w, _ok in single]
        c_wall = [w * 1000 for _t, w, _ok in crowd]
        s50, s99, c50, c99 = pct(s_wall, 50), pct(s_wall, 99), pct(c_wall, 50), pct(c_wall, 99)
        booked_ratio, used_ratio = ld.max_booked / total, ld.max_used / total
        print(f"swarm_load: {args.sessions} sessions x {args.agents} agents of hook calls + {args.runners} runners "
              f"under a {args.total} total, {args.seconds:.0f} s of crowd ({elapsed:.0f} s in all) {load()}")
        print(f"  hook latency, single caller: p50 {s50:.0f} ms, p99 {s99:.0f} ms ({len(single)} calls)")
        print(f"  hook latency, crowd:         p50 {c50:.0f} ms, p99 {c99:.0f} ms ({len(crowd)} calls; "
              f"{len(crowd) / max(args.seconds, 1e-9):.1f} calls/s)")
        print(f"  crowd / single: p50 {c50 / s50:.1f}x, p99 {c99 / s99:.1f}x "
              f"({args.sessions * args.agents} callers on {os.cpu_count()} cores)")
        print("  runner exits: " + ", ".join(f"{code}: {n}" for code, n in sorted(ld.exits.items())))
        print(f"  lost decisions: {lost} of {len(ld.calls)} calls   {verdict(lost == 0, '0')}")
        print(f"  max booked / total (ledger): {booked_ratio:.2f}   {verdict(booked_ratio <= 1.0, '<= 1.0')}")
        print(f"  max run cgroups' use / total: {used_ratio:.2f}   {verdict(used_ratio <= 1.0, '<= 1.0')}")
        return 0 if lost == 0 and booked_ratio <= 1.0 and used_ratio <= 1.0 else 1
    finally:
        sb.cleanup()


if __name__ == "__main__":
    sys.exit(main())
