"""`workspace-lock`: the merge lock, taken while patching and verifying the main workspace (SPEC §6.5).

The lock is a small text record, one ``key=value`` a line:

    pid=12345
    start=987654          (/proc/12345/stat field 22: survives pid reuse)
    session=<session id>
    command=<what the holder runs>
    since=2026-11-29T12:00:00Z

- empty or absent record → take it (write our own record);
- live holder (the pid exists and its start time matches) → wait, printing
  every 60 s who holds it;
- dead holder, or a pid now used by another process (start time differs) →
  stale: take it over;
- not taken within the timeout → exit 248 (``Exit.LOCK_TIMEOUT``).

Reading, checking and writing happen under a filelock beside the record
(``<record>.mutex``), the record is written atomically (temp file +
os.replace) and never read through a symlink (``statefile``).

Reusable primitive (D16 scratch locks use it): ``try_take(path, owner, alive=None)
-> (taken, holder)``; ``release(path, owner, force=False)``; ``read_holder(path)``;
``holder_live(holder)``. Python: ``with WorkspaceLock("main", timeout=600): ...``.

CLI: ``acquire`` holds the lock on behalf of a longer-lived process, never
its own: ``--pid PID``; else the Claude Code session process (``$CLAUDE_PID``,
which Claude Code 2.1.332 exports to Bash calls) when it is an ancestor; else
the PARENT shell. The lock stays held while that process lives (or until
``release``) and goes stale when it exits. ``workspace-lock run -- COMMAND``
holds it exactly while COMMAND runs.
"""
from __future__ import annotations

import os
import sys
import time

from swarmgate.front_door import entry

KEYS = ("pid", "start", "session", "agent", "command", "since")
DEFAULT_TIMEOUT = 3600.0
DEFAULT_REPORT_EVERY = 60.0
POLL_S = 0.25


class LockTimeout(Exception):
    """Not acquired in time. ``holder`` is the record that kept it; exit code 248."""

    def __init__(self, message: str, holder: dict | None) -> None:
        super().__init__(message)
        self.holder = holder
        from swarmgate.exit_codes import Exit
        self.exit_code = int(Exit.LOCK_TIMEOUT)


# --- the record ---

def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def make_owner(pid: int | None = None, session: str = "", command: str = "", agent: str = "",
               **extra) -> dict:
    """An owner record for ``pid`` (default: this process) with its start time and now."""
    from swarmgate.procinfo import identity

    ident = identity(pid)
    owner = {"pid": ident["pid"], "start": ident["start"], "session": session or "",
             "command": command or "", "since": _now_iso()}
    if agent:
        owner["agent"] = agent
    owner.update({k: v for k, v in extra.items() if v is not None})
    return owner


def format_record(owner: dict) -> str:
    """The record text: known keys first, then any extra ones; values kept on one line."""
    keys = [k for k in KEYS if k in owner] + sorted(k for k in owner if k not in KEYS)
    lines = []
    for k in keys:
        v = owner[k]
        v = "" if v is None else str(v)
        lines.append(f"{k}={v.replace(chr(10), ' ').replace(chr(13), ' ')}")
    return "\n".join(lines) + "\n"


def parse_record(text: str | None) -> dict | None:
    """The holder from a record's text; None when empty. Garbage yields {"corrupt": text}."""
    if text is None or not text.strip():
        return None
    rec: dict = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip():
            rec[k.strip()] = v.strip()
    for k in ("pid", "start"):
        if k in rec:
            try:
                rec[k] = int(rec[k])
            except ValueError:
                rec[k] = None
    if not isinstance(rec.get("pid"), int):
        return {"corrupt": text[:200]}
    return rec


def read_holder(path) -> dict | None:
    """The current record at ``path`` (None: free). Raises StateError on a symlink."""
    from swarmgate.statefile import read_text
    return parse_record(read_text(path))


def holder_live(holder: dict | None) -> bool:
    """True when the holder's pid exists with the recorded start time (pid reuse → False)."""
    if not holder or "corrupt" in holder:
        return False
    from swarmgate.break_switch import broken
    from swarmgate.procinfo import holder_alive, is_alive

    if broken("lock-ignores-start-time"):
        return is_alive(int(holder.get("pid") or 0), None)
    return holder_alive(holder)


def describe_holder(holder: dict | None) -> str:
    """One line naming the holder: session, pid, command, since (age)."""
    if not holder:
        return "nobody"
    if "corrupt" in holder:
        return "an unreadable record"
    parts = []
    if holder.get("session"):
        parts.append(f"session {holder['session']}")
    if holder.get("agent"):
        parts.append(f"agent {holder['agent']}")
    parts.append(f"pid {holder.get('pid')} (start {holder.get('start')})")
    text = ", ".join(parts)
    if holder.get("command"):
        text += f", running {holder['command']!r}"
    if holder.get("since"):
        text += f", since {holder['since']}"
        age = _age_s(holder["since"])
        if age is not None:
            text += f" ({_human_age(age)} ago)"
    return text


def _age_s(since: str) -> float | None:
    import calendar
    try:
        return time.time() - calendar.timegm(time.strptime(since, "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, TypeError):
        return None


def _human_age(s: float) -> str:
    s = max(0, int(s))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def _mutex(path) -> str:
    return str(path) + ".mutex"


def try_take(path, owner: dict, alive=None) -> tuple[bool, dict | None]:
    """Take the lock at ``path`` for ``owner`` if it is free or stale.

    Returns (True, None) when it was free; (True, stale_holder) when a dead
    holder or a reused pid was taken over; (False, live_holder) when a live
    holder has it. ``alive(holder) -> bool`` overrides the liveness test
    (default ``holder_live``: pid exists and start time matches). Atomic with
    respect to every other caller of this module (filelock + atomic write).
    """
    from swarmgate.break_switch import broken
    from swarmgate.statefile import locked, write_text_atomic

    alive = alive or holder_live
    with locked(_mutex(path), timeout=30):
        holder = read_holder(path)
        if holder is not None and alive(holder):
            return False, holder
        if holder is not None and broken("lock-no-stale-takeover"):
            return False, holder
        write_text_atomic(path, format_record(owner))
        return True, holder


def same_process(a: dict | None, b: dict | None) -> bool:
    return bool(a and b and a.get("pid") == b.get("pid") and a.get("start") == b.get("start")
                and a.get("pid") is not None)


def release(path, owner: dict | None = None, force: bool = False) -> tuple[bool, dict | None]:
    """Remove the record when it is ``owner``'s (same pid + start, or same non-empty session),
    stale, or ``force``. Returns (released, holder_before)."""
    from swarmgate.statefile import locked

    with locked(_mutex(path), timeout=30):
        holder = read_holder(path)
        if holder is None:
            return True, None
        mine = same_process(holder, owner) or bool(
            owner and owner.get("session") and holder.get("session") == owner.get("session"))
        if force or mine or not holder_live(holder):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            return True, holder
        return False, holder


def acquire(path, owner: dict, timeout: float = DEFAULT_TIMEOUT,
            report_every: float = DEFAULT_REPORT_EVERY, out=None, name: str = "",
            alive=None, poll: float = POLL_S) -> dict | None:
    """Wait until the lock is taken for ``owner``; returns the stale holder displaced (or None).

    While a live holder keeps it, prints to ``out`` (default stderr) who holds
    it at once and then every ``report_every`` seconds. Raises LockTimeout
    after ``timeout`` seconds (0: one try).
    """
    out = out or sys.stderr
    label = name or os.path.basename(str(path))
    deadline = time.monotonic() + max(0.0, timeout)
    next_report = 0.0
    while True:
        taken, holder = try_take(path, owner, alive)
        if taken:
            if holder is not None:
                print(f"workspace-lock {label}: took over a stale lock from {describe_holder(holder)}",
                      file=out, flush=True)
            return holder
        now = time.monotonic()
        if now >= deadline:
            raise LockTimeout(f"workspace-lock {label}: not acquired within {timeout:g}s; held by "
                              f"{describe_holder(holder)}", holder)
        if now >= next_report:
            print(f"workspace-lock {label}: held by {describe_holder(holder)}; waiting "
                  f"({int(deadline - now)}s left)", file=out, flush=True)
            next_report = now + report_every
        time.sleep(min(poll, max(0.01, deadline - now)))


def lock_path(name: str):
    from swarmgate.state_paths import safe_name, workspace_locks_dir
    return workspace_locks_dir() / safe_name(name)


def default_name(repo: str | None = None) -> str:
    """The lock of a repository: its absolute path as a file name."""
    from swarmgate.config import find_repo
    return "repo" + os.path.abspath(repo or find_repo()).replace(os.sep, "_")


def session_from_env() -> str:
    return os.environ.get("SWARMGATE_SESSION_ID") or os.environ.get("CLAUDE_CODE_SESSION_ID") or ""


class WorkspaceLock:
    """``with WorkspaceLock(name, timeout=...)``: hold the lock for this process.

    Raises LockTimeout (``.exit_code`` 248) when not acquired in time. The
    lock is released on exit only if it is still ours.
    """

    def __init__(self, name: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 session: str | None = None, command: str | None = None,
                 report_every: float = DEFAULT_REPORT_EVERY, out=None, path=None) -> None:
        self.name = name or default_name()
        self.path = path or lock_path(self.name)
        self.timeout = timeout
        self.session = session if session is not None else session_from_env()
        self.command = command if command is not None else " ".join(sys.argv)[:300]
        self.report_every = report_every
        self.out = out
        self.owner: dict | None = None

    def __enter__(self) -> WorkspaceLock:
        self.owner = make_owner(None, self.session, self.command)
        acquire(self.path, self.owner, self.timeout, self.report_every, self.out, self.name)
        return self

    def __exit__(self, *exc) -> None:
        if self.owner is not None:
            release(self.path, {"pid": self.owner["pid"], "start": self.owner["start"]})
            self.owner = None


# --- the command ---

def _is_ancestor(pid: int) -> bool:
    from swarmgate.procinfo import parent_pid

    cur: int | None = os.getpid()
    for _ in range(64):
        cur = parent_pid(cur) if cur else None
        if not cur or cur <= 1:
            return False
        if cur == pid:
            return True
    return False


def default_holder_pid() -> int:
    """Whom a CLI acquire holds for: the Claude Code session process ($CLAUDE_PID, when it
    is one of our ancestors), else the parent shell. A Bash call of Claude Code runs each
    command in a shell that exits right after it; the session process lives on."""
    try:
        claude = int(os.environ.get("CLAUDE_PID", ""))
    except ValueError:
        claude = 0
    if claude > 1 and _is_ancestor(claude):
        return claude
    return os.getppid()


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:300]
    except OSError:
        return ""


@entry("workspace-lock")
def main(argv: list[str] | None = None) -> int:
    import argparse

    from swarmgate.exit_codes import Exit
    from swarmgate.statefile import StateError
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(
        prog="workspace-lock",
        description="The workspace (merge) lock: pid + start time + session + command + since. "
                    "A dead holder or a reused pid is stale and taken over; 248 when not acquired in time.")
    sub = p.add_subparsers(dest="cmd")

    def common(s, waits: bool) -> None:
        s.add_argument("--name", help="lock name (default: this repository's path)")
        s.add_argument("--session", default=None, help="session id (default: $SWARMGATE_SESSION_ID "
                                                       "or $CLAUDE_CODE_SESSION_ID)")
        if waits:
            s.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                           help="seconds to wait for a live holder (default 3600; 0 = one try)")
            s.add_argument("--report-every", type=float, default=DEFAULT_REPORT_EVERY,
                           help="seconds between 'held by ...' lines while waiting (default 60)")
            s.add_argument("--command", default=None, help="what you will run (shown to waiters)")

    s = sub.add_parser("acquire", help="take the lock for the calling shell (or --pid)")
    common(s, True)
    s.add_argument("--pid", type=int, help="hold for this process (default: the Claude Code session "
                                           "process $CLAUDE_PID when we run under it, else the parent shell)")
    s = sub.add_parser("release", help="release the lock you hold")
    common(s, False)
    s.add_argument("--pid", type=int, help="the holder's pid (default: as for acquire)")
    s.add_argument("--force", action="store_true", help="release a live holder's lock (a person's call)")
    s = sub.add_parser("status", help="who holds the lock")
    common(s, False)
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("run", help="hold the lock while COMMAND runs: workspace-lock run -- CMD ...")
    common(s, True)
    s.add_argument("argv", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if not args.cmd:
        p.error("expected one of: acquire, release, status, run")
    name = args.name or default_name()
    path = lock_path(name)
    session = args.session if args.session is not None else session_from_env()
    try:
        if args.cmd == "status":
            holder = read_holder(path)
            live = holder_live(holder)
            if args.json:
                import json
                print(json.dumps({"name": name, "path": str(path), "holder": holder,
                                  "live": live}, sort_keys=True))
            elif holder is None:
                print(f"workspace-lock {name}: free")
            else:
                state = "held" if live else "stale (holder gone or pid reused: the next acquire takes it)"
                print(f"workspace-lock {name}: {state}: {describe_holder(holder)}")
            return 0
        if args.cmd == "release":
            pid = args.pid or default_holder_pid()
            from swarmgate.procinfo import start_time
            owner = {"pid": pid, "start": start_time(pid), "session": session}
            released, holder = release(path, owner, args.force)
            if released:
                was = f" ({describe_holder(holder)})" if holder else " (was free)"
                print(f"workspace-lock {name}: released{was}")
                return 0
            print(f"workspace-lock {name}: not yours: held by {describe_holder(holder)}. Ask its "
                  f"session to release it, or a person may `workspace-lock release --name {name} --force`.",
                  file=sys.stderr)
            return 1
        if args.cmd == "acquire":
            pid = args.pid or default_holder_pid()
            owner = make_owner(pid, session, args.command if args.command is not None else _cmdline(pid))
            if owner["start"] is None:
                print(f"workspace-lock: no process {pid} to hold the lock for", file=sys.stderr)
                return int(Exit.USAGE)
            current = read_holder(path)
            if same_process(current, owner) and holder_live(current):
                print(f"workspace-lock {name}: already held by you ({describe_holder(current)})")
                return 0
            acquire(path, owner, args.timeout, args.report_every, sys.stderr, name)
            print(f"workspace-lock {name}: acquired for pid {pid} (released when it exits, or "
                  f"`workspace-lock release`)")
            return 0
        # run
        cmd = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if not cmd:
            p.error("run: expected -- COMMAND ...")
        import subprocess
        owner = make_owner(None, session, args.command if args.command is not None else " ".join(cmd)[:300])
        acquire(path, owner, args.timeout, args.report_every, sys.stderr, name)
        try:
            return subprocess.call(cmd)
        except OSError as e:
            print(f"workspace-lock run: cannot run {cmd[0]!r}: {e}", file=sys.stderr)
            return 127
        finally:
            release(path, owner)
    except LockTimeout as e:
        print(str(e), file=sys.stderr)
        return e.exit_code
    except StateError as e:
        print(f"workspace-lock: {e}", file=sys.stderr)
        return int(Exit.USAGE)


# --- self-test ---

def selftest_suite():
    """Cells: live holder blocks; a dead holder and a reused pid are taken over; 248 on timeout."""
    import shutil
    import subprocess
    import tempfile

    from swarmgate.procinfo import start_time
    from swarmgate.selftest import Cell, Suite

    tmp = {}

    def setup() -> None:
        tmp["dir"] = tempfile.mkdtemp(prefix="swarmgate-lock-selftest-")

    def teardown() -> None:
        shutil.rmtree(tmp.pop("dir", ""), ignore_errors=True)

    def lock(name: str, holder: dict | None) -> str:
        path = os.path.join(tmp["dir"], name)
        for p in (path, path + ".mutex"):
            if os.path.exists(p):
                os.unlink(p)
        if holder is not None:
            with open(path, "w") as f:
                f.write(format_record(holder))
        return path

    me = make_owner(None, "selftest", "selftest")

    from swarmgate.cell_outcome import broken, protected

    def live_blocks():
        path = lock("live", {"pid": os.getpid(), "start": start_time(os.getpid()), "session": "other"})
        taken, _ = try_take(path, dict(me, session="mine"))
        return protected(not taken, "a live holder's lock was taken")

    def dead_taken_over():
        proc = subprocess.Popen(["true"])
        start = start_time(proc.pid)
        proc.wait()
        path = lock("dead", {"pid": proc.pid, "start": start or 1, "session": "gone"})
        taken, holder = try_take(path, me)
        if taken and (holder is None or holder.get("session") != "gone"):
            return broken(f"taken, but the stale holder was not reported ({holder!r})")
        return protected(taken, "a dead holder's lock was not taken over")

    def reused_pid_taken_over():
        # a live pid (ours) with another start time: the pid was reused
        path = lock("reused", {"pid": os.getpid(), "start": (start_time(os.getpid()) or 0) + 1,
                               "session": "before-reboot"})
        taken, _ = try_take(path, me)
        return protected(taken, "a lock whose pid was reused stayed held")

    def timeout_248():
        import io
        path = lock("timeout", {"pid": os.getpid(), "start": start_time(os.getpid()), "session": "other"})
        try:
            acquire(path, dict(me, session="mine"), timeout=0, out=io.StringIO())
        except LockTimeout as e:
            return protected(e.exit_code == 248, f"timed out with {e.exit_code}, not 248")
        return broken("acquired a live holder's lock")

    cells = [Cell("live-holder-blocks", live_blocks), Cell("dead-holder-taken-over", dead_taken_over),
             Cell("reused-pid-taken-over", reused_pid_taken_over), Cell("timeout-is-248", timeout_248)]
    return Suite("workspace-lock", cells,
                 {"lock-ignores-start-time": ["reused-pid-taken-over"],
                  "lock-no-stale-takeover": ["dead-holder-taken-over", "reused-pid-taken-over"]},
                 setup=setup, teardown=teardown)


if __name__ == "__main__":
    sys.exit(main())
