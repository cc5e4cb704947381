"""The session-side checks and acts of X01, X02 and X03 (hooks/containment.py registers them): what
SessionStart, PostToolUse, PostToolUseFailure and SubagentStop do. Kept apart from containment.py,
which every PreToolUse shell call loads (X01's grants, X02's rewrite): that path never runs these.

- X01 at SessionStart: the session's shim directory and ``export PATH=<shims>:$PATH`` in
  ``$CLAUDE_ENV_FILE``.
- X02 after a command: an OOM kill inside the agent's own cap; at SubagentStop, its cgroup goes; at
  SessionStart, one line on whether subagents will be contained.
- X03 after every shell call and at SubagentStop: heavy programs seen in a subagent's cgroup.

Judges read only (/proc, cgroup files, the ledger, state files); every write is in an act.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.break_switch import broken as _broken
from swarmgate.hook_protocol import under_claude_code

# --- X01 at SessionStart: the shims on every command's PATH ----------------------------------

SOURCES = ("startup", "resume", "clear", "compact", "fork")


def _session_start(event) -> bool:
    return (event.payload.get("source") or "startup") in SOURCES


def check_shims(event, config):
    """What this session start will do about the shims (the act does it and says how it went)."""
    from swarmgate import lean_os as os

    if not _session_start(event) or _broken("x01-no-shims"):
        return None
    if not os.environ.get("CLAUDE_ENV_FILE"):
        return G.Finding("X01", "[X01] exec-time shims are NOT active in this session: the client gave this hook no "
                                "CLAUDE_ENV_FILE to put them on the commands' PATH (Claude Code 2.1.332 does); "
                                "heavy programs are judged only by reading the commands.", decision=G.CONTEXT)
    return G.Finding("X01", "[X01] exec-time shims active: heavy programs (cargo, make, npm, pytest, ...) are checked "
                            "where they start; a heavy run needs the main agent's "
                            "own line typed in the Bash tool: SWARMGATE_HEAVY=commit, a filled-in SWARMGATE_RUN_SCOPE, "
                            "run-with-memory-cap (B01's refusal prints the whole line to type).",
                     decision=G.CONTEXT)


def act_install_shims(event, config):
    from swarmgate import lean_os as os

    from swarmgate.hooks import exec_shims
    from swarmgate.hooks.heavy_equivalents import workload_patterns

    if not _session_start(event) or _broken("x01-no-shims"):
        return None
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    shim_dir = exec_shims.shim_dir_for(event.session_id)
    try:
        exec_shims.write_dir(shim_dir, config, repo=event.repo, session=event.session_id,
                             patterns=workload_patterns(config, event.repo))
    except Exception as e:  # noqa: BLE001 - said in one line, the session goes on
        return G.Finding("X01", f"[X01] exec-time shims are NOT active in this session: the shim directory {shim_dir} "
                                f"could not be written ({type(e).__name__}: {e}).", decision=G.CONTEXT)
    if env_file and not exec_shims.add_to_env_file(env_file, shim_dir):
        return G.Finding("X01", f"[X01] exec-time shims are NOT active in this session: {env_file} could not be "
                                f"written.", decision=G.CONTEXT)
    if env_file:
        try:
            exec_shims.record_env_file(shim_dir, env_file)
        except OSError:
            pass   # reading then refuses what it cannot read (nothing is left to the shims)
    return None   # the judged line stands


# --- X02: after a command, at hand-back, at session start ---------------------------------------

def _oom(event, config):
    def build():
        if not event.is_subagent or _broken("x02-no-oom-report"):
            return None
        from swarmgate.hosts import agent_cgroups
        return agent_cgroups.oom_view(config, event.session_id, event.agent_key)
    return event.derived("x02.oom", build)


def check_oom(event, config):
    v = _oom(event, config)
    if not v or v["news"] <= 0:
        return None
    from swarmgate.sizes import human

    return G.Finding(
        "X02", f"[X02] {v['news']} process(es) of this subagent were killed by the kernel for memory: they went past "
               f"YOUR AGENT'S OWN memory cap ({human(v['cap'])}), not the machine's; the machine and the other "
               f"agents go on. A command that ended with exit 137 (killed) died of this.",
        "split the work into smaller steps (one crate, one test file), or report back that it needs more "
        "memory: heavy runs belong to the main agent, under run-with-memory-cap.", decision=G.CONTEXT)


def act_oom_seen(event, config):
    v = _oom(event, config)
    if v and v["news"] > 0:
        from swarmgate.hosts import agent_cgroups
        agent_cgroups.mark_oom_seen(event.session_id, event.agent_key, v["kills"])
    return None


def check_release(event, config):
    """At hand-back: the agent's cgroup goes, with what it used (the act removes it)."""
    if not event.is_subagent or _broken("x02-keep-agent-cgroups"):
        return None
    from swarmgate.hosts import agent_cgroups
    from swarmgate.sizes import human

    v = agent_cgroups.oom_view(config, event.session_id, event.agent_key)
    if v is None:
        return None
    peak = f"peak {human(v['peak'])} of its {human(v['cap'])} cap" if v["peak"] else f"cap {human(v['cap'])}"
    return G.Finding("X02", f"[X02] subagent {event.agent_key}'s containment cgroup is removed at hand-back ({peak}, "
                            f"{v['kills']} OOM kill(s) inside it).", decision=G.CONTEXT)


def act_release(event, config):
    if not event.is_subagent or _broken("x02-keep-agent-cgroups"):
        return None
    from swarmgate.hosts import agent_cgroups
    from swarmgate.procinfo import session_process

    try:
        notes = agent_cgroups.remove(config, session_process(), event.agent_key)
    except agent_cgroups.ContainmentError:
        return None
    if not notes:
        return None   # the judged line stands
    return G.Finding("X02", f"[X02] subagent {event.agent_key} handed back; its containment cgroup was removed: "
                            + "; ".join(notes), decision=G.CONTEXT)


def check_containment_status(event, config):
    """One line at session start: whether subagents will be contained, and with what."""
    if not _session_start(event) or _broken("x02-no-containment"):
        return None
    from swarmgate.hosts import agent_cgroups
    from swarmgate.sizes import human

    if not under_claude_code():
        return G.Finding("X02", "[X02] subagents are NOT contained: this hook does not run under Claude Code "
                                "(CLAUDECODE=1 is not in its environment), and only Claude Code runs the rewritten "
                                "commands that join an agent's cgroup.", decision=G.CONTEXT)
    try:
        agent_cgroups.backend_for(config)
        cap, cpus = agent_cgroups.sizes(config)
    except (agent_cgroups.ContainmentError, ValueError) as e:
        return G.Finding("X02", f"[X02] subagents are NOT contained (no per-agent memory cap): {e}", decision=G.CONTEXT)
    return G.Finding("X02", f"[X02] subagent containment: each subagent's shell commands run in its own cgroup "
                            f"(memory cap {human(cap)}, {cpus:g} CPU), booked against the runner's total.",
                     decision=G.CONTEXT)


def act_probe(event, config):
    if not _session_start(event) or _broken("x02-no-containment") or not under_claude_code():
        return None
    from swarmgate.hosts import agent_cgroups

    line = agent_cgroups.probe(config)
    return G.Finding("X02", "[X02] " + line, decision=G.CONTEXT) if line else None


# --- X03: heavy programs seen in a subagent's cgroup ----------------------------------------------

def _sightings(event, config):
    def build():
        from swarmgate.hooks import agent_sightings as S
        from swarmgate.procinfo import session_process

        if _broken("x03-no-sightings"):
            return [], []
        agent = event.agent_key if event.name == "SubagentStop" else None
        live = S.unreported(S.scan(config, event.repo, session_process(), agent_id=agent), event.session_id)
        keys = {s.key for s in live}
        queued = [s for s in S.pending(event.session_id) if s.key not in keys]
        return live, queued
    return event.derived("x03.sightings", build)


def check_sightings(event, config):
    live, queued = _sightings(event, config)
    found = live + queued
    if not found:
        return None
    lines = "\n".join(f"- subagent {s.agent_id}: {s.describe()}" for s in found[:8])
    return G.Finding(
        "X03", f"[X03] RED: {len(found)} heavy program(s) ran inside a subagent's containment cgroup although nothing "
               f"authorized them (every other layer missed them):\n{lines}",
        "the main agent decides: stop it (`kill PID`) or let it finish knowingly; it is bounded by the agent's "
        "memory cap.", decision=G.CONTEXT)


def act_sightings(event, config):
    live, queued = _sightings(event, config)
    if live or queued:
        from swarmgate.hooks import agent_sightings as S
        S.report(live, event.session_id, source="X03")
    return None
