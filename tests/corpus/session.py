"""A session whose exec-time shims are on the commands' PATH, as X01's SessionStart act leaves it
under Claude Code (the shim directory, the env file holding its PATH line, the record of which
env file that is): what `[bash] unverifiable = "exec"` needs to leave a command to the shims."""
from __future__ import annotations

from swarmgate.hook_engine import evaluate
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks import exec_shims, registry
from swarmgate.hooks.heavy_equivalents import workload_patterns

SHIMS_SESSION = "corpus-shims"   # as in a Claude Code session: the shims on every Bash command's PATH
NO_SHIMS_SESSION = "corpus"      # no env file: another client, X01 off, or it could not write


def with_shims(config, repo: str, env_file: str, session: str = SHIMS_SESSION) -> str:
    """Write the session's shims and env file (under $SWARMGATE_STATE_DIR); the shim directory."""
    shim_dir = exec_shims.shim_dir_for(session)
    exec_shims.write_dir(shim_dir, config, repo=repo, session=session, patterns=workload_patterns(config, repo))
    assert exec_shims.add_to_env_file(env_file, shim_dir)
    exec_shims.record_env_file(shim_dir, env_file)
    return shim_dir


def payload(repo, command: str, subagent: bool, session: str = SHIMS_SESSION) -> dict:
    p = {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
         "tool_name": "Bash", "tool_input": {"command": command}}
    if subagent:
        p.update(agent_id="corpus-agent", agent_type="implementer")
    return p


def refusal(repo, config, command: str, session: str = SHIMS_SESSION) -> tuple[str, object] | None:
    """("refuse:CODE[:subagent]", finding) for the first refusal (main agent, then subagent), or None."""
    guards = registry.refusing_guards("PreToolUse", "Bash")
    for sub in (False, True):
        event = HookEvent("PreToolUse", payload(repo, command, sub, session), str(repo))
        found = [f for f in evaluate(event, config, guards) if f.decision in ("deny", "ask")]
        if found:
            return f"refuse:{found[0].code}" + (":subagent" if sub else ""), found[0]
    return None

