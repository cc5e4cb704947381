"""How fast is bash_tree? Prints (no asserts): the cost of loading bashlex with
and without the table cache, a hook-like subprocess (import + one analysis) vs
`python3 -c pass`, and in-process analyses per second over realistic commands.

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


def subprocess_ms(code: str, runs: int, env: dict) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        out.append((time.perf_counter() - t) * 1e3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)
    state = tempfile.mkdtemp(prefix="sg-bench-")
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
    }
    print(f"subprocess wall time, {args.runs} runs each, interleaved "
          "(median / p95 ms, median ratio to python -c pass):")
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.runs):
        for label, code in rows.items():
            times[label].extend(subprocess_ms(code, 1, env))
    base = statistics.median(times["python3 -c pass"])
    for label, ms in times.items():
        ms.sort()
        med, p95 = statistics.median(ms), ms[int(0.95 * (len(ms) - 1))]
        print(f"  {label:42s} {med:7.1f} / {p95:7.1f}   x{med / base:.2f}")

    from swarmgate.hooks import bash_tree
    bash_tree.analyze("true", cwd=".")
    n = 0
    t = time.perf_counter()
    while time.perf_counter() - t < 2.0:
        for c in COMMANDS:
            bash_tree._cache.clear()
            bash_tree.analyze(c, cwd=".")
            n += 1
    cold = n / (time.perf_counter() - t)
    n = 0
    t = time.perf_counter()
    while time.perf_counter() - t < 2.0:
        for c in COMMANDS:
            bash_tree.analyze(c, cwd=".")
            n += 1
    warm = n / (time.perf_counter() - t)
    print(f"in-process analyses/s over {len(COMMANDS)} realistic commands: "
          f"{cold:.0f}/s parsing each time, {warm:.0f}/s with the parse cache")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
