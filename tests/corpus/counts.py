#!/usr/bin/env python3
"""Print the corpus counts by class (workarounds, benign controls, real-world commands).

    .venv/bin/python -m tests.corpus.counts
"""
from __future__ import annotations

import collections
import json
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tests.corpus import benign, workarounds  # noqa: E402 - after the path for `python tests/corpus/counts.py`


def real_world() -> list:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_world.json"), encoding="utf-8") as f:
        return json.load(f)


def main() -> int:
    w = collections.Counter(e.cls for e in workarounds.ENTRIES)
    b = collections.Counter(e.cls for e in benign.ENTRIES)
    rw = real_world()
    print(f"workarounds: {sum(w.values())} in {len(w)} classes (each refused for a subagent)")
    for cls, n in sorted(w.items()):
        print(f"  {n:4d}  {cls}")
    print(f"benign controls: {sum(b.values())} in {len(b)} classes (each passes every Bash guard, main and subagent)")
    for cls, n in sorted(b.items()):
        print(f"  {n:4d}  {cls}")
    src = collections.Counter(x["source"].split("@")[0] for x in rw)
    exp = collections.Counter(x["expect"] for x in rw)
    print(f"real-world: {len(rw)} commands; " + ", ".join(f"{k}: {v}" for k, v in sorted(exp.items())))
    for s, n in src.most_common():
        print(f"  {n:4d}  {s}")
    why = collections.Counter(x.get("why") for x in rw if x["expect"] != "pass")
    for r, n in why.most_common():
        print(f"        refused by design ({n}): {r}")
    deferred = collections.Counter(x.get("why") for x in rw if x.get("deferred"))
    for r, n in deferred.most_common():
        print(f"        passed, judged at exec time by X01 ({n}; refused where the shims are not on PATH): {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
