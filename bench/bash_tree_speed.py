"""How fast is bash_tree? Prints the cost of loading bashlex with and without the
table cache, a hook-like subprocess (import + one analysis) vs `python3 -c pass`,
and in-process analyses per second over realistic commands, the load average
beside each figure. It has no must of its own (the hook's bars are held by
bench/hook_latency.py and bench/bash_guards.py): it always exits 0 once measured.

    .venv/bin/python bench/bash_tree_speed.py [--runs N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from machine_load import load

COMMANDS = [
    "cargo test --workspace", "cargo build --release 2>&1 | tail -20", "git status --short",
    "git diff --stat HEAD~1", 'git commit -m "fix: handle empty input in parser"',
    "ls -la src/", "grep -rn 'TODO' src/ | head -20", "rg -n 'fn main' --type rust",
    "cd crates/core && cargo test -p core -- --nocapture", "python3 -m pytest tests/unit -x -q",
    "SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace --release",
    "for f in $(git diff --name-only); do rustfmt --check $f; done",
    "find . -name '*.rs' -newer Cargo.lock -exec touch {} +", "cat Cargo.toml | head -30",
    "echo \"cargo test --workspace\" >> notes.md", "timeout 600 cargo nextest run -p fs",
    "while ! test -f done.txt; do sleep 5; done", "make -j4 all && ./target/debug/app --help",
    "tar czf /tmp/out.tgz build/ && ls -la /tmp/out.tgz", "sed -n '1,40p' src/lib.rs",
    "npm run build && npm test -- --watch=false", "docker ps --format '{{.Names}}'",
    "awk '{print $1}' access.log | sort | uniq -c | sort -rn | head",
    "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"x\"])' < data.json",
    "bash -c 'cd /tmp && ls'", "env RUST_LOG=debug cargo run -- --config x.toml",
    "if [ -f Cargo.lock ]; then cargo fetch; fi", "xargs -n1 echo < list.txt",
    "git log --oneline --grep='cargo test --all' | head", "jq '.results[] | .name' out.json",
]


def subprocess_ms(code: str, runs: int, env: dict) -> list[tuple[float, float]]:
    """(wall ms, cpu ms) per run; CPU time is steadier on a busy machine."""
    import resource
    out = []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        wall = (time.perf_counter() - t) * 1e3
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3
        out.append((wall, cpu))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)
    state = tempfile.mkdtemp(prefix="sg-bench-")
    try:
        return _run(args, state)
    finally:
        import shutil
        shutil.rmtree(state, ignore_errors=True)


def _run(args, state: str) -> int:
    env = dict(os.environ, SWARMGATE_STATE_DIR=state)
    # warm the cache once
    subprocess.run([sys.executable, "-m", "swarmgate.hooks.bashlex_fast"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    rows = {
        "python3 -c pass": "pass",
        "import bashlex (stock)": "import bashlex",
        "bashlex_fast.load() (cached tables)": "from swarmgate.hooks import bashlex_fast; bashlex_fast.load()",
        "import bash_tree + analyze 1 command": (
            "from swarmgate.hooks.bash_tree import analyze; "
            "analyze('SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace', cwd='.')"),
        "same, analyze(parser='lexical')": (
            "from swarmgate.hooks.bash_tree import analyze; "
            "analyze('SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace', cwd='.', "
            "parser='lexical')"),
    }
    print(f"subprocess, {args.runs} runs each, interleaved: wall median / p95 ms, CPU median ms, "
          "ratios to python3 -c pass (wall, CPU):")
    times: dict[str, list] = {k: [] for k in rows}
    for _ in range(args.runs):
        for label, code in rows.items():
            times[label].extend(subprocess_ms(code, 1, env))
    figure_load = load()
    print(f"  measured at {figure_load}")
    base_w = statistics.median(w for w, _ in times["python3 -c pass"])
    base_c = statistics.median(c for _, c in times["python3 -c pass"])
    for label, pairs in times.items():
        ws = sorted(w for w, _ in pairs)
        med, p95 = statistics.median(ws), ws[int(0.95 * (len(ws) - 1))]
        cpu = statistics.median(c for _, c in pairs)
        print(f"  {label:40s} {med:6.1f} / {p95:6.1f}   cpu {cpu:6.1f}   x{med / base_w:.2f} / x{cpu / base_c:.2f}")

    from swarmgate.hooks import bash_parse, bash_tree
    bash_tree.analyze("true", cwd=".")
    def rate(clear: bool, clock, parser: str = "auto") -> float:
        n = 0
        t = clock()
        while clock() - t < 2.0:
            for c in COMMANDS:
                if clear:
                    bash_parse.clear_cache()
                bash_tree.analyze(c, cwd=".", parser=parser)
                n += 1
        return n / (clock() - t)
    print(f"in-process analyses/s over {len(COMMANDS)} realistic commands "
          "(per wall second / per CPU second):")
    print(f"  parsing every command:       {rate(True, time.perf_counter):6.0f} / "
          f"{rate(True, time.process_time):6.0f}")
    print(f"  with the parse cache (hits): {rate(False, time.perf_counter):6.0f} / "
          f"{rate(False, time.process_time):6.0f}")
    print(f"  parser='lexical', no cache:  {rate(True, time.perf_counter, 'lexical'):6.0f} / "
          f"{rate(True, time.process_time, 'lexical'):6.0f}")
    print(f"  measured at {load()}; no must (figures only)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
