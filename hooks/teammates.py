"""Which session is a teammate of an agent team (D07 counts it, hooks/repo_sessions.py; A02 judges it).

A teammate is a Claude Code session of its own, started by the team lead with `--agent-name`,
`--team-name`, `--parent-session-id`: told from the session process's command line, or from the
payload (`teammate_name`). Its calls are judged as a subagent of the type ``[teams] agent_type``.
The hook engine asks on every call of a main agent, so this module stays small: the index of the
repository's sessions (hooks/repo_sessions.py) loads only where it is read or written.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hook_protocol import HookEvent


def _flag(argv: list[str], name: str) -> str:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return ""


def teammate_of(event: HookEvent) -> dict | None:
    """{"name", "parent", "team"} when the session making this call is a teammate of an agent team,
    else None (memoised on the event)."""
    def build() -> dict | None:
        p = event.payload
        from swarmgate.procinfo import cmdline, session_process
        argv = cmdline(int(session_process().get("pid") or 0))
        name = _flag(argv, "--agent-name")
        parent = _flag(argv, "--parent-session-id")
        if not (name or parent):
            # an in-process teammate's own calls (TaskCreated/TeammateIdle carry the name of the one they
            # concern, the lead's session makes them: not a teammate call)
            if event.name in ("TaskCreated", "TaskCompleted", "TeammateIdle"):
                return None
            tn = p.get("teammate_name")
            name = tn if isinstance(tn, str) else ""
        if not (name or parent):
            return None
        team = _flag(argv, "--team-name") or (p.get("team_name") if isinstance(p.get("team_name"), str) else "")
        return {"name": name or event.session_id, "parent": parent, "team": team}
    return event.derived("teammate", build)
