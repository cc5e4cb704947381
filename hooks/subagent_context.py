"""C02 (SPEC §4.6a): at SubagentStart, tell the subagent exactly what its job needs.

Claude Code has no per-agent switch to skip CLAUDE.md; swarmgate keeps the
seed's intent another way: the subagent gets, as additionalContext,
``.claude/agent-common.md`` followed by every rule file its type lists in the
``rules:`` key of its definition's frontmatter
(``.claude/agents/<type>.md``, e.g. ``rules: rules/implementing.md,
rules/testing.md``; paths relative to ``.claude/``). The text is built by
``swarmgate.agents.agent_definitions.subagent_context``.

Its act (``record_start``) records the start in the session state (agent id, type, time,
the session process), which D07 counts and M01, H01 and SessionStart read.
Switching C02 off in the config stops that recording too: D07 then counts
only dispatches of the last ``[dispatch] pending_seconds``.
"""
from __future__ import annotations

import os

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


MAX_CONTEXT = 60_000  # characters


def record_start(event: HookEvent, config: Config) -> None:  # noqa: ARG001 - the act signature
    """C02's act: the start is recorded in the session state (SubagentStart has happened)."""
    from swarmgate.hooks import session_state as S

    if event.session_id and event.agent_id:
        worktree = None
        if event.root != event.repo:   # dispatched with isolation "worktree": its work directory
            from swarmgate.hooks.agent_worktree import head_of
            worktree = {"path": event.root, "head": head_of(event.root)}
        meta = S.subagent_meta(event.transcript_path, event.session_id, event.agent_id)
        S.start(event.session_id, event.agent_id, event.agent_type or "", worktree=worktree,
                dispatch_id=str(meta.get("toolUseId") or ""))


def check_c02(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.agents.agent_definitions import agent_path, subagent_context
    from swarmgate.break_switch import broken

    if broken("c02-no-rules"):
        return None
    atype = event.agent_type or ""
    common = os.path.join(event.repo, ".claude", "agent-common.md")
    if not os.path.isfile(common) and not (atype and os.path.isfile(agent_path(event.repo, config, atype))) \
            and not (atype and _plugin_brings_rules(event.repo, config, atype)):
        return None  # swarmgate's rules are not here (nor a plugin's agent, which brings its own): nothing to give
    text = subagent_context(event.repo, config, atype or None)
    if len(text) > MAX_CONTEXT:
        text = text[:MAX_CONTEXT] + f"\n[swarmgate: cut at {MAX_CONTEXT} characters; read the rest in .claude/]\n"
    head = (f"swarmgate: the rules for your job as {atype or 'a subagent'} "
            "(agent-common.md and the rules your type lists):")
    if event.root != event.repo:
        text += worktree_note(event)
    return G.Finding("C02", head + "\n\n" + text, decision=G.CONTEXT)


def _plugin_brings_rules(repo: str, config: Config, atype: str) -> bool:
    """Whether ``atype`` is a plugin's agent whose plugin ships agent-common.md (swarmgate's plugin,
    in a repository `swarmgate install` never wired)."""
    from swarmgate.agents.agent_definitions import definition_root, resolve

    r = resolve(repo, config, atype)
    return r is not None and r.source == "plugin" and os.path.isfile(
        os.path.join(definition_root(repo, r), "agent-common.md"))


def worktree_note(event: HookEvent) -> str:
    """What a worktree subagent is told at its start: where it works and what H01 wants at hand-back."""
    rel = os.path.relpath(event.root, event.repo)
    shown = rel if not rel.startswith("..") else event.root
    return (f"\n\nYou work in the git worktree {event.root} (isolation: worktree); paths in your write scope "
            f"are relative to it. At hand-back it must be clean (Claude Code then removes it) or your last "
            f"message must say `{shown} not deleted: <reason>` (e.g. that it holds your changes on its branch "
            f"for the main agent to merge).\n")


_COMMON = "# Every subagent\n\n- Heavy tests belong to the main agent.\n"
_IMPL = ("---\nname: implementer\ndescription: implements one task\ntools: Read, Edit, Bash\n"
         "rules: rules/implementing.md\n---\nYou implement.\n")
_RULE = "# Implementing\n\n- Write the test first.\n"
_FILES = {".claude/agent-common.md": _COMMON, ".claude/agents/implementer.md": _IMPL,
          ".claude/rules/implementing.md": _RULE}

GUARDS = (
    G.Guard(
        code="C02", summary="SubagentStart: agent-common.md and the rules the agent's type lists",
        events=("SubagentStart",), tools=(), check=check_c02, act=record_start, advisory=True, budget_ms=20000,
        doc=G.GuardDoc(
            why="A subagent should know exactly what its job needs and no more: the shared constraints "
                "(agent-common.md) and the rules its type lists. Claude Code cannot skip CLAUDE.md per "
                "agent, so the rules arrive here, at the start of every subagent.",
            example="SubagentStart {agent_type: implementer} -> agent-common.md + rules/implementing.md",
            instead="List the rules a type needs in the `rules:` key of .claude/agents/<type>.md.",
            exceptions="Nothing is added in a repository without .claude/agent-common.md and without a "
                       "definition of the type, unless the type is a plugin's whose folder has an "
                       "agent-common.md (swarmgate's plugin alone: its agent-common.md and rules come from "
                       "the plugin's folder). Also records the start in the session state."),
        breaks={"c02-no-rules": "subagents start without their rules"},
        cases=lambda: (
            G.Case("implementer-gets-rules", "SubagentStart", {"agent_id": "a1", "agent_type": "implementer"},
                   fires=True, breaks=("c02-no-rules",), files=_FILES),
            G.Case("unknown-type-gets-common", "SubagentStart", {"agent_id": "a2", "agent_type": "Explore"},
                   fires=True, breaks=("c02-no-rules",), files=_FILES),
            G.Case("not-installed", "SubagentStart", {"agent_id": "a3", "agent_type": "implementer"},
                   fires=False),
        )),
)
