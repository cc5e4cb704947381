"""Bench: what the exec-time shims and per-agent containment cost on calls that are not heavy
(issue 10). All pairs measured interleaved in one run, medians of N, ratios side by side:

1. shim fast path: `cargo --version` through the shim vs the same cargo direct (a stand-in cargo,
   a tiny shell script, so the difference is the shim alone; the machine's real cargo too when it
   has one). Must: the shim adds <= 5 ms.
2. shim slow path (a runner whose files hold commands: `make build`, read by the bash reader on
   every call) vs direct: reported, no bar (the price of reading recipes).
3. containment per Bash call, the command side: `bash -c` of the rewritten command (joins the
   agent cgroup first) vs the original. Must: <= 5 ms.
4. containment per Bash call, the hook side: `swarmgate hook PreToolUse` for a subagent call
   with X02 on vs X02 off (the cgroup already made, as for every call after an agent's first).
   Reported, no bar (the hook itself is measured by bench/hook_latency.py).
5. the in-process check of pytest (hooks/inprocess_pytest.py) on every Python start: `python -c pass`
   with the session's site directory first on PYTHONPATH vs without. Must: <= 5 ms.
6. both layers on a pytest run that is not heavy (300 tests): `pytest tests/unit` typed, through the
   shim and its mark (judged once, by the shim) vs neither layer, and the venv's pytest by absolute
   path, past every shim (judged in-process, one judge process) vs unchecked. Reported, no bar.

Exits 1 when a must is missed. Prints the load average beside the numbers (the lead re-runs
benches on a quiet machine). Usage: .venv/bin/python bench/exec_layers.py [N]
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
MUST_MS = 5.0


def timed(argv: list[str], **kw) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{argv} exited {r.returncode}: {r.stderr.decode(errors='replace').strip()[:300]}")
    return dt


def pair(n: int, a: list, a_kw: dict, b: list, b_kw: dict) -> tuple[float, float]:
    """(median of a, median of b), run interleaved after one warm-up each."""
    timed(a, **a_kw)
    timed(b, **b_kw)
    got: tuple[list, list] = ([], [])
    for _ in range(n):
        got[0].append(timed(a, **a_kw))
        got[1].append(timed(b, **b_kw))
    return statistics.median(got[0]), statistics.median(got[1])


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    from swarmgate.config import load_config  # noqa: PLC0415 - after sys.path is set
    from swarmgate.hooks import exec_shims  # noqa: PLC0415
    from swarmgate.hosts import agent_cgroups, cgroups  # noqa: PLC0415

    tmp = tempfile.mkdtemp(prefix="swarmgate-bench-exec-")
    slice_name = f"sgbench-exec-{os.getpid()}"
    repo = os.path.join(tmp, "repo")
    state = os.path.join(tmp, "state")
    standin = os.path.join(tmp, "standin")
    for d in (os.path.join(repo, ".claude"), state, standin):
        os.makedirs(d)
    cfg_text = (f'[memory]\ntotal = "1G"\nslice = "{slice_name}"\n[agents]\nmemory_cap = "256M"\n'
                '[heavy]\npatterns = ["pytest tests/heavy"]\n')
    with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
        f.write(cfg_text)
    with open(os.path.join(repo, "Makefile"), "w") as f:
        f.write("build:\n\t@true\n")
    os.makedirs(os.path.join(repo, "tests", "unit"))
    with open(os.path.join(repo, "tests", "unit", "test_many.py"), "w") as f:
        f.write("import pytest\n\n\n@pytest.mark.parametrize('i', range(300))\ndef test_one(i):\n    assert i >= 0\n")
    with open(os.path.join(standin, "cargo"), "w") as f:
        f.write("#!/bin/sh\necho 'cargo 1.0.0 (stand-in)'\n")
    os.chmod(os.path.join(standin, "cargo"), 0o755)
    os.environ["SWARMGATE_STATE_DIR"] = state
    env = dict(os.environ, SWARMGATE_STATE_DIR=state, CLAUDE_PROJECT_DIR=repo, CLAUDECODE="1")
    for var in ("SWARMGATE_BREAK", "CLAUDE_ENV_FILE", "SWARMGATE_SHIM_HOPS"):
        env.pop(var, None)
    shims = os.path.join(state, "sessions", "bench", "shims")
    base_path = os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"])
    real_cargo = shutil.which("cargo")
    try:
        config = load_config(repo)
        exec_shims.write_dir(shims, config, repo=repo, session="bench")
        through = dict(env, PATH=os.pathsep.join([shims, standin, base_path]))
        direct = dict(env, PATH=os.pathsep.join([standin, base_path]))
        results = {}
        version = ["cargo", "--version"]
        results["shim fast path: cargo --version (stand-in)"] = pair(
            n, version, {"cwd": repo, "env": through}, version, {"cwd": repo, "env": direct})
        if real_cargo:
            real = os.path.dirname(real_cargo)
            with_shim = dict(env, PATH=os.pathsep.join([shims, real, base_path]))
            without = dict(env, PATH=os.pathsep.join([real, base_path]))
            results["shim fast path: cargo --version (this machine's)"] = pair(
                n, version, {"cwd": repo, "env": with_shim}, version, {"cwd": repo, "env": without})
        results["shim slow path: make build (recipes read)"] = pair(
            n, ["make", "build"], {"cwd": repo, "env": through}, ["make", "build"], {"cwd": repo, "env": direct})
        # containment: the cgroup of one agent, made once as the first call would
        owner = {"pid": os.getpid(), "start": None}
        made = agent_cgroups.ensure(config, owner, "benchagent", "implementer", "bench")
        joined = agent_cgroups.contained_command("true", made.paths)
        hook = os.path.join(os.path.dirname(sys.executable), "swarmgate")
        payload = json.dumps({"session_id": "bench", "cwd": repo, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "agent_id": "benchagent", "agent_type": "implementer",
                              "tool_input": {"command": "ls -la", "description": "d"}})
        off_repo = os.path.join(tmp, "repo-off")
        os.makedirs(os.path.join(off_repo, ".claude"))
        with open(os.path.join(off_repo, ".claude", "swarmgate.toml"), "w") as f:
            f.write(cfg_text + '[guards]\nX02 = "off"\n')
        payload_off = payload.replace(json.dumps(repo), json.dumps(off_repo))

        site = dict(env, PYTHONPATH=os.path.join(shims, exec_shims.SITE_DIR))
        results["in-process check: python -c pass with the site directory"] = pair(
            n, [sys.executable, "-c", "pass"], {"env": site}, [sys.executable, "-c", "pass"], {"env": env})
        bindir = os.path.dirname(sys.executable)
        typed = ["pytest", "-q", "-p", "no:cacheprovider", "tests/unit"]
        results["pytest tests/unit (300 tests) typed: shim + in-process vs none"] = pair(
            max(5, n // 4), typed, {"cwd": repo, "env": dict(site, PATH=os.pathsep.join([shims, bindir, base_path]))},
            typed, {"cwd": repo, "env": dict(env, PATH=os.pathsep.join([bindir, base_path]))})
        by_path = [os.path.join(bindir, "pytest")] + typed[1:]
        results["in-process check: .venv/bin/pytest tests/unit by path"] = pair(
            max(5, n // 4), by_path, {"cwd": repo, "env": site}, by_path, {"cwd": repo, "env": env})
        results["containment, command side: bash -c with the join line"] = pair(
            n, ["bash", "-c", joined], {}, ["bash", "-c", "true"], {})
        got: tuple[list, list] = ([], [])
        for i in range(max(10, n // 2) + 1):
            for k, (text, where) in enumerate(((payload, repo), (payload_off, off_repo))):
                t0 = time.perf_counter()
                r = subprocess.run([hook, "hook", "PreToolUse"], input=text.encode(), capture_output=True, cwd=where,
                                   env=dict(env, CLAUDE_PROJECT_DIR=where))
                dt = time.perf_counter() - t0
                if r.returncode != 0 or (k == 0 and b"updatedInput" not in r.stdout):
                    raise SystemExit(f"hook call failed: {r.stdout[:300]!r} {r.stderr[:300]!r}")
                if i:
                    got[k].append(dt)
        results["containment, hook side: PreToolUse X02 on vs off"] = (statistics.median(got[0]),
                                                                      statistics.median(got[1]))
    finally:
        try:
            cgroups.get("auto").remove_slice(slice_name)
        except Exception as e:  # noqa: BLE001 - cleanup reports and goes on
            print(f"cleanup: {e}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)

    load = os.getloadavg()[0]
    musts = {"shim fast path: cargo --version (stand-in)", "containment, command side: bash -c with the join line",
             "in-process check: python -c pass with the site directory"}
    print(f"exec-time layers, {n} runs per side, interleaved, medians "
          f"(load average {load:.1f} on {os.cpu_count()} cores)")
    print(f"  {'':<62} {'with':>9} {'without':>9} {'added':>9} {'ratio':>7}")
    missed = []
    for name, (a, b) in results.items():
        added = (a - b) * 1000
        bar = ""
        if name in musts:
            ok = added <= MUST_MS
            bar = f"  must <= {MUST_MS:g} ms: {'OK' if ok else 'MISSED'}"
            if not ok:
                missed.append(name)
        print(f"  {name:<62} {a * 1000:7.1f}ms {b * 1000:7.1f}ms {added:7.1f}ms {a / b:6.2f}x{bar}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
