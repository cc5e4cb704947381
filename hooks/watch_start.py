"""A01: after the first dispatch of a session, start its watchdog (swarm-watch, SPEC §6.3).

PostToolUse on Agent|Task. When no live swarm-watch runs for the session (the
check), one is started (the act, ``start_watchdog``) fully detached (its own session, stdin /dev/null), watching the
descendants of the session's Claude Code process; it ends when that process
ends. Advisory: it never refuses, and a failure to start is reported in the
context.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent



def _needs_watchdog(event: HookEvent) -> bool:
    from swarmgate.agents.swarm_watch import running_instance
    from swarmgate.break_switch import broken

    return not (broken("no-watchdog") or not event.session_id or running_instance(event.session_id))


_WHAT = "it reports long tool calls, idle subagents, wait loops, repeated commands and memory hogs as alerts."


def check_a01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not _needs_watchdog(event):
        return None
    return G.Finding("A01", f"[A01] no swarm-watch runs for this session: one is started now; {_WHAT}",
                     decision=G.CONTEXT)


def start_watchdog(event: HookEvent, config: Config) -> Finding | None:
    """A01's act: start the session's swarm-watch, fully detached (after the decision; the
    dispatch has happened). Its finding replaces the judged one with the pid."""
    from swarmgate import lean_os as os
    import subprocess
    import sys

    from swarmgate.hooks.session_state import session_process

    if not _needs_watchdog(event):
        return None   # another hook process started one since the judgement
    proc = session_process()
    argv = [sys.executable, "-m", "swarmgate", "swarm-watch", "--session", event.session_id,
            "--cwd", event.repo]
    if proc.get("pid"):
        argv += ["--pid", str(proc["pid"])]
    if os.environ.get("SWARMGATE_SELFTEST_CASE"):
        # a self-test cell: one real tick, waited for, so nothing outlives the cell's temp repository
        cp = subprocess.run(argv + ["--once"], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        if cp.returncode != 0:
            raise RuntimeError(f"swarm-watch --once exited {cp.returncode}: {cp.stderr.decode()[-200:]}")
        pid: int | str = "one tick"
    else:
        pid = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True, close_fds=True, env=dict(os.environ)).pid
        from swarmgate.agents.swarm_watch import reserve_instance
        reserve_instance(event.session_id, pid)   # running from now on, not from when its interpreter is up
    return G.Finding("A01", f"[A01] swarm-watch started for this session (pid {pid}); {_WHAT}",
                     decision=G.CONTEXT)


GUARDS = (
    G.Guard(
        code="A01",
        summary="after the first dispatch, start the session's watchdog (swarm-watch)",
        events=("PostToolUse",),
        tools=G.DISPATCH_TOOLS,
        check=check_a01,
        act=start_watchdog,
        advisory=True,
        doc=G.GuardDoc(
            why="Nobody watches a swarm by reading every transcript. Subagents hang in wait loops, repeat a "
                "failing command, or keep running after they hand back; a watchdog per session notices and "
                "writes alerts that the next SessionStart and hooks surface.",
            example="the main agent dispatches its first subagent",
            instead="Nothing to do: read the alerts; acknowledge one with `swarm-watch ack KEY --session ID`.",
            exceptions="One watchdog per session: later dispatches find it running and do nothing.",
        ),
        breaks={"no-watchdog": "no watchdog is started"},
        cases=lambda: (
            G.Case("first-dispatch-starts-watchdog", "PostToolUse",
                   {"tool_name": "Agent", "tool_input": {"subagent_type": "clerk", "prompt": "x"},
                    "tool_response": {"status": "completed"}},
                   fires=True, breaks=("no-watchdog",)),
            G.Case("bash-call-starts-nothing", "PostToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}},
                   fires=False),
        ),
    ),
)
