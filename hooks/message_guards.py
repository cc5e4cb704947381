"""M01 (SPEC §4.2): no SendMessage to a subagent that has already handed back.

Continuing a subagent that handed back layers patch on patch in its context
until nobody can say what it is doing. Its work continues in a new dispatch
whose prompt points at the hand-over file that `agent-handover` builds from
its transcript.

SendMessage's recipient is ``to``: an agent's name (the Agent call's
``name``) or its agent id; Claude Code 2.1 also accepts ``{"agentId": ...}``.
The session state (swarmgate.hooks.session_state) knows which subagents of
this session stopped and which names they carried.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


MESSAGE_TOOLS = ("SendMessage",)


def recipient(tool_input: dict) -> str:
    to = tool_input.get("to")
    if isinstance(to, dict):
        to = to.get("agentId") or to.get("agent_id") or to.get("name")
    if not isinstance(to, str):
        to = tool_input.get("recipient")
    return to.strip() if isinstance(to, str) else ""


def judge_m01(state: dict, to: str) -> Finding | None:
    from swarmgate.hooks.session_state import stopped_target

    hit = stopped_target(state, to)
    if hit is None:
        return None
    aid, a = hit
    label = f"{to!r}" if to == aid else f"{to!r} (agent {aid})"
    return G.Finding(
        "M01", f"the subagent {label} of type {a.get('type') or '?'} has already handed back (SubagentStop seen); "
               f"continuing it piles new instructions on a finished context.",
        f"run `agent-handover {aid}` to write its hand-over file, then dispatch a new agent pointing its prompt "
        f"at the hand-over file (e.g. `read first: <hand-over file>`).")


def check_m01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.break_switch import broken
    from swarmgate.hooks.session_state import load

    if broken("m01-allow-continuation"):
        return None
    to = recipient(event.tool_input)
    if not to or not event.session_id:
        return None
    return judge_m01(load(event.session_id), to)


def _state(agents: dict) -> dict:
    import json
    return {".selftest-state/sessions/selftest-session/state.json":
            json.dumps({"session": "selftest-session", "procs": [], "dispatches": [], "agents": agents})}


_DONE = {"a77": {"type": "implementer", "started": 1.0, "stopped": 2.0, "proc": {"pid": 1},
                 "name": "parser", "dispatch": None}}
_RUNNING = {"a78": {"type": "implementer", "started": 1.0, "stopped": None, "proc": {"pid": 1},
                    "name": "parser", "dispatch": None}}


def _send(to: object) -> dict:
    return {"tool_name": "SendMessage", "tool_input": {"to": to, "message": "also fix the tests"}}


GUARDS = (
    G.Guard(
        code="M01", summary="no SendMessage to a subagent that has already handed back",
        events=("PreToolUse",), tools=MESSAGE_TOOLS, check=check_m01, budget_ms=10000,
        doc=G.GuardDoc(
            why="A subagent continued again and again accumulates layers of patches in its context until "
                "nobody can explain what it is doing. The next step starts fresh from the hand-over file, "
                "which carries its prompt, files and commands mechanically, without the main agent "
                "retelling (and diluting) it.",
            example='SendMessage {"to": "parser", "message": "also fix the tests"} after parser handed back',
            instead="`agent-handover <agent id>`, then a new dispatch whose prompt points at the file.",
            exceptions="Messages to running subagents and to other sessions are not judged."),
        breaks={"m01-allow-continuation": "messages to handed-back subagents are let through"},
        cases=lambda: (
            G.Case("by-name", "PreToolUse", _send("parser"), fires=True,
                   breaks=("m01-allow-continuation",), files=_state(_DONE)),
            G.Case("by-agent-id", "PreToolUse", _send("a77"), fires=True,
                   breaks=("m01-allow-continuation",), files=_state(_DONE)),
            G.Case("by-agent-id-object", "PreToolUse", _send({"agentId": "a77"}), fires=True,
                   breaks=("m01-allow-continuation",), files=_state(_DONE)),
            G.Case("running-agent", "PreToolUse", _send("parser"), fires=False, files=_state(_RUNNING)),
            G.Case("name-reused-by-running-agent", "PreToolUse", _send("parser"), fires=False,
                   files=_state({**_DONE, **_RUNNING})),
            G.Case("unknown-recipient", "PreToolUse", _send("other-session-main"), fires=False,
                   files=_state(_DONE)),
        )),
)
