"""`remind <when> <message>`, `remind list`, `remind cancel ID`: the project's one timer (T01).

    remind 10m 'check the build'      due in 10 minutes (units s, m, h, d; or a clock time 14:30)
    remind list [--all] [--json]      this session's reminders (every session's with --all)
    remind cancel ID                  drop a pending reminder

A reminder belongs to the agent session that set it ($CLAUDE_CODE_SESSION_ID, or
$SWARMGATE_SESSION_ID; `--session` for a person) and reaches the agent that set it: an idle main
agent is woken by the wake waiter (agents/wake.py), an agent at work reads it at its next tool
call (C05). In `claude -p` without streaming input nothing can wake a session: remind says so,
and nothing waits (agents/reminders.py). It never blocks.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence

from swarmgate.agents import reminders as R
from swarmgate.front_door import UsageError, entry
from swarmgate.tool_parser import ToolParser

_WHERE = {
    "interactive": "if the main agent is idle then, it is woken with it; an agent at work reads it at its next tool "
                   "call",
    "stream": "the session reads its input as a stream (stream-json): while that input stays open, an idle main "
              "agent is woken with it; an agent at work reads it at its next tool call",
    "print": "NOTHING CAN WAKE THIS SESSION: it runs as `claude -p` without streaming input, so no hook can start a "
             "new turn. It is shown at this session's next tool call after it is due, if the session still runs "
             "then; nothing waits for it. Keep working, or end your turn knowing it will not come back to you",
    "unknown": "no Claude Code process found for this session: it is shown at the session's next tool call after "
               "it is due",
}


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t))


def _session(arg: str | None) -> str:
    from swarmgate.hosts.ledger import session_of
    s = arg or session_of()
    if not s:
        raise UsageError("no agent session: a reminder goes to the agent that set it, and $CLAUDE_CODE_SESSION_ID "
                         "is not set here (run it from an agent's Bash tool, or pass --session ID)", "remind")
    return s


def set_reminder(when: str, message: str, session: str, mode: str) -> tuple[dict, str]:
    if not message.strip():
        raise UsageError("no message: `remind 10m 'check the build'`", "remind")
    try:
        due = R.parse_when(when)
    except R.ReminderError as e:
        raise UsageError(str(e), "remind") from None
    from swarmgate.tools_dir import agent_command

    rec = R.add(session, message.strip(), due)
    line = (f"reminder {rec['id']} set for {_clock(due)} (in {int(round(due - time.time()))}s): {rec['message']!r}. "
            f"{_WHERE.get(mode, _WHERE['unknown'])[:1].upper()}{_WHERE.get(mode, _WHERE['unknown'])[1:]}. "
            f"Cancel: `{agent_command('remind')} cancel {rec['id']}`.")   # runs pasted, even off PATH
    return rec, line


@entry("remind")
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["list"]:
        p = ToolParser(prog="remind list", description="This session's reminders.")
        p.add_argument("--all", action="store_true", help="every session's reminders")
        p.add_argument("--json", action="store_true")
        p.add_argument("--session", default=None)
        a = p.parse_args(args[1:])
        sessions = R.sessions() if a.all else [_session(a.session)]
        rows = [r for s in sessions for r in R.load(s)]
        if a.json:
            print(json.dumps(rows, sort_keys=True))
            return 0
        if not rows:
            print("no reminders")
        for r in rows:
            state = r.get("state")
            if state == "delivered":
                state += f" ({(r.get('delivered') or {}).get('how', '')})"
            print(f"{r['id']}  due {_clock(float(r['due']))}  {state}  "
                  + (f"[{str(r['session'])[:8]}] " if a.all else "")
                  + (f"(subagent {r['agent']}) " if r.get("agent") else "") + str(r.get("message")))
        return 0
    if args[:1] == ["cancel"]:
        p = ToolParser(prog="remind cancel", description="Drop a pending reminder.")
        p.add_argument("id")
        p.add_argument("--session", default=None)
        a = p.parse_args(args[1:])
        session = _session(a.session)
        rec = next((r for r in R.load(session) if r["id"] == a.id), None)
        if rec is None:
            raise UsageError(f"no reminder {a.id} in this session (`remind list` shows them)", "remind cancel")
        if rec.get("state") != "pending":
            print(f"reminder {a.id} is already {rec.get('state')}")
            return 0
        R.update(session, a.id, state="cancelled", cancelled=round(time.time(), 3))
        print(f"cancelled reminder {a.id}: {rec.get('message')!r}")
        return 0
    p = ToolParser(prog="remind", description="Set a reminder for the agent that runs this: `remind 10m 'check "
                                              "the build'`; `remind list`; `remind cancel ID`.")
    p.add_argument("when", help="a delay (90s, 10m, 1h30m, 2d) or a clock time (14:30)")
    p.add_argument("message", nargs="+", help="what to be reminded of")
    p.add_argument("--session", default=None, help="the session (default: $CLAUDE_CODE_SESSION_ID)")
    a = p.parse_args(args)
    _, line = set_reminder(a.when, " ".join(a.message), _session(a.session), R.wake_mode())
    print(line)
    return 0


# --- self-test -----------------------------------------------------------------------------------

def selftest_suite():
    """Cells: a due reminder wakes the idle main agent; where nothing can be woken the waiter does not wait."""
    import contextlib
    import io
    import os
    import shutil
    import subprocess
    import tempfile

    from swarmgate.agents import wake
    from swarmgate.cell_outcome import protected
    from swarmgate.selftest import Cell, Suite, scoped_env

    def in_state(fn):
        d = tempfile.mkdtemp(prefix="swarmgate-remind-")
        try:
            with scoped_env({"SWARMGATE_STATE_DIR": d}):
                return fn()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def due_wakes():
        def body():
            R.add("selftest-remind", "check the build", time.time() + 0.3)
            said: list = []
            code = wake.wait("selftest-remind", None, time.time() + 2, said.append)
            return protected(code == 2 and said and "check the build" in said[0],
                             f"a due reminder did not wake the main agent (exit {code}, said {said})")
        return in_state(body)

    def print_mode_never_waits():
        def body():
            R.add("selftest-remind", "later", time.time() + 6)
            proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "-p", "go"])
            try:
                os.environ["CLAUDE_PID"] = str(proc.pid)
                t0 = time.monotonic()
                # what the waiter would say to the session is the cell's, not the terminal's: under its
                # switch it waits and says "swarmgate woke you: ... later", which read as a real wake
                with contextlib.redirect_stderr(io.StringIO()):
                    code = wake.main(json.dumps({"session_id": "selftest-remind", "hook_event_name": "Stop"}))
                took = time.monotonic() - t0
            finally:
                os.environ.pop("CLAUDE_PID", None)
                proc.kill()
                proc.wait()
            return protected(code == 0 and took < 3, f"the waiter waited {took:.1f}s in a `claude -p` session")
        return in_state(body)

    return Suite("remind", [Cell("due-reminder-wakes", due_wakes),
                            Cell("print-mode-never-waits", print_mode_never_waits)],
                 {"wake-ignores-reminders": ["due-reminder-wakes"],
                  "wake-waits-in-print-mode": ["print-mode-never-waits"]})


if __name__ == "__main__":
    sys.exit(main())
