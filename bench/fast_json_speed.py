#!/usr/bin/env python3
"""fast_json: what the hook pays for JSON, and where the pure-Python reader stops paying off.

(a) a fresh `python -I -S` process (the hook's interpreter, started as the hook is) imports
    fast_json, loads a typical ~400-byte PreToolUse Bash payload, dumps a typical answer and a
    decision-log line; the child times that part itself (perf_counter) and the parent takes the
    child's whole CPU time (getrusage). Base (default: main's swarmgate/fast_json.py, the C
    scanner driven directly) and this tree's module, interleaved, median of --runs each.
(b) loads and dumps of 1 KB, 16 KB and 64 KB documents in one process: the pure-Python reader /
    writer against the C accelerator `_json` (what the module uses past LOADS_PURE_MAX, and for
    everything once `_json` is loaded); the one-off cost of loading `_json` comes from (a).

    .venv/bin/python bench/fast_json_speed.py [--runs 30] [--base main]
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
import timeit
from pathlib import Path

from machine_load import load

ROOT = Path(__file__).resolve().parents[1]

PAYLOAD = json.dumps({
    "session_id": "9b2f6c1e-4a7d-4f3e-9c2b-8e1d5a6f7b30",
    "transcript_path": "/root/.claude/projects/-work-repo/9b2f6c1e-4a7d-4f3e-9c2b-8e1d5a6f7b30.jsonl",
    "cwd": "/work/repo", "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
    "tool_input": {"command": "ls -la src && git status --short", "description": "List the sources and the status"},
    "tool_use_id": "toolu_01HJ7bXk3Z9qYwVr5mN2pLcD"}, separators=(",", ":"))
ANSWER = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                 "permissionDecisionReason": "swarmgate: no guard applies"}}
LOG_LINE = {"ts": 1764561234.5, "event": "PreToolUse", "tool": "Bash", "session": "9b2f6c1e", "agent": None,
            "command": "ls -la src && git status --short", "decision": "allow", "codes": [], "ms": 3.2}

CHILD = r"""
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import fast_json
p = fast_json.loads(sys.argv[2])
a = fast_json.dumps(ANSWER, ensure_ascii=True)
l = fast_json.dumps(LOG, separators=(",", ":"), ensure_ascii=False)
t1 = time.perf_counter()
sys.stdout.write("%d %d" % ((t1 - t0) * 1e9, "_json" in sys.modules))
"""


def child_code() -> str:
    return f"ANSWER = {ANSWER!r}\nLOG = {LOG_LINE!r}\n" + CHILD


def one_process(module_dir: str) -> tuple[float, float, bool]:
    """(in-child microseconds for import + loads + dumps, the child's CPU ms, whether _json was loaded)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-I", "-S", "-c", child_code(), module_dir, PAYLOAD],
                         capture_output=True, text=True, check=True).stdout.split()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return int(out[0]) / 1e3, cpu, out[1] == "1"


def fresh_processes(runs: int, base: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for name, text in (("base", subprocess.run(["git", "-C", str(ROOT), "show", f"{base}:swarmgate/fast_json.py"],
                                                   capture_output=True, text=True, check=True).stdout),
                           ("this", (ROOT / "swarmgate" / "fast_json.py").read_text())):
            d = Path(tmp) / name
            d.mkdir()
            (d / "fast_json.py").write_text(text)
            dirs[name] = str(d)
        for d in dirs.values():   # compile the bytecode once, outside the measure
            one_process(d)
        got: dict[str, list] = {n: [] for n in dirs}
        for _ in range(runs):
            for n, d in dirs.items():
                got[n].append(one_process(d))
        print(f"(a) fresh `python -I -S`: import fast_json + loads({len(PAYLOAD)} B payload) + dumps(answer) "
              f"+ dumps(log line), median of {runs} {load()}")
        med = {}
        for n in dirs:
            us = statistics.median(g[0] for g in got[n])
            cpu = statistics.median(g[1] for g in got[n])
            med[n] = (us, cpu)
            label = f"base ({base})" if n == "base" else "this tree"
            print(f"  {label:<14} in-child {us:7.0f} us   whole process CPU {cpu:6.2f} ms   "
                  f"_json loaded: {got[n][0][2]}")
        print(f"  saved: {med['base'][0] - med['this'][0]:.0f} us in-child, "
              f"{med['base'][1] - med['this'][1]:.2f} ms process CPU")


def structured(size: int) -> str:
    """A JSON text of about `size` characters of many small values: keys, paths, numbers, booleans."""
    items, n = [], 0
    while n < size:
        k = len(items)
        item = {"file_path": f"/work/repo/src/module_{k}.py", "old_string": f"def f{k}(x):\n    return x + {k}\n",
                "replace_all": k % 2 == 0, "line": k * 7, "ratio": k / 3, "note": "caf\u00e9 \u2014 ok"}
        items.append(item)
        n += len(json.dumps(item)) + 2
    return json.dumps({"session_id": "s", "tool_name": "MultiEdit", "tool_input": {"edits": items}})


def write_payload(size: int) -> str:
    """A PreToolUse Write payload whose content is about `size` characters of this repository's Python."""
    source = "".join(p.read_text() for p in sorted((ROOT / "swarmgate").glob("*.py")))[:size]
    return json.dumps({"session_id": "s", "cwd": "/work/repo", "hook_event_name": "PreToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": "/work/repo/src/x.py", "content": source}})


def best_us(fn, arg) -> float:
    n, t = 1, 0.0
    while t < 0.05:
        n *= 2
        t = timeit.timeit(lambda: fn(arg), number=n)
    return min(timeit.repeat(lambda: fn(arg), number=n, repeat=5)) / n * 1e6


def throughput() -> None:
    sys.path.insert(0, str(ROOT))
    from swarmgate import fast_json

    import _json
    scan = fast_json._load_c() and fast_json._scan
    encoder = _json.make_encoder({}, fast_json._default, _json.encode_basestring_ascii, None, ": ", ", ",
                                 False, False, True)
    print(f"(b) one process, best of 5, microseconds {load()}")
    print(f"  {'document':<14} {'chars':>6} {'commas':>6} {'loads py':>9} {'loads C':>8} {'dumps py':>9} "
          f"{'dumps C':>8}")
    for shape in (structured, write_payload):
        for size in (1 << 10, 4 << 10, 16 << 10, 64 << 10):
            text = shape(size)
            obj = json.loads(text)
            assert fast_json._read(text) == obj
            assert fast_json._write(obj, True, (", ", ": "), False) == json.dumps(obj)
            lp = best_us(fast_json._read, text)
            lc = best_us(lambda t: scan(t, 0), text)
            dp = best_us(lambda o: fast_json._write(o, True, (", ", ": "), False), obj)
            dc = best_us(lambda o: "".join(encoder(o, 0)), obj)
            print(f"  {shape.__name__:<14} {len(text):>6} {text.count(','):>6} {lp:>9.1f} {lc:>8.1f} {dp:>9.1f} "
                  f"{dc:>8.1f}")
    print(f"  loads reads in Python up to LOADS_PURE_MAX = {fast_json.LOADS_PURE_MAX} characters and "
          f"LOADS_PURE_COMMAS = {fast_json.LOADS_PURE_COMMAS} commas")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--base", default="main", help="the git revision whose fast_json.py is the base")
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}, {time.strftime('%H:%M:%S')}")
    fresh_processes(args.runs, args.base)
    throughput()
    return 0


if __name__ == "__main__":
    sys.exit(main())
