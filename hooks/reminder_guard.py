"""C05: a reminder that fell due reaches the agent that set it at its next tool call.

`remind` (agents/remind.py) records a reminder for its session; the wake waiter (agents/wake.py)
wakes an idle main agent with it. An agent at work gets it here instead: after each of its tool
calls (PostToolUse, PostToolUseFailure) and at a session start, the reminders of this session due
by now for this agent are added to its context and marked delivered. A subagent's `remind` call
makes the reminder its own (the act, from the call's PostToolUse: `remind` itself cannot tell
which agent runs it); a subagent's reminder falling due after it handed back goes to the main
agent. Advisory: never refuses.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


def _due(event: HookEvent) -> list:
    def build() -> list:
        from swarmgate import lean_os as os
        import time

        from swarmgate.agents import reminders as R

        if not event.session_id or not os.path.isdir(R.session_dir(event.session_id)):
            return []
        running = None
        if not event.agent_id:
            from swarmgate.hooks import session_state as S
            running = {aid for aid, _ in S.running(S.load(event.session_id))}
        return R.due_for(event.session_id, event.agent_id, time.time(), running)
    return event.derived("reminders_due", build)


def check_c05(event: HookEvent, config: Config) -> Finding | None:  # noqa: ARG001
    from swarmgate.agents.reminders import text_of
    from swarmgate.break_switch import broken

    if broken("c05-no-reminders"):
        return None
    due = _due(event)
    if not due:
        return None
    return G.Finding("C05", "swarmgate: a reminder you set is due:\n" + "\n".join(f"- {text_of(r)}" for r in due),
                     decision=G.CONTEXT)


def act_c05(event: HookEvent, config: Config) -> None:  # noqa: ARG001
    from swarmgate.agents import reminders as R
    from swarmgate.break_switch import broken

    if broken("c05-no-reminders") or not event.session_id:
        return None
    for r in _due(event):
        R.take(event.session_id, r["id"], "shown at a tool call")
    cmd = event.tool_input.get("command") if event.tool_name in G.SHELL_TOOLS else None
    if event.agent_id and isinstance(cmd, str) and "remind" in cmd:
        import time
        took = event.payload.get("duration_ms")
        since = time.time() - (float(took) / 1000.0 if isinstance(took, (int, float)) else 60.0) - 1.0
        R.claim_for(event.session_id, event.agent_id, since, cmd)
    return None


def _reminder(due_in: float, agent: str | None = None) -> dict:
    import json
    rec = {"id": "r1", "session": "selftest-session", "agent": agent, "created": 1.0, "due": 1.0 + due_in,
           "message": "check the build", "state": "pending"}
    return {".selftest-state/reminders/selftest-session/r1.json": json.dumps(rec)}


_CALL = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}}

GUARDS = (
    G.Guard(
        code="C05", summary="a reminder that fell due reaches the agent that set it at its next tool call",
        events=("PostToolUse", "PostToolUseFailure", "SessionStart"), tools=(), check=check_c05, act=act_c05,
        advisory=True,
        doc=G.GuardDoc(
            why="A reminder is only worth setting if it comes back to the agent that set it. An idle main agent "
                "is woken with it (the wake waiter, an asyncRewake hook on Stop); an agent at work reads it right "
                "after its next tool call.",
            example="`remind 10m 'check the build'`, then ten minutes of other work: the next tool result is "
                    "followed by the reminder",
            instead="Nothing to do; `remind list` shows what is pending, `remind cancel ID` drops one.",
            exceptions="Each reminder is delivered once, by whichever comes first (this or the wake waiter). A "
                       "subagent's reminder that falls due after it handed back goes to the main agent."),
        breaks={"c05-no-reminders": "due reminders are never shown"},
        cases=lambda: (
            G.Case("main-agent-reminder-due", "PostToolUse", _CALL, fires=True, breaks=("c05-no-reminders",),
                   files=_reminder(0)),
            G.Case("subagent-reminder-due", "PostToolUse", {**_CALL, "agent_id": "a1", "agent_type": "implementer"},
                   fires=True, breaks=("c05-no-reminders",), files=_reminder(0, "a1")),
            G.Case("not-due-yet", "PostToolUse", _CALL, fires=False, files=_reminder(10 ** 10)),
            G.Case("another-agents-reminder", "PostToolUse", {**_CALL, "agent_id": "a2", "agent_type": "implementer"},
                   fires=False, files=_reminder(0, "a1")),
        )),
)
