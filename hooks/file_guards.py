"""G01 for the file tools: no agent writes what guards it.

Write/Edit/MultiEdit/NotebookEdit to .claude/settings*.json,
.claude/swarmgate.toml, the hooks, swarmgate's state directory, the
repository's .swarmgate/ log, or the swarmgate that runs the hooks (its
virtualenv, whose entry point settings.json calls, and, from any repository
but swarmgate's own checkout, its code) are refused. The shell side of G01 lives with
the Bash guards.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks.agent_worktree import CASE_FILES, CASE_WORKTREE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent



def check_g01_files(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.break_switch import broken
    from swarmgate.hooks.protected_paths import protected_reason
    from swarmgate.state_paths import state_dir_text

    if broken("g01-allow-file-tools"):
        return None
    out = []
    for path in event.file_paths:
        why = protected_reason(path, cwd=event.cwd, repo=event.repo, root=event.root, state_dir=state_dir_text())
        if why:
            out.append(G.Finding(
                "G01",
                f"{event.client_tool or event.tool_name} to {path} refused: {why}. No agent may change what guards it.",
                "leave this file alone; if the rule itself is wrong, tell the person, who edits it by hand.",
            ))
    return out


GUARDS = (
    G.Guard(
        code="G01",
        summary="no agent writes swarmgate's config, the settings, the hooks or the state directory",
        events=("PreToolUse",),
        tools=G.FILE_TOOLS,
        check=check_g01_files,
        doc=G.GuardDoc(
            why="An agent that cannot finish its task under a rule finds the rule's file the shortest way "
                "out: switching a guard off in .claude/settings.json or swarmgate.toml, or editing the "
                "ledger that admits heavy runs. A guard that its subject can edit is no guard.",
            example='Edit {"file_path": ".claude/settings.json", ...} from any agent',
            instead="Ask the person to change the rule; they edit these files by hand.",
            exceptions="Reading these files is allowed. People edit them outside Claude Code.",
        ),
        breaks={"g01-allow-file-tools": "file tools may write protected paths"},
        cases=lambda: (
            G.Case("settings-write", "PreToolUse",
                   {"tool_name": "Write", "tool_input": {"file_path": ".claude/settings.json", "content": "{}"}},
                   fires=True, breaks=("g01-allow-file-tools",)),
            G.Case("config-edit-by-subagent", "PreToolUse",
                   {"tool_name": "Edit", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"file_path": ".claude/swarmgate.toml", "old_string": "a", "new_string": "b"}},
                   fires=True, breaks=("g01-allow-file-tools",)),
            G.Case("decision-log", "PreToolUse",
                   {"tool_name": "MultiEdit", "tool_input": {"file_path": ".swarmgate/log/decisions.jsonl",
                                                               "edits": []}},
                   fires=True, breaks=("g01-allow-file-tools",)),
            G.Case("worktree-agent-edits-its-settings-copy", "PreToolUse",
                   {"tool_name": "Edit", "agent_id": "a1", "agent_type": "implementer", "cwd": CASE_WORKTREE,
                    "tool_input": {"file_path": ".claude/settings.json", "old_string": "a", "new_string": "b"}},
                   fires=True, breaks=("g01-allow-file-tools",), files=CASE_FILES),
            G.Case("source-file", "PreToolUse",
                   {"tool_name": "Write", "tool_input": {"file_path": "src/lib.rs", "content": "fn main(){}"}},
                   fires=False),
            G.Case("agent-definition", "PreToolUse",
                   {"tool_name": "Edit", "tool_input": {"file_path": ".claude/agents/clerk.md",
                                                        "old_string": "a", "new_string": "b"}},
                   fires=False),
        ),
    ),
)
