"""Benchmark: gate-staged cold (empty verdict cache) vs warm (every verdict cached).

Builds a throw-away repository with 240 files (200 Python modules, 20 test
modules, 20 data files) and three real stages:

  compile  python -m compileall over every module
  grep     no FIXME-BLOCKER marker anywhere
  pytest   a small pytest run (20 test modules)

and times the `gate-staged` console script end to end (process start, config,
index read, keys, stages, summary) in the same run, side by side:

  cold: the state dir's gate cache is removed before each run (verdicts,
        fingerprints and tool versions all recomputed; the tree is exported)
  warm: the cache is populated and nothing changed (every stage says cached)
  warm on a terminal: the same, stdout on a pty, so the rich table is drawn
  comment: only a comment and a docstring changed in one module since the
        cached run (per-function keys: every stage still cached)

Prints the medians and the ratio cold/warm, the load average beside each. Goal (the bench's
must): >= 20x; exit 1 when it is missed.

    .venv/bin/python bench/gate_cache.py [--runs N]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine_load import load, verdict

MODULES = 200
TESTS = 20
DATA = 20


def module_source(i: int) -> str:
    funcs = []
    for j in range(6):
        funcs.append(f'''
def f{i}_{j}(x, y={j}):
    """Function {j} of module {i}."""
    # keep it simple
    total = 0
    for k in range(x):
        total += k * y + {i}
    return total
''')
    return f'"""Module {i}."""\nimport math\n\nSCALE = {i}\n' + "".join(funcs) + f'''

class Thing{i}:
    def area(self, r):
        return math.pi * r * r * SCALE
'''


def test_source(i: int) -> str:
    return f'''import pkg.m{i:03d} as m


def test_f{i}():
    assert m.f{i}_0(3, 1) == sum(k + {i} for k in range(3))


def test_thing{i}():
    assert m.Thing{i}().area(1) > 0 or m.SCALE == 0
'''


def git(repo: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build_repo(root: Path, env: dict) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "data").mkdir()
    (repo / ".claude").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    for i in range(MODULES):
        (repo / "pkg" / f"m{i:03d}.py").write_text(module_source(i))
    for i in range(TESTS):
        (repo / "tests" / f"test_m{i:03d}.py").write_text(test_source(i))
    for i in range(DATA):
        (repo / "data" / f"d{i:02d}.txt").write_text(f"record {i}\n" * 50)
    py = sys.executable
    (repo / ".claude" / "swarmgate.toml").write_text(f'''
[[gate.stages]]
name = "compile"
command = "{py} -m compileall -q pkg tests"
inputs = ["pkg/**/*.py", "tests/**/*.py"]

[[gate.stages]]
name = "grep"
command = "! grep -rn FIXME-BLOCKER pkg tests data"
inputs = ["pkg/**", "tests/**", "data/**"]
python_inputs = "content"

[[gate.stages]]
name = "pytest"
command = "{py} -m pytest -q -p no:cacheprovider tests"
inputs = ["pkg/**/*.py", "tests/**/*.py"]
''')
    git(repo, "init", "-q", env=env)
    git(repo, "add", ".", env=env)
    git(repo, "commit", "-q", "--no-verify", "-m", "bench base", env=env)
    return repo


def _ms(xs: list[float]) -> str:
    return ', '.join(f'{x * 1000:.0f}' for x in xs)


def gate_cli() -> list[str]:
    beside = Path(sys.executable).parent / "gate-staged"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "swarmgate", "gate-staged"]


def run_gate(repo: Path, env: dict, expect_cached: int | None) -> float:
    t0 = time.perf_counter()
    cp = subprocess.run([*gate_cli(), "--repo", str(repo)], env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if cp.returncode != 0:
        sys.exit(f"gate-staged failed ({cp.returncode}):\n{cp.stdout}\n{cp.stderr}")
    if expect_cached is not None and f"{expect_cached} cached)" not in cp.stdout:
        sys.exit(f"expected {expect_cached} cached stages:\n{cp.stdout}")
    return dt


def run_gate_tty(repo: Path, env: dict, expect_cached: int) -> float:
    """The same run with stdout on a pseudo-terminal: the rich table is drawn (as in a user's shell)."""
    import pty

    master, slave = pty.openpty()
    t0 = time.perf_counter()
    proc = subprocess.Popen([*gate_cli(), "--repo", str(repo)], env=env, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    rc = proc.wait()
    dt = time.perf_counter() - t0
    os.close(master)
    text = b"".join(chunks).decode(errors="replace")
    if rc != 0 or f"{expect_cached} cached)" not in text or "┃" not in text:
        sys.exit(f"tty run unexpected ({rc}):\n{text}")
    return dt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="swarmgate-bench-gate-"))
    try:
        state = root / "state"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(SWARMGATE_STATE_DIR=str(state), HOME=str(root), GIT_CONFIG_NOSYSTEM="1",
                   GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@bench.invalid",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@bench.invalid")
        env.pop("SWARMGATE_BREAK", None)
        repo = build_repo(root, env)
        nfiles = int(subprocess.run(["git", "ls-files"], cwd=repo, env=env, capture_output=True,
                                    text=True).stdout.count("\n"))
        stages = 3 + 3  # the rules stamp and the two common stages run too
        cold, warm, comment = [], [], []
        for _ in range(args.runs):
            shutil.rmtree(state / "gate-cache", ignore_errors=True)
            cold.append(run_gate(repo, env, expect_cached=0))
        cold_load = load()
        for _ in range(args.runs):
            warm.append(run_gate(repo, env, expect_cached=stages))
        warm_load = load()
        tty = [run_gate_tty(repo, env, expect_cached=stages) for _ in range(args.runs)]
        tty_load = load()
        mod = repo / "pkg" / "m007.py"
        original = mod.read_text()
        for n in range(args.runs):
            mod.write_text(original.replace("# keep it simple", f"# comment edit {n}")
                           .replace("Function 0 of module 7.", f"Function 0, docstring edit {n}."))
            git(repo, "add", "pkg/m007.py", env=env)
            comment.append(run_gate(repo, env, expect_cached=stages - 3))  # compile+pytest cached, grep/common rerun
        comment_load = load()
        c, w, m = statistics.median(cold), statistics.median(warm), statistics.median(comment)
        print(f"repository: {nfiles} files; stages: compile, grep, pytest (+ rules-stamp, 2 common stages)")
        print(f"runs per case: {args.runs}; end to end through the gate-staged console script")
        print(f"cold (empty cache)         median {c * 1000:8.1f} ms   runs: {_ms(cold)}  {cold_load}")
        print(f"warm (all cached)          median {w * 1000:8.1f} ms   runs: {_ms(warm)}  {warm_load}")
        print(f"comment-only change        median {m * 1000:8.1f} ms   runs: {_ms(comment)}  {comment_load}")
        t = statistics.median(tty)
        print(f"warm, on a terminal (rich) median {t * 1000:8.1f} ms   runs: {_ms(tty)}  {tty_load}")
        ratio = c / w
        print(f"ratio cold/warm: {ratio:.1f}x ({verdict(ratio >= 20, '>= 20x')})")
        print(f"ratio cold/warm on a terminal: {c / t:.1f}x; cold/comment-only: {c / m:.1f}x")
        return 0 if ratio >= 20 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
