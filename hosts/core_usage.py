"""core-usage: is a "31-thread" job really using 31 cores? (SPEC §5.5, seed 003 §2.4)

Over a window, for the whole process tree of PID:
- cores in use = Δ CPU seconds of the tree ÷ Δ wall seconds;
- threads computing at once = Σ per-thread Δ CPU ÷ the largest per-thread Δ
  (N equally busy threads give N, whatever else the machine is doing).
Both below (threads.heavy_default ÷ 4) → "too few cores" alert, unless the
program has written `serial now: <reason>` to its state file. The second
number tells a serial program from a busy machine: on a busy machine cores in
use drop but the N threads still all compute.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence

import psutil

from swarmgate import cell_outcome as outcome
from swarmgate.alerts import write_alert
from swarmgate.break_switch import broken
from swarmgate.config import ConfigError, load_config
from swarmgate.exit_codes import Exit
from swarmgate.host_defaults import thread_default
from swarmgate.front_door import entry
from swarmgate.selftest import Cell, Suite
from swarmgate.statefile import read_text
from swarmgate.tool_parser import ToolParser

SERIAL_MARK = "serial now:"


def tree_thread_times(pid: int) -> dict[tuple[int, int], float]:
    """CPU seconds per (pid, tid) of the process tree rooted at ``pid``."""
    out: dict[tuple[int, int], float] = {}
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return out
    for p in procs:
        try:
            for t in p.threads():
                out[(p.pid, t.id)] = t.user_time + t.system_time
        except psutil.Error:
            continue
    return out


def measure(before: dict, after: dict, wall: float) -> dict:
    """Pure: the two numbers from two samples of per-thread CPU seconds."""
    deltas = [max(after[k] - before.get(k, 0.0), 0.0) for k in after]
    total = sum(deltas)
    top = max(deltas, default=0.0)
    return {
        "cores_in_use": round(total / wall, 3) if wall > 0 else 0.0,
        "threads_at_once": round(total / top, 3) if top > 0 else 0.0,
        "cpu_seconds": round(total, 3),
        "wall_seconds": round(wall, 3),
        "threads_seen": len(after),
    }


def serial_reason(state_file: str | None) -> str | None:
    """The reason after `serial now:` in the program's state file, if it wrote one."""
    if not state_file:
        return None

    try:
        text = read_text(state_file) or ""
    except Exception:  # noqa: BLE001 - an unreadable state file is simply no declaration
        return None
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.lower().startswith(SERIAL_MARK):
            reason = line[len(SERIAL_MARK):].strip()
            return reason or None
    return None


def judge(m: dict, heavy_default: int, serial: str | None) -> str | None:
    """Pure: the alert text, or None when the job uses enough cores (or declared serial)."""
    floor = heavy_default / 4.0
    if m["cores_in_use"] >= floor or m["threads_at_once"] >= floor:
        return None
    if serial and not broken("ignore-serial-note"):
        return None
    if broken("no-too-few-cores-alert"):
        return None
    return (f"too few cores: {m['cores_in_use']:.2f} cores in use and {m['threads_at_once']:.2f} threads "
            f"computing at once, both below {heavy_default}/4 = {floor:g}. The job runs serially; "
            f"parallelise it, or have it write `serial now: <reason>` to its state file for a serial phase.")


def sample(pid: int, window: float) -> dict:
    t0 = time.monotonic()
    before = tree_thread_times(pid)
    time.sleep(window)
    after = tree_thread_times(pid)
    return measure(before, after, time.monotonic() - t0)


@entry("core-usage")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(prog="core-usage", description=__doc__.split("\n")[0])
    p.add_argument("pid", type=int, nargs="?")
    p.add_argument("--window", type=float, default=600.0, help="seconds to measure over (default 600)")
    p.add_argument("--state-file", help="the program's state file (may hold `serial now: <reason>`)")
    p.add_argument("--threads", type=int, help="the thread default (default: [threads] heavy_default)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.pid is None:
        p.error("PID is required")
    if args.window <= 0:
        p.error("--window must be > 0")
    if not psutil.pid_exists(args.pid):
        print(f"core-usage: no process {args.pid}", file=sys.stderr)
        return Exit.USAGE
    threads = args.threads
    if threads is None:
        try:
            threads = thread_default(load_config())
        except ConfigError as e:
            print(f"core-usage: {e}", file=sys.stderr)
            return Exit.USAGE
    m = sample(args.pid, args.window)
    serial = serial_reason(args.state_file)
    alert = judge(m, threads, serial)
    m.update({"pid": args.pid, "threads_default": threads, "serial_now": serial, "alert": alert})
    if alert:
        write_alert("too-few-cores", alert, source="core-usage", pid=args.pid)
    if args.json:
        print(json.dumps(m))
    else:
        print(f"pid {args.pid}: {m['cores_in_use']:.2f} cores in use, {m['threads_at_once']:.2f} threads "
              f"computing at once over {m['wall_seconds']:.1f}s ({m['threads_seen']} threads)")
        if serial:
            print(f"declared serial: {serial}")
        if alert:
            print(alert)
    return 1 if alert else 0


# --- self-test: real burners ---

BURNER = """
import sys, threading, time
n = int(sys.argv[1]); end = time.time() + float(sys.argv[2])
def burn():
    x = 0
    while time.time() < end:
        x += 1
ts = [threading.Thread(target=burn) for _ in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
"""


def _burn(threads: int, seconds: float):
    """A burner with ``threads`` computing threads, returned once they run (python may start slowly
    on a loaded machine: a fixed pause could sample a burner that has not begun)."""
    proc = subprocess.Popen([sys.executable, "-c", BURNER, str(threads), str(seconds)])
    deadline = time.monotonic() + 60
    try:
        while psutil.Process(proc.pid).num_threads() < threads + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    except psutil.NoSuchProcess:
        pass
    return proc


def _sampled_burner():
    """The measurement of a one-thread burner over 1 s; None when it did not compute at all (then
    the cells below would judge an idle process, not a serial job)."""
    proc = _burn(1, 3.0)
    try:
        m = sample(proc.pid, 1.0)
    finally:
        proc.kill()
        proc.wait()
    return m if m["cpu_seconds"] > 0 else None


def _cell_serial_flagged():
    """A one-thread burner against a thread default of 16: alerted (green), or not (red)."""
    m = _sampled_burner()
    if m is None:
        return outcome.broken("the burner did not compute during the sample")
    return outcome.protected(judge(m, 16, None) is not None, f"no alert for {m['cores_in_use']:.2f} cores in use")


def _cell_serial_note_honoured():
    """The same burner with `serial now: ...` written: no alert (green), or alerted anyway (red)."""
    m = _sampled_burner()
    if m is None:
        return outcome.broken("the burner did not compute during the sample")
    return outcome.protected(judge(m, 16, "single-threaded merge phase") is None, "alerted despite its serial note")


def selftest_suite():
    return Suite("core-usage",
                 [Cell("serial-job-flagged", _cell_serial_flagged),
                  Cell("serial-note-honoured", _cell_serial_note_honoured)],
                 {"no-too-few-cores-alert": ["serial-job-flagged"],
                  "ignore-serial-note": ["serial-note-honoured"]})


if __name__ == "__main__":
    sys.exit(main())
