"""The wake waiter: `swarmgate hook Wake`, an `asyncRewake` hook on Stop (install wires it).

When the main agent ends its turn (Stop), Claude Code starts this hook in the background (in an
interactive session, or with streaming input: `-p --input-format stream-json` and stdin open;
measured with 2.1.332). It waits, and when something needs the idle main agent it writes that on
stderr and exits 2: Claude Code then starts a new turn whose last message carries the text. What
wakes it:

- a reminder of the main agent falling due (agents/reminders.py: `remind`), or one of a subagent
  that handed back before it fell due;
- an alert for this session from swarm-watch (kinds ``watch:*``) that the main agent has not
  seen yet (the alert reader ``main:<session>``, which C04 also reads: seen once, either way).

It waits only while something can still come: a pending reminder, or this session's swarm-watch
alive; else it exits 0 at once (a stream-json session whose input closed waits for its background
hooks, so a waiter with nothing to wait for must not hold it). It never waits where nothing can be
woken: in `claude -p` without streaming input this hook runs in the foreground and would hold the
session's end. One waiter per session (a lock); a later Stop's waiter exits 0 while one waits.
"""
from __future__ import annotations

import os
import sys
import time

POLL_S = 1.0
MAX_WAIT_S = 6 * 3600          # the hook's timeout in settings.json is a little longer (install.py)
WAKE_KINDS_PREFIX = "watch:"   # swarm-watch's alerts: the ones that need the main agent


def _broken(name: str) -> bool:
    from swarmgate.break_switch import broken
    return broken(name)


def _running_agents(session: str) -> set:
    from swarmgate.hooks import session_state as S
    return {aid for aid, _ in S.running(S.load(session))}


def alerts_signature() -> tuple:
    """The alert log's size and change time: the waiter re-reads the log only when this changes."""
    from swarmgate.state_paths import alerts_dir
    try:
        st = os.stat(os.path.join(str(alerts_dir()), "alerts.jsonl"))
    except OSError:
        return ()
    return (st.st_size, st.st_mtime_ns)


def pending_text(session: str, now: float, read_alerts: bool = True) -> tuple[str, list, list]:
    """(what to tell the main agent, reminders to mark delivered, alerts to mark read) right now;
    ``read_alerts`` False: the alert log has not changed since the last look."""
    from swarmgate.agents import reminders as R
    from swarmgate.alerts import unread

    rems = [] if _broken("wake-ignores-reminders") else R.due_for(session, None, now, _running_agents(session))
    alerts = [a for a in unread("main:" + session, mark=False, since=now - 24 * 3600)
              if a.get("session") in (None, "", session)] if read_alerts else []
    if not any(str(a.get("kind") or "").startswith(WAKE_KINDS_PREFIX) for a in alerts):
        alerts = []   # only swarm-watch's reports wake; the others wait for C04 (or ride along below)
    # every unread alert rides along: the main agent's alert cursor is shared with C04, so moving it past
    # the watchdog's report must not hide an older alert C04 has not shown yet
    lines = [R.text_of(r) for r in rems]
    lines += [f"swarm-watch ({a['kind'][len(WAKE_KINDS_PREFIX):]}): {a.get('message')}"
              if str(a.get("kind") or "").startswith(WAKE_KINDS_PREFIX)
              else f"[{a.get('source') or a.get('kind') or 'alert'}] {a.get('message')}" for a in alerts]
    text = ""
    if lines:
        text = "swarmgate woke you:\n" + "\n".join(f"- {x}" for x in lines)
    return text, rems, alerts


def something_may_come(session: str) -> bool:
    from swarmgate.agents import reminders as R
    from swarmgate.agents.swarm_watch import running_instance

    return R.next_due(session, None, _running_agents(session)) is not None or running_instance(session) is not None


def wait(session: str, pid: int | None, deadline: float, say=None) -> int:
    """Wait for something to wake the main agent of ``session`` with; 2 (woken, text written by ``say``) or 0."""
    from swarmgate.agents import reminders as R
    from swarmgate.alerts import mark_read
    from swarmgate.procinfo import start_time

    say = say or (lambda text: sys.stderr.write(text + "\n"))
    start = start_time(pid) if pid else None
    seen: tuple | None = None
    while True:
        now = time.time()
        sig = alerts_signature()
        text, rems, alerts = pending_text(session, now, read_alerts=sig != seen)
        seen = sig
        if text:
            for r in rems:
                R.take(session, r["id"], "woke the idle main agent (asyncRewake)", now)
            if alerts:
                mark_read("main:" + session, max(float(a.get("time") or 0) for a in alerts))
            say(text)
            return 2
        if not something_may_come(session) or now >= deadline:
            return 0
        if pid and start_time(pid) != start:
            return 0   # the session ended
        nxt = R.next_due(session, None, _running_agents(session))
        time.sleep(max(0.05, min(POLL_S, (nxt - now) if nxt else POLL_S)))


def main(stdin_text: str) -> int:
    """The Wake hook: read the Stop payload, decide whether waiting makes sense, wait. Exit 0 or 2."""
    import json

    from swarmgate.agents import reminders as R
    from swarmgate.statefile import ensure_dir

    try:
        payload = json.loads(stdin_text or "{}")
    except ValueError:
        return 0
    session = str(payload.get("session_id") or "") if isinstance(payload, dict) else ""
    if not session or payload.get("agent_id"):
        return 0
    mode = R.wake_mode()
    if not R.wakeable(mode) and not _broken("wake-waits-in-print-mode"):
        return 0   # `claude -p`: this hook runs in the foreground there; waiting would hold the session's end
    import fcntl
    d = R.session_dir(session)
    ensure_dir(d)
    fd = os.open(str(d / ".waiter"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0   # another waiter of this session waits already
        return wait(session, R.client_pid(), time.time() + MAX_WAIT_S)
    finally:
        os.close(fd)
