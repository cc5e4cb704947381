"""Bench: the runner's own cost on a trivial command (issue 5 bar: ratio ≤ 3×).

    run-with-memory-cap 1G -- true     vs     python3 -c pass

Both measured interleaved in one run (real cgroups, a temporary slice with a
2G total and a temporary state dir), medians of N runs. The baseline is the
same interpreter the runner runs on (sys.executable); the `python3` found on
PATH is printed too, for reference (here it may be a slower shim).

The load average is printed beside the figures; exit 1 when the ratio misses the bar.

Usage: .venv/bin/python bench/runner_overhead.py [N]
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from machine_load import load, verdict


def timed(argv: list[str], **kw) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{argv} exited {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
    return dt


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    runner = os.path.join(os.path.dirname(sys.executable), "run-with-memory-cap")
    if not os.path.exists(runner):
        print(f"run-with-memory-cap not installed beside {sys.executable}", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="swarmgate-bench-ov-")
    slice_name = f"sgbench-ov-{os.getpid()}"
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, ".claude"))
    with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
        f.write(f'[memory]\ntotal = "2G"\nslice = "{slice_name}"\n')
    env = dict(os.environ, SWARMGATE_STATE_DIR=os.path.join(tmp, "state"), CLAUDE_PROJECT_DIR=repo)
    env.pop("SWARMGATE_BREAK", None)
    path_python = shutil.which("python3")
    wrapped, bare, on_path = [], [], []
    try:
        timed([runner, "1G", "--", "true"], cwd=repo, env=env)  # warm-up: slice, state dir, page cache
        timed([sys.executable, "-c", "pass"])
        for _ in range(n):
            wrapped.append(timed([runner, "1G", "--", "true"], cwd=repo, env=env))
            bare.append(timed([sys.executable, "-c", "pass"]))
            if path_python:
                on_path.append(timed([path_python, "-c", "pass"]))
    finally:
        from swarmgate.hosts.cgroups import get

        try:
            get("auto").remove_slice(slice_name)
        except Exception as e:  # noqa: BLE001
            print(f"cleanup: {e}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    figure_load = load()
    mw, mb = statistics.median(wrapped), statistics.median(bare)
    ratio = mw / mb
    print(f"runner overhead, {n} runs each, interleaved, medians  {figure_load}")
    print(f"  run-with-memory-cap 1G -- true : {mw * 1000:7.1f} ms")
    print(f"  {sys.executable} -c pass : {mb * 1000:7.1f} ms")
    if on_path:
        print(f"  (python3 on PATH: {path_python} -c pass : {statistics.median(on_path) * 1000:.1f} ms)")
    print(f"  ratio: {ratio:.2f}x ({verdict(ratio <= 3, '<= 3x')})  {figure_load}")
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
