"""The runner's ledger: who holds (books) how much of the shared total, and who waits.

One JSON file under SWARMGATE_STATE_DIR (``state_paths.ledger_path()``), read
and written only under an exclusive lock (``ledger_lock_path()``). The lock is
a plain ``flock`` on the lock file (the same lock filelock takes, so tools that
use ``statefile.locked`` on this path interoperate); it is taken directly here
because importing filelock costs more than the whole run of a small command.

Each booking: label, cap, booked bytes, basis (history|cap|unbounded), the
wrapper's pid + process start time, its run cgroup, since, and the agent
session it belongs to (``session_of()``: CLAUDE_CODE_SESSION_ID from the
environment Claude Code gives every command; null outside a session), so
`swarmgate status` can tell a session which runs are its own. Each finished
run is also appended to the runs log (``log_run``), which `swarmgate report`
reads: booked vs peak, exit code and class, per session. Agent cgroups
(hosts/agent_cgroups.py) are booked here too, keyed ``agent:<name>``, basis
"agent", held by their session's process; a dead session's agent cgroups go
like a dead wrapper's runs. ``reconcile()``
drops bookings and waiters whose wrapper is gone (pid dead, or reused by
another process) and removes run cgroups whose owner is dead, killing what
is left in them: a wrapper killed with SIGKILL leaves no phantom booking and
no cgroup behind once the next run (or ``swarmgate status``) has looked.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import time

from swarmgate import state_paths
from swarmgate.procinfo import is_alive
from swarmgate.statefile import StateError, ensure_dir, read_json, write_json_atomic

VERSION = 1


def empty() -> dict:
    return {"version": VERSION, "bookings": {}, "waiters": {}}


@contextlib.contextmanager
def lock(timeout: float = 120.0):
    """Exclusive lock on the ledger (flock; never follows a planted symlink)."""
    path = state_paths.ledger_lock_path()
    ensure_dir(path.parent)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        if e.errno == 40:
            raise StateError(f"{path} is a symlink; refusing to use it as a lock "
                             f"(remove it: rm {path})") from None
        raise StateError(f"cannot open the lock {path}: {e.strerror}") from None
    try:
        deadline = time.monotonic() + timeout
        pause = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StateError(f"could not take the lock {path} within {timeout:.0f}s") from None
                # back off: twenty waiters polling every 5 ms took the CPU from the holder on a slow
                # machine (a TCG guest: "could not take the lock within 120s" in the twenty-wrapper test)
                time.sleep(pause)
                pause = min(pause * 1.5, 0.1)
        yield
    finally:
        os.close(fd)  # releases the flock


def _valid_record(rec: object, need: tuple) -> bool:
    return isinstance(rec, dict) and all(k in rec for k in need) and \
        isinstance(rec.get("pid"), int) and (rec.get("booked") is None or isinstance(rec.get("booked"), int))


def load(report=None) -> dict:
    """The ledger (must hold the lock). Corrupt file → reported, moved aside, rebuilt."""
    data = read_json(state_paths.ledger_path(), None, report=report)
    if data is None:
        return empty()
    out = empty()
    bad = 0
    for section, need in (("bookings", ("pid", "booked", "label")), ("waiters", ("pid", "label"))):
        table = data.get(section)
        if not isinstance(table, dict):
            bad += table is not None
            continue
        for key, rec in table.items():
            if _valid_record(rec, need):
                out[section][str(key)] = rec
            else:
                bad += 1
    if bad:
        msg = (f"state file {state_paths.ledger_path()}: dropped {bad} malformed entr"
               f"{'y' if bad == 1 else 'ies'}; the ledger was rebuilt from the rest")
        (report or _warn)(msg)
    return out


def _warn(msg: str) -> None:
    import sys
    print(f"swarmgate: {msg}", file=sys.stderr)


def save(data: dict) -> None:
    write_json_atomic(state_paths.ledger_path(), data, durable=False)  # rebuilt by reconcile after a crash


def holder_alive(rec: dict) -> bool:
    start = rec.get("start")
    return is_alive(int(rec.get("pid", 0)), start if isinstance(start, int) else None)


class Cleanup(list):
    """What ``reconcile`` removed: one note per thing (a list of str, as before), and ``line()``,
    the whole of it in one line for a run's stderr."""

    def __init__(self) -> None:
        super().__init__()
        self.bookings: list[tuple[object, object]] = []   # (pid, label) of dropped bookings
        self.waiters = 0
        self.runs = 0
        self.agents = 0

    @property
    def changed(self) -> bool:
        """Whether the ledger lost anything (then the caller saves it)."""
        return bool(self.bookings or self.waiters)

    def line(self) -> str:
        """Everything removed, in one line ("" when nothing was), with the first few labels."""
        parts = []
        if self.bookings:
            n = len(self.bookings)
            shown = ", ".join(f"{label!r} pid {pid}" for pid, label in self.bookings[:3])
            more = f" and {n - 3} more" if n > 3 else ""
            parts.append(f"dropped {n} booking{'s' if n != 1 else ''} ({shown}{more})")
        for n, what in ((self.waiters, "waiter"), (self.runs, "run cgroup"), (self.agents, "agent cgroup")):
            if n:
                parts.append(f"{'dropped' if what == 'waiter' else 'removed'} {n} {what}{'s' if n != 1 else ''}")
        return "cleaned up after dead wrappers: " + ", ".join(parts) if parts else ""


def reconcile(data: dict, backend=None, slice_name: str | None = None) -> Cleanup:
    """Drop dead holders' bookings and waiters; remove run cgroups whose owner is dead.

    Returns one note per thing removed (a ``Cleanup``: ``.line()`` says it all in one line).
    The caller saves ``data`` when anything was removed, so the next call finds nothing to
    clean up and says nothing.
    """
    notes = Cleanup()
    for section in ("bookings", "waiters"):
        for key in list(data[section]):
            rec = data[section][key]
            if not holder_alive(rec):
                del data[section][key]
                if section == "bookings":
                    notes.bookings.append((rec.get("pid"), rec.get("label")))
                    notes.append(f"dropped the booking of dead wrapper pid {rec.get('pid')} "
                                 f"(label {rec.get('label')!r})")
                else:
                    notes.waiters += 1
    if backend is not None and slice_name:
        from swarmgate.hosts.cgroups import agent_owner, owner_of

        live = {b.get("cgroup") for b in data["bookings"].values()}
        for name in backend.runs(slice_name):
            owner = owner_of(name)
            path = backend.run_path(slice_name, name)
            if owner is None or path in live:
                continue
            pid, start = owner
            if is_alive(pid, start):
                continue
            backend.kill_all(path)
            if backend.remove(path):
                notes.runs += 1
                notes.append(f"removed the run cgroup {name} of dead wrapper pid {pid}")
        for name in backend.agents(slice_name):
            owner = agent_owner(name)
            if owner is None or backend.run_path(slice_name, name) in live or is_alive(owner[0], owner[1]):
                continue
            if backend.remove_agent(slice_name, name):
                notes.agents += 1
                notes.append(f"removed the agent cgroup {name} of dead session pid {owner[0]} "
                             f"(agent {owner[2]})")
    return notes


def booking_id(pid: int, start: int | None) -> str:
    return f"{pid}-{start or 0}"


SESSION_VARS = ("CLAUDE_CODE_SESSION_ID", "SWARMGATE_SESSION_ID")


def session_of(env=None) -> str | None:
    """The agent session a run belongs to: Claude Code exports CLAUDE_CODE_SESSION_ID to every
    command of a session (main agent and subagents alike, measured with 2.1.332); other clients
    or wrappers may set SWARMGATE_SESSION_ID. None outside a session (a person's shell)."""
    env = os.environ if env is None else env
    for var in SESSION_VARS:
        value = env.get(var)
        if value and len(value) <= 200:
            return value
    return None


RUNS_LOG_MAX = 8 << 20  # bytes; the older half moves to runs.jsonl.1


def log_run(rec: dict) -> None:
    """Append one finished run to the runs log (what `swarmgate report` shows). Never raises."""
    from swarmgate.statefile import append_jsonl

    path = state_paths.runs_log_path()
    try:
        if os.path.getsize(path) > RUNS_LOG_MAX:
            os.replace(path, str(path) + ".1")
    except OSError:
        pass
    try:
        append_jsonl(path, rec)
    except Exception as e:  # noqa: BLE001 - the log is a report; the run's own result stands
        _warn(f"the run is not in the runs log: {e}")


def read_runs() -> list[dict]:
    """Every logged run, oldest first (the rotated file, then the current one)."""
    from swarmgate.statefile import read_jsonl

    path = state_paths.runs_log_path()
    out: list[dict] = []
    for p in (str(path) + ".1", path):
        try:
            out += [r for r in read_jsonl(p) if isinstance(r, dict)]
        except (OSError, StateError):
            continue
    return out
