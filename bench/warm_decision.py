#!/usr/bin/env python3
"""What a resident `swarmgate serve` could save: one decision made in a warm process, against the
same decision made by a fresh hook process (issue 14's stretch; docs/resident-mode.md).

A temporary repository is wired by this checkout's `swarmgate install`; then, for each benign
payload of bench/hook_latency.py (PreToolUse Bash, Write, Agent; SessionStart):

  - warm: `hook_engine.answer(event, payload)` called in this process, after a warm-up, exactly as
    a server would call it per request: the config read from the repository on every call, the
    guards run under their budgets, the decision logged. No HTTP parsing (a server adds that);
  - cold: the wired hook command started as Claude Code starts it (a new interpreter per call).

CPU time of the warm calls is this process's (time.process_time) per call; of the cold ones the
child's (getrusage). Interleaved per round; medians; the load average printed.

    .venv/bin/python bench/warm_decision.py [--n 40]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from hook_latency import payloads, run_timed, wire_repo, wired_argv

GOAL_MS = 5.0   # issue 14: a resident decision's goal


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=40, help="rounds (default 40)")
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="swarmgate-warm-") as tmp:
        wired = wire_repo(os.path.join(root, ".venv", "bin", "swarmgate"), tmp)
        if wired is None:
            return 2
        repo, env, settings = wired
        # this process becomes the server: the same environment as the hooks it is compared with
        for k in [k for k in os.environ if k not in env]:
            del os.environ[k]
        os.environ.update(env)
        os.chdir(repo)
        from swarmgate import hook_engine

        cases = {label: (event, wired_argv(settings, event, tool), [d.decode() for d in datas], datas)
                 for label, (event, tool, datas) in payloads(repo).items()}
        for label, (event, _, texts, _) in cases.items():
            for text in texts * 3:   # warm-up: every import and first-use table built
                out, code = hook_engine.answer(event, text)
                if code != 0 or '"deny"' in out or '"ask"' in out:
                    print(f"bench: the benign {label} payload was not simply allowed: {out[:300]}", file=sys.stderr)
                    return 2
        warm: dict[str, list] = {k: [] for k in cases}
        cold: dict[str, list] = {k: [] for k in cases}
        for i in range(args.n):
            for label, (event, cmd, texts, datas) in cases.items():
                c0, t0 = time.process_time(), time.perf_counter()
                hook_engine.answer(event, texts[i % len(texts)])
                warm[label].append((time.perf_counter() - t0, time.process_time() - c0))
                wall, cpu, _ = run_timed(cmd, datas[i % len(datas)], repo, env)
                cold[label].append((wall, cpu))
    load_after = os.getloadavg()

    def med(xs: list, k: int) -> float:
        return statistics.median(x[k] for x in xs) * 1000

    print(f"warm decision: {args.n} rounds, interleaved; medians in ms; "
          f"warm = hook_engine.answer in one process, cold = the wired hook process")
    print(f"  load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after, on {os.cpu_count()} cores")
    print(f"  {'payload':24s} {'warm CPU':>9s} {'warm wall':>10s} {'cold CPU':>9s} {'cold wall':>10s}")
    names = {"bash": "PreToolUse Bash", "write": "PreToolUse Write", "agent": "PreToolUse Agent",
             "session": "SessionStart"}
    for label in cases:
        print(f"  {names[label]:24s} {med(warm[label], 1):9.2f} {med(warm[label], 0):10.2f} "
              f"{med(cold[label], 1):9.1f} {med(cold[label], 0):10.1f}")
    bash = med(warm["bash"], 0)
    print(f"  warm Bash decision {bash:.2f} ms wall: {'within' if bash <= GOAL_MS else 'over'} "
          f"the {GOAL_MS:.0f} ms goal of a resident mode (before HTTP)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
