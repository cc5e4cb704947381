"""gpu-quiesce-run: stop the whitelisted GPU services, read back that they stopped, then run (SPEC §5.6).

    gpu-quiesce-run [--wait SEC] -- COMMAND...

Concurrent users register `<pid>-<start time>` in the state dir; the first
stops the services, later ones only check. A compute process on a card that
is not whitelisted (another session's GPU job) means exit 78 without touching
it (or, with --wait, waiting for it to end). Services are not restored
afterwards: a person does that.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from swarmgate import cell_outcome as outcome
from swarmgate.break_switch import broken
from swarmgate.exit_codes import Exit
from swarmgate.front_door import entry
from swarmgate.hosts.collector import gpus
from swarmgate.hosts.tool_cli import load_hosts, parser, preamble, split_command
from swarmgate.procinfo import is_alive, parent_pid, start_time
from swarmgate.selftest import Cell, Suite
from swarmgate.state_paths import gpu_registrations_dir
from swarmgate.statefile import ensure_dir, locked, write_text_atomic


def say(msg: str) -> None:
    print(f"gpu-quiesce-run: {msg}", file=sys.stderr, flush=True)


def _reg_dir() -> str:
    return str(ensure_dir(gpu_registrations_dir()))


def registrations() -> list[dict]:
    """Live registrations (dead or reused-pid ones are pruned)."""
    out = []
    d = _reg_dir()
    for name in os.listdir(d):
        pid_s, _, start_s = name.partition("-")
        if not (pid_s.isdigit() and start_s.isdigit()):
            continue
        pid, start = int(pid_s), int(start_s)
        if is_alive(pid, start):
            out.append({"pid": pid, "start": start, "file": os.path.join(d, name)})
        else:
            try:
                os.unlink(os.path.join(d, name))
            except OSError:
                pass
    return out


def register(command: list[str]) -> str:
    path = os.path.join(_reg_dir(), f"{os.getpid()}-{start_time(os.getpid())}")
    write_text_atomic(path, " ".join(command) + "\n")
    return path


def _shell(cmd: str, timeout: float = 120.0) -> tuple[int, str]:
    try:
        cp = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=timeout)
        return cp.returncode, (cp.stdout + cp.stderr).strip()[-300:]
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:g}s"


def _ancestors(pid: int) -> set[int]:
    seen = set()
    while pid and pid not in seen and pid != 1:
        seen.add(pid)
        pid = parent_pid(pid) or 0
    return seen


def foreign_processes(cards: list[dict], registered: set[int]) -> list[str]:
    """Pure-ish: compute processes that belong neither to a yield service nor to a registered run."""
    out = []
    for c in cards:
        for p in c["processes"]:
            if _ancestors(p["pid"]) & registered:
                continue  # a registered gpu-quiesce-run's own job
            out.append(f"GPU {c['index']}: pid {p['pid']} ({p['name']}, {p['used_mib']} MiB)")
    return out


def quiesce(q: dict, first: bool) -> str | None:
    """Stop (if first) and read back. Returns what is wrong, or None."""
    if first:
        for cmd in q["stop"]:
            rc, out = _shell(cmd)
            if rc != 0:
                say(f"stop command `{cmd}` exited {rc}: {out}")
    if broken("no-stop-readback"):
        return None
    for cmd in q["check"]:
        rc, out = _shell(cmd)
        if rc != 0:
            return f"a whitelisted service is still running: check `{cmd}` exited {rc}" + (f" ({out})" if out else "")
    return None


@entry("gpu-quiesce-run")
def main(argv: Sequence[str] | None = None) -> int:
    argv, command = split_command(argv)
    p = parser("gpu-quiesce-run", __doc__)
    p.add_argument("--wait", type=float, default=0.0,
                   help="seconds to wait for another session's GPU job to end (default: exit 78 at once)")
    args = p.parse_args(argv)
    stop = preamble(args, "gpu-quiesce-run", say, command)
    if stop is not None:
        return stop
    hosts = load_hosts(args, say)
    if isinstance(hosts, int):
        return hosts
    q = hosts["quiesce"]

    cards, note = gpus(set(q["process_names"]))
    if not cards:
        say(f"{note or 'no GPU'} on this machine: not run. Run it where there is a GPU "
            f"(host-dispatch --gpu -- ...).")
        return Exit.PREFLIGHT

    mine = register(command)
    try:
        with locked(os.path.join(str(gpu_registrations_dir()), ".lock"), timeout=300):
            others = [r for r in registrations() if r["pid"] != os.getpid()]
            problem = quiesce(q, first=not others)
        if problem:
            say(f"{problem}. Not run; services are left as they are (a person restores them).")
            return Exit.PREFLIGHT
        deadline = time.monotonic() + args.wait
        while True:
            cards, note = gpus(set(q["process_names"]))
            regs = {r["pid"] for r in registrations()}
            foreign = [] if broken("ignore-foreign-gpu-process") else foreign_processes(cards or [], regs)
            if not foreign:
                break
            if time.monotonic() >= deadline:
                say("another session's GPU job is on the cards: " + "; ".join(foreign) +
                    ". Not run, and not touched: wait for it to end, then run again (or pass --wait SEC).")
                return Exit.PREFLIGHT
            time.sleep(min(5.0, max(deadline - time.monotonic(), 0.1)))
        say(f"GPUs quiesced ({len(cards or [])} card(s)); running")
        try:
            return subprocess.call(command)
        except FileNotFoundError:
            say(f"command not found: {command[0]}")
            return 127
    finally:
        try:
            os.unlink(mine)
        except OSError:
            pass


# --- self-test: a fake NVML (hosts/selftest_fakes/pynvml.py) and real processes ---

def _selftest_env(tmp: str, cards: list, check: str) -> tuple[dict, str]:
    state = os.path.join(tmp, "nvml.json")
    with open(state, "w") as f:
        json.dump({"cards": cards}, f)
    hosts = os.path.join(tmp, "hosts.toml")
    with open(hosts, "w") as f:
        f.write(f"[quiesce]\nservices = [\"model-server\"]\nstop = [\"true\"]\ncheck = [{json.dumps(check)}]\n"
                f"process_names = [\"yield-svc\"]\n")
    fakes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "selftest_fakes")
    env = dict(os.environ, FAKE_NVML_STATE=state, SWARMGATE_NVML_PROBE="force",
               PYTHONPATH=fakes + os.pathsep + os.environ.get("PYTHONPATH", ""),
               SWARMGATE_STATE_DIR=os.path.join(tmp, "state"))
    return env, hosts


def _run_cell(cards: list, check: str, what: str):
    """gpu-quiesce-run -- touch MARKER on the fake cards: outcome.GREEN when it refused with 78 and ran
    nothing, RED when the command ran (exit 0, the marker is there), BROKEN otherwise."""

    with tempfile.TemporaryDirectory(prefix="swarmgate-gq-") as tmp:
        env, hosts = _selftest_env(tmp, cards, check)
        marker = os.path.join(tmp, "ran")
        try:
            cp = subprocess.run([sys.executable, "-m", "swarmgate", "gpu-quiesce-run", "--hosts-config", hosts,
                                 "--", "touch", marker], env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return outcome.broken(f"gpu-quiesce-run {what} did not finish within 120 s")
        ran = os.path.exists(marker)
        if ran != (cp.returncode == 0):
            return outcome.broken(f"gpu-quiesce-run {what} exited {cp.returncode} but the command "
                          f"{'ran' if ran else 'did not run'}")
        return outcome.by_exit(cp.returncode, Exit.PREFLIGHT, 0, f"gpu-quiesce-run {what}", cp.stderr)


def _cell_unstopped_service_refused():
    card = {"name": "GPU", "total_mib": 1000, "free_mib": 1000, "procs": []}
    return _run_cell([card], "false", "with a service that does not stop")


def _cell_foreign_process_refused_not_killed():
    other = subprocess.Popen(["sleep", "30"])
    try:
        card = {"name": "GPU", "total_mib": 1000, "free_mib": 500, "procs": [{"pid": other.pid, "used_mib": 500}]}
        o = _run_cell([card], "true", "with another session's job on the card")
        if o.state == outcome.GREEN and other.poll() is not None:
            return outcome.broken("it refused, but the foreign GPU job is gone: never kill it")
        return o
    finally:
        other.kill()
        other.wait()


def selftest_suite():
    return Suite("gpu-quiesce-run",
                 [Cell("unstopped-service-refused", _cell_unstopped_service_refused),
                  Cell("foreign-gpu-job-refused-not-killed", _cell_foreign_process_refused_not_killed)],
                 {"no-stop-readback": ["unstopped-service-refused"],
                  "ignore-foreign-gpu-process": ["foreign-gpu-job-refused-not-killed"]})


if __name__ == "__main__":
    sys.exit(main())
