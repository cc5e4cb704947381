"""detached-run: long jobs that outlive the session (SPEC §5.7).

    detached-run start --label NAME [--wall-clock SEC] -- COMMAND...
    detached-run status [NAME]      detached-run wait NAME [--timeout SEC]      detached-run stop NAME

The job runs under this tool's supervisor, which records the exit code in the registry under the
state dir (readable at any time), enforces the wall clock (253), records a stop (247), and, being a
child subreaper, finds and stops one by one what the job left behind: backgrounded children and
capped runs the job started (under systemd those sit in scopes of their own, outside the job's
unit, so stopping the unit alone would not stop them: the seed's case).

Where systemd runs as PID 1 the supervisor is the main process of a transient service
(`systemd-run [--user] --unit=swarmgate-detached-NAME.service -p KillMode=mixed ...`: the system
manager for root, the user's manager otherwise), so the job outlives the session like any unit
and `systemctl status` shows it. Elsewhere, or when systemd-run fails (said on stderr), the
supervisor is a fully detached process (its own session, stdin from /dev/null, inherited
descriptors closed).
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence

from swarmgate import cell_outcome as outcome
from swarmgate.break_switch import broken
from swarmgate.exit_codes import Exit
from swarmgate.front_door import entry
from swarmgate.hosts.cgroups import systemd_is_pid1
from swarmgate.hosts.proc_tree import descendants, stop_tree
from swarmgate.procinfo import is_alive, start_time
from swarmgate.selftest import Cell, Suite
from swarmgate.state_paths import detached_dir
from swarmgate.statefile import ensure_dir, read_json, write_json_atomic
from swarmgate.tool_parser import ToolParser

LABEL_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,80}")
UNIT_PREFIX = "swarmgate-detached-"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# set by systemd for its own processes: a unit gets its own
NOT_PASSED = frozenset({"INVOCATION_ID", "JOURNAL_STREAM", "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS",
                        "LISTEN_FDNAMES", "SYSTEMD_EXEC_PID", "MANAGERPID", "WATCHDOG_PID", "WATCHDOG_USEC"})


def say(msg: str) -> None:
    print(f"detached-run: {msg}", file=sys.stderr, flush=True)


def reg_dir(label: str) -> str:
    return os.path.join(str(detached_dir()), label)


def _rec_path(label: str) -> str:
    return os.path.join(reg_dir(label), "run.json")


def read_record(label: str) -> dict | None:
    return read_json(_rec_path(label), None)


def write_record(label: str, rec: dict) -> None:
    write_json_atomic(_rec_path(label), rec)


def unit_name(label: str) -> str:
    return f"{UNIT_PREFIX}{label}.service"


def passed_env(environ) -> list[str]:
    """The caller's variables the unit gets (by name: systemd-run takes the value from its own environment,
    so no value ever appears on a command line)."""
    return sorted(k for k in environ if ENV_NAME.fullmatch(k) and k not in NOT_PASSED)


def systemd_argv(label: str, cwd: str, log: str, grace: float, env_names: list[str], user: bool) -> list[str]:
    """The exact systemd-run line where systemd is PID 1. The unit's main process is this tool's own
    supervisor; KillMode=mixed: `stop` sends TERM to the supervisor alone, which stops the job's tree in
    order and records 247, and systemd kills whatever is left in the unit after it exits."""
    return ["systemd-run", *(["--user"] if user else []), f"--unit={unit_name(label)}", "--collect", "--quiet",
            "--property=KillMode=mixed", f"--property=TimeoutStopSec={int(grace) + 30}",
            f"--property=StandardOutput=append:{log}", f"--property=StandardError=append:{log}",
            f"--working-directory={cwd}", *[f"--setenv={name}" for name in env_names],
            "--", sys.executable, "-m", "swarmgate", "detached-run", "_supervise", label]


def _systemctl(rec: dict) -> list[str]:
    return ["systemctl", *(["--user"] if rec.get("manager") == "user" else [])]


def state_of(rec: dict) -> str:
    if rec.get("exit") is not None:
        return "exited"
    if rec.get("supervisor_pid") and is_alive(rec["supervisor_pid"], rec.get("supervisor_start")):
        return "running"
    return "lost"


# --- the supervisor (runs detached) ---

def _set_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001
        return False


def _my_descendants() -> list[int]:
    return [p for p in descendants(os.getpid()) if p != os.getpid()]


# run as `python -S -c _GATE FD COMMAND...`: exec COMMAND (same pid) once the supervisor writes a byte to FD,
# exit 125 running nothing when FD reaches its end first (the supervisor died or could not record the pid)
_GATE = ("import os, sys\n"
         "fd = int(sys.argv[1])\n"
         "go = os.read(fd, 1)\n"
         "os.close(fd)\n"
         "if not go:\n"
         "    os._exit(125)\n"
         "try:\n"
         "    os.execvp(sys.argv[2], sys.argv[2:])\n"
         "except OSError as e:\n"
         "    sys.stderr.write(f'detached-run: cannot run {sys.argv[2]}: {e.strerror}\\n')\n"
         "    os._exit(127)\n")


def supervise(label: str) -> int:
    # Break switches are read now, while `start` (a child of the self-test, when there is one)
    # still waits for this supervisor to record the pid: a break switch is honoured only in a
    # process whose ancestors include the self-test, and this one is reparented once start exits.
    no_wall_clock = broken("no-wall-clock")
    no_leftover_cleanup = broken("no-leftover-cleanup")
    rec = read_record(label) or {}
    _set_subreaper()
    rec.update(supervisor_pid=os.getpid(), supervisor_start=start_time(os.getpid()), state="running")
    write_record(label, rec)
    stopping: list[int] = []

    def on_term(signum, frame):  # noqa: ARG001
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    t0 = time.monotonic()
    # the job's process waits at a gate until its pid is recorded: a supervisor killed or unable to write
    # before that closes the gate, and the command never runs unseen (no record names it, stop cannot stop it)
    gate_r, gate_w = os.pipe()
    child = subprocess.Popen([sys.executable, "-S", "-c", _GATE, str(gate_r), *rec["command"]],
                             cwd=rec.get("cwd") or None, stdin=subprocess.DEVNULL, pass_fds=(gate_r,))
    os.close(gate_r)
    rec["pid"], rec["start"] = child.pid, start_time(child.pid)
    try:
        write_record(label, rec)
    except BaseException:   # the gate closes unopened, the command never starts; say why (251)
        os.close(gate_w)
        child.wait()
        raise
    os.write(gate_w, b"1")
    os.close(gate_w)
    wall = rec.get("wall_clock")
    code = None
    reason = ""
    while code is None:
        try:
            code = child.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if code is not None:
            break
        over = wall and not no_wall_clock and time.monotonic() - t0 > float(wall)
        if stopping or over:
            reason = "stopped" if stopping else f"wall clock of {wall}s exceeded"
            stop_tree(child.pid, grace=float(rec.get("grace", 30)))
            child.wait()
            code = Exit.SIGNALLED if stopping else Exit.TIMEOUT
    if code < 0:
        code = 128 - code
    leftovers = []
    if not no_leftover_cleanup:
        for pid in _my_descendants():
            leftovers.append(pid)
            stop_tree(pid, grace=float(rec.get("grace", 30)))
        # reap what was reparented to us
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    break
            except ChildProcessError:
                break
    rec.update(exit=code, ended=time.time(), duration_s=round(time.monotonic() - t0, 3), state="exited",
               reason=reason, leftovers_stopped=leftovers)
    write_record(label, rec)
    return 0


# --- the CLI ---

def start(label: str, command: list[str], wall_clock: float | None, grace: float) -> int:
    rec = read_record(label)
    if rec and state_of(rec) == "running":
        say(f"a job labelled {label!r} is still running (pid {rec.get('pid')}); stop it or pick another label")
        return Exit.USAGE
    cwd = os.getcwd()
    d = reg_dir(label)
    ensure_dir(d)
    for name in ("run.json", "output.log"):
        try:
            os.unlink(os.path.join(d, name))
        except OSError:
            pass
    log = os.path.join(d, "output.log")
    rec = {"label": label, "command": command, "cwd": cwd, "started": time.time(), "wall_clock": wall_clock,
           "grace": grace, "log": log, "exit": None}
    if systemd_is_pid1() and os.environ.get("SWARMGATE_DETACHED_BACKEND", "auto") != "process":
        user = os.geteuid() != 0
        rec.update(backend="systemd", unit=unit_name(label), manager="user" if user else "system")
        write_record(label, rec)
        argv = systemd_argv(label, cwd, log, grace, passed_env(os.environ), user)
        try:
            cp = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            failure = (cp.stderr.strip() or f"exit {cp.returncode}") if cp.returncode else ""
        except (OSError, subprocess.TimeoutExpired) as e:
            failure = str(e)
        if not failure:
            return _started(label, log, f"as {rec['manager']} unit {rec['unit']}")
        say(f"systemd-run could not start it as a unit ({failure}); starting it under this tool's own "
            f"supervisor instead")
    rec.update(backend="process", unit=None, manager=None)
    write_record(label, rec)
    with open(log, "ab") as out:
        sup = subprocess.Popen([sys.executable, "-m", "swarmgate", "detached-run", "_supervise", label],
                               stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                               close_fds=True, cwd=cwd)
    return _started(label, log, "", supervisor=sup)


def _log_tail(log: str | None) -> str:
    """The last line a supervisor wrote to the job's log (why it stopped), or ''."""
    try:
        with open(str(log), "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
            lines = [x for x in f.read().decode(errors="replace").splitlines() if x.strip()]
    except (OSError, TypeError):
        return ""
    return lines[-1].strip() if lines else ""


def _started(label: str, log: str, how: str, timeout_s: float = 30.0,
             supervisor: subprocess.Popen | None = None) -> int:
    """Wait until the supervisor has started the job and say so; 251 with its last line when it
    ended before starting the job (its state could not be written)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        gone = supervisor is not None and supervisor.poll() is not None
        r = read_record(label) or {}
        if r.get("pid"):
            print(f"started {label}{' ' + how if how else ''}: pid {r['pid']}, output in {log}")
            return 0
        if r.get("exit") is not None:  # it ended before we looked
            print(f"started {label}{' ' + how if how else ''}: already ended (exit {r['exit']}), output in {log}")
            return 0
        if gone:
            say(f"the supervisor of {label} ended before it started the job: {_log_tail(log) or 'see ' + log}")
            return Exit.USAGE
        time.sleep(0.05)
    say(f"the supervisor of {label} did not start; see {log}")
    return Exit.USAGE


def status(label: str | None) -> int:
    labels = [label] if label else sorted(os.listdir(str(detached_dir()))) if os.path.isdir(str(detached_dir())) else []
    if not labels:
        print("no detached jobs")
        return 0
    for lab in labels:
        rec = read_record(lab)
        if rec is None:
            if label:
                say(f"no detached job labelled {lab!r}")
                return Exit.USAGE
            continue
        st = state_of(rec)
        extra = f"exit {rec['exit']}" if st == "exited" else f"pid {rec.get('pid')}"
        if rec.get("reason"):
            extra += f" ({rec['reason']})"
        if rec.get("leftovers_stopped"):
            extra += f"; stopped {len(rec['leftovers_stopped'])} leftover process(es)"
        print(f"{lab}: {st}, {extra}: {shlex.join(rec.get('command', []))}")
    return 0


def wait(label: str, timeout: float | None) -> int:
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        rec = read_record(label)
        if rec is None:
            say(f"no detached job labelled {label!r}")
            return Exit.USAGE
        st = state_of(rec)
        if st == "exited":
            return int(rec["exit"])
        if st == "lost":
            tail = _log_tail(rec.get("log"))
            say(f"{label}: the supervisor died without recording an exit code" + (f" ({tail})" if tail else ""))
            return Exit.SIGNALLED
        if deadline and time.monotonic() > deadline:
            say(f"{label} still running after {timeout:g}s")
            return Exit.TIMEOUT
        time.sleep(0.2)


def stop(label: str) -> int:
    rec = read_record(label)
    if rec is None:
        say(f"no detached job labelled {label!r}")
        return Exit.USAGE
    if state_of(rec) != "running":
        print(f"{label} is not running")
        return 0
    if rec.get("backend") == "systemd":
        # TERM to the supervisor alone (KillMode=mixed); returns once the unit has stopped
        cp = subprocess.run([*_systemctl(rec), "stop", rec["unit"]], capture_output=True, text=True,
                            timeout=float(rec.get("grace", 30)) + 90)
        if cp.returncode != 0:
            say(f"`systemctl stop {rec['unit']}` failed: {cp.stderr.strip()}; stopping its supervisor directly")
            os.kill(rec["supervisor_pid"], signal.SIGTERM)
    else:
        os.kill(rec["supervisor_pid"], signal.SIGTERM)
    code = wait(label, float(rec.get("grace", 30)) + 30)
    print(f"{label} stopped (exit {code})")
    return 0


@entry("detached-run")
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_supervise"] and len(argv) == 2:
        return supervise(argv[1])
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1:]
    p = ToolParser(prog="detached-run", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("start", help="start a job detached from this session")
    s.add_argument("--label", required=True)
    s.add_argument("--wall-clock", type=float, help="seconds after which the job is stopped (253)")
    s.add_argument("--grace", type=float, default=30.0, help="seconds between TERM and KILL")
    st = sub.add_parser("status", help="state and exit code")
    st.add_argument("label", nargs="?")
    w = sub.add_parser("wait", help="wait for the job; exit with its code")
    w.add_argument("label")
    w.add_argument("--timeout", type=float)
    sp = sub.add_parser("stop", help="stop the job and what it left behind")
    sp.add_argument("label")
    args = p.parse_args(argv)
    label = getattr(args, "label", None)
    if label is not None and not LABEL_RE.fullmatch(label):
        say(f"label {label!r}: use letters, digits and . _ - only")
        return Exit.USAGE
    if args.verb == "start":
        if not command:
            say("nothing to run: put the command after `--`")
            return Exit.USAGE
        return start(args.label, command, args.wall_clock, args.grace)
    if args.verb == "status":
        return status(args.label)
    if args.verb == "wait":
        return wait(args.label, args.timeout)
    return stop(args.label)


# --- self-test ---

def _selftest_job(command: list[str], wall: float | None = None) -> dict:
    label = f"selftest-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="swarmgate-dr-") as tmp:
        env = dict(os.environ, SWARMGATE_STATE_DIR=os.path.join(tmp, "state"), SWARMGATE_DETACHED_BACKEND="process")
        extra = ["--wall-clock", str(wall)] if wall else []
        subprocess.run([sys.executable, "-m", "swarmgate", "detached-run", "start", "--label", label, "--grace", "2",
                        *extra, "--", *command], env=env, capture_output=True, timeout=30)
        subprocess.run([sys.executable, "-m", "swarmgate", "detached-run", "wait", label, "--timeout", "30"],
                       env=env, capture_output=True, timeout=60)
        path = os.path.join(tmp, "state", "detached", label, "run.json")
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}


def _cell_leftovers_stopped():
    """A job that leaves a background `sleep 60` behind: stopped after the job (green), or still
    alive (red)."""

    with tempfile.NamedTemporaryFile(prefix="swarmgate-dr-pid-", delete=False) as f:
        pidfile = f.name
    try:
        rec = _selftest_job(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; exit 0"])
        try:
            pid = int(open(pidfile).read().strip() or 0)
        except (OSError, ValueError):
            pid = 0
        if rec.get("exit") != 0 or pid <= 0:
            return outcome.broken(f"the job did not run as written (exit {rec.get('exit')!r}, leftover pid {pid})")
        alive = is_alive(pid, None)
        if alive:
            os.kill(pid, signal.SIGKILL)
        return outcome.protected(not alive, "the job's leftover process still ran after it")
    finally:
        os.unlink(pidfile)


def _cell_wall_clock():
    """`sleep 20` with a 1 s wall clock: stopped with 253 (green), or ran to its end, 0 (red)."""
    rec = _selftest_job(["sleep", "20"], wall=1.0)
    return outcome.by_exit(rec.get("exit"), Exit.TIMEOUT, 0, "a 20 s job with a 1 s wall clock")


def selftest_suite():
    return Suite("detached-run",
                 [Cell("leftover-processes-stopped", _cell_leftovers_stopped),
                  Cell("wall-clock-enforced", _cell_wall_clock)],
                 {"no-leftover-cleanup": ["leftover-processes-stopped"], "no-wall-clock": ["wall-clock-enforced"]})


if __name__ == "__main__":
    sys.exit(main())
