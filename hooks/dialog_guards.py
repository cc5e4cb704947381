"""Dialogs with a person: Q01, a subagent may not ask a person; N01, a client waiting for a person
is an alert.

**Q01** (PreToolUse on the tools that ask a person): a subagent's AskUserQuestion (a question with
choices), or its ExitPlanMode (a plan put to the person for approval), is refused. The seed's
rule: subagents do not talk to people; the main agent does, and it is the one that knows the
person's earlier answers. Claude Code 2.1.332 itself refuses a subagent's AskUserQuestion before
any hook sees it (FACTS.md), but that is the client's choice, not a contract: a future release,
a plugin's dialog tool or another client (Codex's request_user_input, mapped onto AskUserQuestion
by its dialect) would reach a person from a subagent. The way out: put the question in the
report; the main agent asks and dispatches again with the answer.

**N01** (Notification, advisory): when the client notifies that it waits for a person (a
permission prompt, an idle prompt, an agent that needs input, an MCP elicitation), the
notification is written as an alert (kind ``waiting-for-person``): `swarmgate status`, swarm-watch
and the next session start show it, so a session nobody watches does not wait unseen.

Light at import.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


# the tools that put something to a person and wait for the answer (swarmgate's names: a client's
# own dialog tools are mapped onto these by its dialect)
DIALOG_TOOLS = ("AskUserQuestion", "ExitPlanMode")
ALERT_KIND = "waiting-for-person"


def _broken(name: str) -> bool:
    from swarmgate.break_switch import broken
    return broken(name)


def _question(event: HookEvent) -> str:
    """The question as the agent wrote it (AskUserQuestion's questions, ExitPlanMode's plan), short."""
    ti = event.tool_input
    qs = ti.get("questions")
    parts: list[str] = []
    if isinstance(qs, list):
        for q in qs[:3]:
            if isinstance(q, dict) and isinstance(q.get("question"), str):
                parts.append(q["question"])
    for key in ("question", "plan", "message"):
        if isinstance(ti.get(key), str):
            parts.append(ti[key])
    text = " / ".join(" ".join(p.split()) for p in parts if p.strip())
    return text if len(text) <= 160 else text[:157] + "..."


def check_q01(event: HookEvent, config: Config) -> Finding | None:  # noqa: ARG001 - the check signature
    if not event.is_subagent or _broken("q01-allow-subagent-dialogs"):
        return None
    asked = _question(event)
    what = "asks the person" if event.tool_name != "ExitPlanMode" else "puts a plan to the person for approval"
    return G.Finding(
        "Q01", f"subagent `{event.actor}` {what} ({event.tool_name}"
               + (f": {asked!r}" if asked else "") + "). Subagents do not talk to people: the main agent does, "
               "and it knows what the person already said.",
        "put the question (with the options and what you would choose) in your report and hand back; the "
        "main agent asks the person and dispatches again with the answer. Meanwhile do what does not depend "
        "on it.")


# --- N01: a notification that the client waits for a person ----------------------------------

def _waiting(event: HookEvent) -> str:
    """The notification's text when it says the client waits for a person, else ""."""
    p = event.payload
    msg = p.get("message") if isinstance(p.get("message"), str) else ""
    kind = p.get("notification_type") if isinstance(p.get("notification_type"), str) else ""
    # Claude Code's kinds; Gemini CLI's tool-approval notification
    waiting_kinds = ("permission_prompt", "idle_prompt", "agent_needs_input", "elicitation_dialog", "ToolPermission")
    if kind in waiting_kinds:
        return msg or kind
    low = msg.lower()
    if not kind and any(w in low for w in ("needs your", "waiting for your", "your input", "your permission")):
        return msg
    return ""


def check_n01(event: HookEvent, config: Config) -> Finding | None:  # noqa: ARG001
    if _broken("n01-no-waiting-alert"):
        return None
    text = _waiting(event)
    if not text:
        return None
    return G.Finding("N01", f"swarmgate: the session waits for a person ({text}); written as an alert "
                            f"({ALERT_KIND}).", decision=G.CONTEXT)


def alert_waiting(event: HookEvent, config: Config) -> None:  # noqa: ARG001 - the act signature
    """N01's act: the alert, with the session and the notification's kind."""
    text = _waiting(event)
    if not text or _broken("n01-no-waiting-alert"):
        return None
    from swarmgate.alerts import write_alert

    kind = event.payload.get("notification_type")
    write_alert(ALERT_KIND, f"waiting for a person: {text}", source="N01", session=event.session_id or None,
                notification_type=kind if isinstance(kind, str) and kind else None,
                agent=event.agent_id or None)
    return None


def _ask(tool: str = "AskUserQuestion", **agent: str) -> dict:
    ti = ({"questions": [{"question": "Which parser should I keep, the old or the new one?",
                          "header": "parser", "options": [{"label": "old"}, {"label": "new"}],
                          "multiSelect": False}]}
          if tool == "AskUserQuestion" else {"plan": "1. rewrite the parser\n2. run the tests"})
    return {"tool_name": tool, "tool_input": ti, **agent}


_SUB = {"agent_id": "a1", "agent_type": "implementer"}

GUARDS = (
    G.Guard(
        code="Q01", summary="a subagent does not ask a person (AskUserQuestion, a plan put for approval)",
        events=("PreToolUse",), tools=DIALOG_TOOLS, check=check_q01,
        doc=G.GuardDoc(
            why="Subagents do not talk to people: the main agent does, and it is the one that knows the "
                "person's earlier answers and the whole round. A subagent's question reaches a person out of "
                "context (or nobody, in a headless run, and the subagent waits). Claude Code 2.1.332 refuses "
                "a subagent's AskUserQuestion itself, but a client's own refusal is not a contract: other "
                "dialog tools, other clients (Codex's request_user_input) and a future release are covered "
                "here.",
            example='a subagent calls AskUserQuestion {"questions": [{"question": "old or new parser?", ...}]}',
            instead="Put the question in the report (with the options and the one you would choose) and hand "
                    "back; the main agent asks the person and dispatches again with the answer.",
            exceptions="The main agent may ask. Gemini CLI sends no agent identity, so there every call is the "
                       "main agent's (docs/clients.md)."),
        breaks={"q01-allow-subagent-dialogs": "subagents may ask the person"},
        cases=lambda: (
            G.Case("subagent-asks", "PreToolUse", _ask(**_SUB), fires=True, breaks=("q01-allow-subagent-dialogs",)),
            G.Case("subagent-plan-for-approval", "PreToolUse", _ask("ExitPlanMode", **_SUB), fires=True,
                   breaks=("q01-allow-subagent-dialogs",)),
            G.Case("main-agent-asks", "PreToolUse", _ask(), fires=False),
            G.Case("main-agent-plan", "PreToolUse", _ask("ExitPlanMode"), fires=False),
        )),
    G.Guard(
        code="N01", summary="Notification: a client waiting for a person is written as an alert",
        events=("Notification",), tools=(), check=check_n01, act=alert_waiting, advisory=True,
        doc=G.GuardDoc(
            why="A session that waits for a person (a permission prompt, an idle prompt, an agent that needs "
                "input) does nothing until someone looks; in a background or unattended session nobody does. "
                "As an alert it shows in `swarmgate status`, swarm-watch and the next session start.",
            example='Notification {"notification_type": "permission_prompt", "message": "Claude needs your '
                    'permission to use Bash"}',
            instead="Nothing to do in the agent; the person answers, or sets [hooks] ask_when_headless so that "
                    "unattended sessions never wait.",
            exceptions="Other notifications (auth success, an agent completed) are not written."),
        breaks={"n01-no-waiting-alert": "a client waiting for a person leaves no alert"},
        cases=lambda: (
            G.Case("permission-prompt", "Notification",
                   {"notification_type": "permission_prompt",
                    "message": "Claude needs your permission to use Bash"}, fires=True,
                   breaks=("n01-no-waiting-alert",)),
            G.Case("idle-prompt", "Notification",
                   {"notification_type": "idle_prompt", "message": "Claude is waiting for your input"}, fires=True,
                   breaks=("n01-no-waiting-alert",)),
            G.Case("auth-success", "Notification", {"notification_type": "auth_success", "message": "signed in"},
                   fires=False),
        )),
)
