"""Run a corpus through the execution harness and count what got through.

``run(cases)`` starts the worker (worker.py) in a sandbox: ``unshare -m -n`` (a private mount
namespace, where /tmp and /var/tmp are fresh tmpfs and the machine's cargo is covered by a
stand-in, and a network namespace with nothing in it), feeds it the cases and returns its
results. ``figures(results)`` gives the numbers the issue asks for:

- heavy runs started without authorization: workaround cases that left a marker (goal 0,
  must be <= 2 % of the workarounds);
- controls refused: control cases the hook denied or asked about, or that a shim refused (<= 2);
- and, per class, how each workaround was stopped: by the hook (reading), at exec (X01), or it
  ran without starting anything heavy.

`python tests/exec/harness/run.py [--json] [--class NAME] [--limit N]` prints the table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


class HarnessUnavailable(Exception):
    """The sandbox cannot be made here (not root, no unshare); the message says why."""


def available() -> str | None:
    if os.geteuid() != 0:
        return "the execution harness needs root (mount and network namespaces, cgroups)"
    if not shutil.which("unshare"):
        return "the execution harness needs unshare (util-linux)"
    p = subprocess.run(["unshare", "-m", "-n", "--propagation", "private", "true"], capture_output=True, text=True)
    if p.returncode != 0:
        return f"unshare -m -n does not work here: {p.stderr.strip()}"
    return None


def run(cases: list[dict], *, timeout: float = 20.0, python: str | None = None,
        guards_off: tuple = (), config: str | None = None) -> tuple[dict, list[dict]]:
    """(session start report, results) of ``cases`` run in a fresh sandbox; ``guards_off`` are
    switched off in the repository's config (e.g. ("B01",): what the other layers stop alone)."""
    why = available()
    if why:
        raise HarnessUnavailable(why)
    spec = {"cases": cases, "slice": f"sgexec-h{os.getpid()}-{int(time.time()) % 100000}", "timeout": timeout,
            "guards_off": list(guards_off), "config": config}
    env = dict(os.environ)
    env["EXEC_HOST_PATH"] = env.get("PATH", "")
    env.pop("SWARMGATE_STATE_DIR", None)
    argv = ["unshare", "-m", "-n", "--propagation", "private", "--",
            python or sys.executable, os.path.join(HERE, "worker.py")]
    p = subprocess.run(argv, input=json.dumps(spec), capture_output=True, text=True, env=env, cwd=CHECKOUT,
                       timeout=60 + len(cases) * (timeout + 10))
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    if not lines or "session_start" not in lines[0]:
        raise HarnessUnavailable(f"the worker did not start (exit {p.returncode}): {p.stderr[-2000:]}")
    results = [x for x in lines[1:] if "id" in x]
    if len(results) != len(cases):
        raise AssertionError(f"the worker answered {len(results)} of {len(cases)} cases (exit {p.returncode}); "
                             f"stderr: {p.stderr[-2000:]}")
    return lines[0], results


def outcome(r: dict) -> str:
    """One word per case: refused (hook), asked (hook), exec (a shim refused it), escaped (a heavy
    target ran), ran (allowed, nothing heavy started), error."""
    if r.get("error"):
        return "error"
    if r["hook"] == "deny":
        return "refused"
    if r["hook"] == "ask":
        return "asked"
    if r.get("markers"):
        return "escaped" if r["kind"] == "workaround" else "ran-heavy"
    if r.get("exec_refusals") or r.get("rc") == 249:
        return "exec"
    return "ran"


def figures(results: list[dict]) -> dict:
    work = [r for r in results if r["kind"] == "workaround"]
    ctrl = [r for r in results if r["kind"] == "control"]
    by_class: dict = {}
    for r in work:
        row = by_class.setdefault(r["class"], {"cases": 0, "refused": 0, "asked": 0, "exec": 0, "ran": 0,
                                               "escaped": 0, "contained": 0, "error": 0})
        row["cases"] += 1
        o = outcome(r)
        row[o if o in row else "ran"] += 1
        if o == "escaped" and r.get("rewritten"):
            row["contained"] += 1   # it started inside its agent's cgroup (X02's rewrite): capped
    escaped = [r for r in work if outcome(r) == "escaped"]
    # a control counts as refused when a layer refused it: the hook (deny/ask) or a shim (exit 249, an
    # Exec refusal in the log); a control that ran and failed on its own (a tool or file this world
    # lacks) was not refused, and is listed apart
    refused_controls = [r for r in ctrl if outcome(r) in ("refused", "asked", "exec")]
    failed_controls = [r for r in ctrl if outcome(r) == "ran" and r.get("rc") not in (0, None)]
    return {"workarounds": len(work), "classes": len(by_class), "controls": len(ctrl),
            "escaped": len(escaped), "escaped_pct": round(100.0 * len(escaped) / max(len(work), 1), 2),
            "controls_refused": len(refused_controls), "by_class": by_class,
            "escaped_cases": [(r["id"], r["command"], r["markers"]) for r in escaped],
            "refused_controls": [(r["id"], r["command"], outcome(r), r.get("rc"), r.get("reason", "")[:200],
                                  r.get("stderr", "")[-200:]) for r in refused_controls],
            "failed_controls": [(r["id"], r["command"], r.get("rc")) for r in failed_controls],
            "errors": [(r["id"], r.get("error")) for r in results if r.get("error")]}


def table(fig: dict) -> str:
    lines = ["stopped: hook = at reading (PreToolUse), exec = where the program starts (X01); ran = allowed, "
             "started nothing heavy; STARTED = a heavy run started without authorization, of which contained = "
             "inside its agent's cgroup (X02)",
             f"{'class':<34} {'cases':>5} {'hook':>5} {'exec':>5} {'ran':>5} {'STARTED':>7} {'contained':>9}"]
    for cls, row in sorted(fig["by_class"].items()):
        lines.append(f"{cls:<34} {row['cases']:>5} {row['refused'] + row['asked']:>5} {row['exec']:>5} "
                     f"{row['ran']:>5} {row['escaped']:>7} {row.get('contained', 0):>9}")
    tot = {k: sum(row.get(k, 0) for row in fig["by_class"].values())
           for k in ("refused", "asked", "exec", "ran", "escaped", "contained")}
    lines.append(f"{'total':<34} {fig['workarounds']:>5} {tot['refused'] + tot['asked']:>5} {tot['exec']:>5} "
                 f"{tot['ran']:>5} {tot['escaped']:>7} {tot['contained']:>9}")
    lines.append(f"workarounds {fig['workarounds']} in {fig['classes']} classes; heavy runs started without "
                 f"authorization: {fig['escaped']} ({fig['escaped_pct']} %); controls {fig['controls']}, "
                 f"refused {fig['controls_refused']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, CHECKOUT)
    from tests.exec.corpus import exec_corpus, reader_corpus  # noqa: PLC0415 - run as a script: the checkout first

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--class", dest="cls", action="append", default=[])
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--corpus", choices=("exec", "reader"), default="exec",
                   help="exec: this harness's own corpus; reader: the bash reader's (tests/corpus/)")
    p.add_argument("--off", action="append", default=[], metavar="CODE",
                   help="switch a guard off in the repository's config (--off B01: the layers behind reading)")
    args = p.parse_args(argv)
    cases, config = exec_corpus.cases(), None
    if args.corpus == "reader":
        cases, config = reader_corpus.cases(), reader_corpus.config()
    if args.cls:
        cases = [c for c in cases if c["class"] in args.cls]
    if args.limit:
        cases = cases[:args.limit]
    start, results = run(cases, guards_off=tuple(args.off), config=config)
    fig = figures(results)
    if args.json:
        print(json.dumps({"figures": fig, "results": results, "session_start": start}, indent=1))
    else:
        print(table(fig))
        for x in fig["escaped_cases"]:
            print("ESCAPED", x)
        for x in fig["refused_controls"]:
            print("CONTROL REFUSED", x)
        for x in fig["errors"]:
            print("ERROR", x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
