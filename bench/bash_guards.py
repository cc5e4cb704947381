"""Bench for the Bash guards (issue 3 bars).

Prints, in one run:
1. hook latency, median and p95, over 200 realistic commands (the test corpus's
   heavy and benign commands, as main agent and subagent) through the real
   `swarmgate hook PreToolUse` subprocess, interleaved one-for-one with
   `python -c pass` (the same interpreter, same environment), and the ratios
   (goal: median <= 1.5x, p95 <= 2.5x; must: median <= 2.0x);
2. in-process judgements per second of the shell rules (the registry's refusing
   guards of PreToolUse/Bash: B01 B02 B10 B30 B31 G01 T01 W01 today, and any rule
   added later), each judgement INCLUDING the parse of its command, with
   every cache a hook process starts without (parse trees, compiled patterns)
   emptied before each event (goal >= 2,000/s); for reference, the cold parse
   time, the rate of judging alone on already parsed events, and the time of the
   other guards on the same events (R01's host report).
Bytecode is compiled first, as an installed package has it. The load average is
printed beside each figure. Exit 1 when the must (hook median <= 2.0x) is missed.

Usage: .venv/bin/python bench/bash_guards.py [--n 200] [--json]
Runs in a temporary repository with its own SWARMGATE_STATE_DIR; leaves nothing behind.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from machine_load import load, verdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _corpus():
    from tests.hooks import bash_corpus as corpus
    return corpus


def _p95(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def _setup_repo(corpus, off=()) -> str:
    repo = tempfile.mkdtemp(prefix="swarmgate-bench-")
    os.makedirs(os.path.join(repo, ".claude"))
    with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
        f.write(corpus.CONFIG)
        if off:
            f.write("\n[guards]\n" + "".join(f'{c} = "off"\n' for c in off))
    for e in corpus.HEAVY + corpus.BENIGN:
        for rel, content in e.files.items():
            p = os.path.join(repo, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(content)
            if rel.endswith(".sh"):
                os.chmod(p, 0o755)
    subprocess.run(["git", "init", "-q", repo], check=True)
    return repo


def _payloads(corpus, repo: str, n: int) -> list:
    entries = [e.command for e in corpus.HEAVY + corpus.BENIGN]
    benign = {e.command for e in corpus.BENIGN}
    out = []
    i = 0
    while len(out) < n:
        cmd = entries[i % len(entries)]
        p = {"session_id": "bench", "transcript_path": "", "cwd": repo, "hook_event_name": "PreToolUse",
             "tool_name": "Bash", "tool_input": {"command": cmd, "description": "bench"}}
        if (i // len(entries)) % 2 == 1 or i % 3 == 0:
            p["agent_id"] = "bench-agent"
            p["agent_type"] = "implementer"
        p["_kind"] = "benign" if cmd in benign else "heavy"
        out.append(p)
        i += 1
    return out


def hook_latency(payloads, repo: str, env: dict) -> dict:
    py = sys.executable
    exe = os.path.join(os.path.dirname(py), "swarmgate")
    hook_cmd = [exe, "hook", "PreToolUse"] if os.path.exists(exe) else [py, "-m", "swarmgate", "hook", "PreToolUse"]
    base_cmd = [py, "-c", "pass"]
    hook_t, base_t = [], []
    denied = 0
    for p in payloads[:3]:   # warm the page cache for both
        subprocess.run(hook_cmd, input=json.dumps(p), capture_output=True, text=True, env=env, cwd=repo)
        subprocess.run(base_cmd, capture_output=True, env=env, cwd=repo)
    by_kind: dict = {}
    for p in payloads:
        data = json.dumps({k: v for k, v in p.items() if k != "_kind"})
        t0 = time.perf_counter()
        r = subprocess.run(hook_cmd, input=data, capture_output=True, text=True, env=env, cwd=repo)
        hook_t.append(time.perf_counter() - t0)
        by_kind.setdefault(p["_kind"], []).append(hook_t[-1])
        if r.returncode != 0 or not r.stdout.strip().startswith("{"):
            raise SystemExit(f"hook failed (rc {r.returncode}): {r.stdout[:200]} {r.stderr[:400]}")
        if '"deny"' in r.stdout:
            denied += 1
        t0 = time.perf_counter()
        subprocess.run(base_cmd, capture_output=True, env=env, cwd=repo)
        base_t.append(time.perf_counter() - t0)
    return {"n": len(payloads), "denied": denied, "load": load(),
            "kinds": {k: (len(v), statistics.median(v) * 1000) for k, v in by_kind.items()},
            "hook_median_ms": statistics.median(hook_t) * 1000, "hook_p95_ms": _p95(hook_t) * 1000,
            "base_median_ms": statistics.median(base_t) * 1000, "base_p95_ms": _p95(base_t) * 1000}


def _cold() -> None:
    """Empty what a fresh hook process starts without: parse trees and compiled patterns."""
    from swarmgate.hooks import bash_parse, command_patterns

    bash_parse.clear_cache()
    command_patterns._cache.clear()  # compiled patterns (no public clear: a hook process starts empty)


def _rate(work, windows: int = 5, seconds: float = 1.0) -> tuple[float, float]:
    """(median, best) events per second over ``windows`` windows: the machine is shared."""
    rates = []
    for _ in range(windows):
        count = 0
        t0 = time.perf_counter()
        while True:
            count += work()
            dt = time.perf_counter() - t0
            if dt >= seconds:
                break
        rates.append(count / dt)
    return statistics.median(rates), max(rates)


def judgements(payloads, repo: str) -> dict:
    """In-process: judgements per second including the parse (no caches), the cold parse, judging alone."""
    from swarmgate.config import load_config
    from swarmgate.hook_engine import evaluate
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks import registry
    from swarmgate.hooks.shell_event import analysis_of

    config = load_config(repo)
    every = [g for g in registry.guards() if g.applies("PreToolUse", "Bash")]
    mine = registry.refusing_guards("PreToolUse", "Bash")  # the shell rules, from the registry
    others = [g for g in every if g not in mine]
    parsed, parse_t = [], []
    for p in payloads:
        _cold()
        ev = HookEvent("PreToolUse", p, repo)
        t0 = time.perf_counter()
        analysis_of(ev, config)
        parse_t.append(time.perf_counter() - t0)
        parsed.append((p, ev.memo["bash"]))
    parse_load = load()

    def with_parse() -> int:
        for p in payloads:
            _cold()
            evaluate(HookEvent("PreToolUse", p, repo), config, mine)   # derives "bash", then judges
        return len(payloads)

    def judging_only() -> int:
        for p, analysis in parsed:
            ev = HookEvent("PreToolUse", p, repo)
            ev.memo["bash"] = analysis
            evaluate(ev, config, mine)
        return len(parsed)

    full, full_best = _rate(with_parse)
    full_load = load()
    judge_only, _ = _rate(judging_only)
    judge_load = load()
    other_t = []
    for p, analysis in parsed[:60]:
        ev = HookEvent("PreToolUse", p, repo)
        ev.memo["bash"] = analysis
        t1 = time.perf_counter()
        evaluate(ev, config, others)
        other_t.append(time.perf_counter() - t1)
    return {"guards": sorted({g.code for g in mine}), "others": sorted({g.code for g in others}),
            "judgements_per_s": full, "judgements_best_per_s": full_best, "judgements_load": full_load,
            "judging_only_per_s": judge_only, "judging_only_load": judge_load,
            "parse_median_ms": statistics.median(parse_t) * 1000,
            "parse_p95_ms": _p95(parse_t) * 1000, "parse_load": parse_load,
            "others_median_ms": statistics.median(other_t) * 1000 if other_t else 0.0,
            "others_p95_ms": _p95(other_t) * 1000 if other_t else 0.0}


def _compile_bytecode() -> None:
    """Write the package's bytecode, as an installed package has it (PYTHONDONTWRITEBYTECODE=1 in
    this environment would otherwise make every hook call recompile every changed module)."""
    import compileall
    for d in ("swarmgate", "hooks", "gate", "hosts", "agents"):
        path = os.path.join(ROOT, d)
        if os.path.isdir(path):
            compileall.compile_dir(path, quiet=1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200, help="commands through the hook subprocess (default 200)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    ap.add_argument("--off", default="", help="guard codes switched off in the bench repository "
                                              "(e.g. R01, to see the Bash guards without the host report)")
    args = ap.parse_args(argv)

    _compile_bytecode()
    corpus = _corpus()
    off = [c.strip() for c in args.off.split(",") if c.strip()]
    repo = _setup_repo(corpus, off)
    state = tempfile.mkdtemp(prefix="swarmgate-bench-state-")
    old_state = os.environ.get("SWARMGATE_STATE_DIR")
    os.environ["SWARMGATE_STATE_DIR"] = state
    env = dict(os.environ)
    env.pop("SWARMGATE_BREAK", None)
    env.pop("CLAUDE_PROJECT_DIR", None)
    try:
        payloads = _payloads(corpus, repo, args.n)
        lat = hook_latency(payloads, repo, env)
        jud = judgements(payloads, repo)
    finally:
        shutil.rmtree(repo, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
        if old_state is None:
            os.environ.pop("SWARMGATE_STATE_DIR", None)
        else:
            os.environ["SWARMGATE_STATE_DIR"] = old_state
    rm = lat["hook_median_ms"] / lat["base_median_ms"]
    rp = lat["hook_p95_ms"] / lat["base_p95_ms"]
    print(f"bash guards bench: {lat['n']} commands through `swarmgate hook PreToolUse` "
          f"({lat['denied']} denied), interleaved with `python -c pass`"
          + (f"; switched off: {', '.join(off)}" if off else ""))
    print(f"  hook      median {lat['hook_median_ms']:7.1f} ms   p95 {lat['hook_p95_ms']:7.1f} ms")
    print(f"  baseline  median {lat['base_median_ms']:7.1f} ms   p95 {lat['base_p95_ms']:7.1f} ms")
    print("  hook median by kind: " + ", ".join(f"{k} ({n}) {m:.1f} ms" for k, (n, m) in sorted(lat["kinds"].items())))
    print(f"  ratio     median {rm:5.2f}x (goal <= 1.5x, {verdict(rm <= 2.0, '<= 2.0x')})"
          f"   p95 {rp:5.2f}x (goal <= 2.5x: {'ok' if rp <= 2.5 else 'over'})  {lat['load']}")
    print(f"in-process, {len(payloads)} events: Bash guards {' '.join(jud['guards'])}")
    print(f"  judgements/s, parse included, no caches {jud['judgements_per_s']:7.0f} median of 5 x 1 s windows, "
          f"best {jud['judgements_best_per_s']:.0f} "
          f"(goal >= 2000: {'ok' if jud['judgements_per_s'] >= 2000 else 'under'})  {jud['judgements_load']}")
    print(f"  parse alone, cold (no caches)     median {jud['parse_median_ms']:6.2f} ms"
          f"   p95 {jud['parse_p95_ms']:6.2f} ms  {jud['parse_load']}")
    print(f"  for reference, judging alone on parsed events: {jud['judging_only_per_s']:7.0f}/s  "
          f"{jud['judging_only_load']}")
    print(f"  other PreToolUse/Bash guards ({' '.join(jud['others']) or 'none'}) "
          f"median {jud['others_median_ms']:6.2f} ms   p95 {jud['others_p95_ms']:6.2f} ms")
    if args.json:
        print(json.dumps({**lat, **jud, "ratio_median": rm, "ratio_p95": rp}))
    return 0 if rm <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
