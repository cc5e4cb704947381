"""A02: agent teams. Teammates are counted by D07 and judged as [teams] agent_type.

A teammate of an agent team is a Claude Code session of its own (the lead starts it with
`--agent-name`, `--team-name`, `--parent-session-id`), not a subagent: its tool calls carry no
agent_type, and without swarmgate they would be judged as a main agent (its `main` row of
[write], heavy tests with a prefix). The engine judges them as a subagent of the type
``[teams] agent_type`` (hooks/repo_sessions.teammate_of, applied before the guards are chosen).

A02 keeps the count D07 reads (hooks/repo_sessions.py): a teammate's tool call marks it busy
(its session registered for the repository), TeammateIdle marks it idle, and TaskCreated naming
a teammate marks it busy again; TaskCompleted is logged. Advisory: it never refuses.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import guard_gates

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent

TEAM_EVENTS = ("TaskCreated", "TaskCompleted", "TeammateIdle")


def _named(event: HookEvent) -> str:
    n = event.payload.get("teammate_name")
    return n if isinstance(n, str) else ""


def check_a02(event: HookEvent, config: Config) -> Finding | None:
    """What the act will record, said in the log (pure)."""
    from swarmgate.break_switch import broken

    if not guard_gates.teammates(event, config):   # the gate the engine asks before loading this module
        return None
    if broken("a02-no-team-count"):
        return None
    if event.name == "TeammateIdle" and _named(event):
        return G.Finding("A02", f"teammate {_named(event)} is idle: D07 no longer counts it.", decision=G.CONTEXT)
    if event.name == "TaskCreated" and _named(event):
        return G.Finding("A02", f"task {event.payload.get('task_id')} for teammate {_named(event)}: D07 counts it "
                                f"as running.", decision=G.CONTEXT)
    return None


def act_a02(event: HookEvent, config: Config) -> None:
    if not guard_gates.teammates(event, config):
        return None
    from swarmgate.break_switch import broken
    from swarmgate.hooks import repo_sessions as R

    if broken("a02-no-team-count"):
        return None
    if event.name == "TeammateIdle" and _named(event):
        R.mark_teammate(event.repo, _named(event), False)
    elif event.name == "TaskCreated" and _named(event):
        R.mark_teammate(event.repo, _named(event), True)
    elif event.name == "PreToolUse" and event.session_id:
        mate = R.teammate_of(event)
        if mate is not None:
            from swarmgate.procinfo import session_process
            proc = session_process()
            R.note(event.repo, event.session_id, {"pid": proc.get("pid"), "start": proc.get("start")},
                   teammate=mate, busy=True)
    return None


GUARDS = (
    G.Guard(
        code="A02", summary="agent teams: teammates are counted by D07 and judged as [teams] agent_type",
        events=("PreToolUse", *TEAM_EVENTS), tools=(), check=check_a02, act=act_a02, advisory=True,
        doc=G.GuardDoc(
            why="A teammate is a session of its own, so its calls carry no agent type and D07's per-session "
                "count never sees it: five sessions with five teammates each would run 25 agents. Each teammate "
                "is judged as a subagent of [teams] agent_type (its [write] row, no heavy tests) and counted "
                "while it is busy against its lead's [dispatch] max_concurrent and the repository's "
                "max_concurrent_repo.",
            example="a teammate started with --agent-name tester writes docs/x.md: judged with the `teammate` row",
            instead="Nothing to do; give [teams] agent_type a [write] row that fits the team's work.",
            exceptions="Busy from a task given to it or its own tool call until TeammateIdle. Never refuses."),
        breaks={"a02-no-team-count": "teammates are not counted"},
        cases=lambda: (
            G.Case("teammate-goes-idle", "TeammateIdle", {"teammate_name": "tester", "team_name": "t"}, fires=True,
                   breaks=("a02-no-team-count",)),
            G.Case("task-for-a-teammate", "TaskCreated",
                   {"task_id": "1", "task_subject": "parse", "teammate_name": "tester"}, fires=True,
                   breaks=("a02-no-team-count",)),
            G.Case("task-for-nobody-yet", "TaskCreated", {"task_id": "2", "task_subject": "parse"}, fires=False),
            G.Case("main-agent-call", "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}},
                   fires=False),
        )),
)
