"""X01's session side, X02 per-agent containment and X03 heavy programs seen in a subagent's
cgroup (issue 10; docs/containment.md, docs/exec-shims.md, docs/threat-model.md).

- **X01 at SessionStart** (act): writes the session's shim directory and appends
  ``export PATH=<shims>:$PATH`` to the file named in ``$CLAUDE_ENV_FILE``, which Claude Code
  2.1.332 runs ahead of every Bash command of the session (FACTS.md). Where it cannot (no
  ``CLAUDE_ENV_FILE``: another client), it says so in one line.
- **X02** puts every subagent Bash and Monitor command into the agent's own cgroup
  (hosts/agent_cgroups.py): the judge predicts the rewrite, the act makes and books the
  cgroup and answers with ``updatedInput`` = a first line that joins it, then the original
  command unchanged. After the command (PostToolUse, PostToolUseFailure) the agent is told
  when the kernel killed one of its processes for memory inside its own cap. At SubagentStop
  the cgroup goes (what is left in it is stopped and named). At SessionStart a cgroup that
  cannot be made here is said in one line.
- **X03** looks, after every shell call and at SubagentStop, for a heavy program running in
  any subagent cgroup of the session (hooks/agent_sightings.py): a red line now, an alert
  for the main agent (C04 brings it), and a red line in H02's audit of that subagent.

Judges read only (/proc, cgroup files, the ledger, state files); every write is in an act.

Here: the guards and the PreToolUse shell path (X01's grants, X02's rewrite), which every Bash and
Monitor call loads. The checks and acts of the other events are hooks/containment_lifecycle.py,
loaded when one of them is called.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hook_protocol import under_claude_code
from swarmgate.hooks import guard_gates

SHELL = G.SHELL_TOOLS


def _broken(name: str) -> bool:
    from swarmgate.break_switch import broken
    return broken(name)


def _owner() -> dict:
    from swarmgate.procinfo import session_process
    return session_process()


# --- X01 at PreToolUse: the main agent's single-use grants -----------------------------------

def _grant_ttl(event) -> float:
    from swarmgate import heavy_grants

    ti = event.tool_input
    timeout = ti.get("timeout") if isinstance(ti.get("timeout"), (int, float)) else None
    return heavy_grants.MAX_TTL_S if ti.get("run_in_background") else (timeout or 120_000) / 1000.0 + 60.0


def _grants(event, config) -> list:
    if event.is_subagent or _broken("x01-no-grants"):
        return []
    return guard_gates.granted(event, config)


def check_grants(event, config):
    """The main agent's prefixed, capped heavy command gets a single-use authorization for the exact
    command each runner will run (recorded by the act, if the call goes ahead)."""
    if not guard_gates.containment(event, config):   # the gate the engine asks before loading this module
        return None
    found = _grants(event, config)
    if not found:
        return None
    from shlex import join
    runs = "; ".join(f"`{join(argv)[:120]}`" for argv, _ in found[:4])
    return G.Finding("X01", f"[X01] authorized once, for the next {_grant_ttl(event):.0f} s: {runs} may start heavy "
                            f"programs inside its capped run (nowhere else).", decision=G.CONTEXT)


def act_record_grants(event, config):
    if not guard_gates.containment(event, config):   # the gate the engine asks before loading this module
        return None
    found = _grants(event, config)
    if found:
        from swarmgate import heavy_grants
        errors: list[str] = []
        for argv, pat in found:
            heavy_grants.record([argv], session=event.session_id, agent=event.agent_id, source="X01",
                                ttl_s=_grant_ttl(event), pattern=pat, errors=errors)
        if errors:   # the run would start and its heavy programs be refused (249): refuse it now, saying why
            return [G.Finding("X01", f"[X01] the single-use authorization of this heavy run could not be recorded "
                                     f"({errors[0]}), so the programs it starts would be refused (249)",
                              way_out="make room on (or repair) the filesystem of that path, then run the same "
                                      "command again", decision=G.DENY)]
    return None


# --- X02: containment ------------------------------------------------------------------------------

def _rewrite(event, paths: list) -> dict:
    from swarmgate.hosts.agent_cgroups import contained_command

    ti = dict(event.tool_input)
    ti["command"] = contained_command(str(event.shell_command), paths)
    return ti


def _wants_containment(event) -> bool:
    cmd = event.shell_command
    if not (event.is_subagent and isinstance(cmd, str) and cmd.strip()) or not under_claude_code():
        return False   # the main agent's calls never import the cgroup modules (the hook's hot path)
    from swarmgate.hosts.agent_cgroups import is_contained

    return not is_contained(cmd) and not _broken("x02-no-containment")


def check_contain(event, config):
    """The rewrite this call will get (the act makes the cgroup and answers with its real paths)."""
    if not guard_gates.containment(event, config):   # the gate the engine asks before loading this module
        return None
    if not _wants_containment(event):
        return None
    from swarmgate.hosts import agent_cgroups, cgroups

    try:
        backend = agent_cgroups.backend_for(config)
    except agent_cgroups.ContainmentError as e:
        return G.Finding("X02", f"[X02] this subagent command runs WITHOUT a containment cgroup: {e}.",
                         decision=G.CONTEXT)
    owner = _owner()
    name = cgroups.agent_name(int(owner["pid"]), owner.get("start"), event.agent_key)
    return G.Finding("X02", "", decision=G.REWRITE,
                     updated_input=_rewrite(event, backend.agent_paths(config["memory"]["slice"], name)))


def act_contain(event, config):
    if not guard_gates.containment(event, config):   # the gate the engine asks before loading this module
        return None
    if not _wants_containment(event):
        return None
    from swarmgate.hosts import agent_cgroups

    try:
        made = agent_cgroups.ensure(config, _owner(), event.agent_key, event.agent_type or "", event.session_id)
    except agent_cgroups.ContainmentError as e:
        return G.Finding("X02", f"[X02] this subagent command runs WITHOUT a containment cgroup (no per-agent memory "
                                f"cap): {e}.", decision=G.CONTEXT)
    return G.Finding("X02", "", decision=G.REWRITE, updated_input=_rewrite(event, made.paths))


# --- the other events' checks and acts: hooks/containment_lifecycle.py ---------------------------

def _later(name: str):
    """A check or an act of SessionStart, PostToolUse or SubagentStop, loaded from
    hooks/containment_lifecycle.py when it is called: a PreToolUse shell call never loads it."""
    def call(event, config):
        from swarmgate.hooks import containment_lifecycle
        return getattr(containment_lifecycle, name)(event, config)
    call.__name__ = call.__qualname__ = name
    return call


check_shims, act_install_shims = _later("check_shims"), _later("act_install_shims")
check_oom, act_oom_seen = _later("check_oom"), _later("act_oom_seen")
check_release, act_release = _later("check_release"), _later("act_release")
check_containment_status, act_probe = _later("check_containment_status"), _later("act_probe")
check_sightings, act_sightings = _later("check_sightings"), _later("act_sightings")


# --- registration ------------------------------------------------------------------------------------

def _sub(command: str, tool: str = "Bash") -> dict:
    return {"tool_name": tool, "agent_id": "a1", "agent_type": "implementer",
            "tool_input": {"command": command, "description": "d"}}


def _main(command: str) -> dict:
    return {"tool_name": "Bash", "tool_input": {"command": command, "description": "d"}}


_X01_DOC = G.GuardDoc(
    why="See the Exec side of X01: the shims must be on every command's PATH, which only the session's "
        "environment file can do for every later Bash command, the main agent's and subagents' alike; and the "
        "main agent's allowed heavy command (prefix + runner) needs the single-use authorization its runner "
        "consumes, recorded when the call goes ahead.",
    example="SessionStart: `export PATH=/var/tmp/swarmgate/sessions/<id>/shims:\"$PATH\"` is appended to "
            "$CLAUDE_ENV_FILE; PreToolUse of the main agent's `SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; "
            "target=workspace; range=all crates; reason=commit gate for this batch' run-with-memory-cap auto -- cargo "
            "test --workspace` records one grant for `cargo test --workspace`.",
    instead="Nothing to do.",
    exceptions="Clients that give SessionStart no CLAUDE_ENV_FILE get one line saying the shims are off.")

_X02_DOC = G.GuardDoc(
    why="A heavy run that every check missed must not take the machine: each subagent's shell commands run in "
        "the agent's own cgroup ([agents] memory_cap, cpu_max), booked in the runner's ledger against the same "
        "total as capped runs. Past its cap the kernel kills inside that cgroup only and the agent is told so; "
        "past its CPU limit it is throttled. The machine, the main agent and the other agents go on.",
    example="a subagent's `python3 build_everything.py` allocating 40 GiB is OOM-killed at its agent's cap "
            "(PostToolUse tells it so); another subagent's tests keep running.",
    instead="Nothing to do for the agent. Size [agents] memory_cap / cpu_max in .claude/swarmgate.toml.",
    exceptions="The rewrite is a first line that joins the cgroup, then the original command unchanged "
               "(measured with 2.1.332: `cd` still persists and run_in_background still works). Where an agent "
               "cgroup cannot be made (no permission, no controller) SessionStart and `swarmgate doctor` say so "
               "and commands run uncontained with a note. The main agent is never contained: its heavy runs go "
               "through run-with-memory-cap.")

_X03_DOC = G.GuardDoc(
    why="The last layer leaves a trace of what the others did not stop: a heavy program running inside a "
        "subagent's cgroup, whatever started it (an absolute path, a static binary, pytest.main() in Python, "
        "a renamed copy), is reported at once, written as an alert for the main agent and shown again as a red "
        "line in H02's audit of that subagent.",
    example="a subagent runs `nohup /opt/rust/bin/cargo test --workspace &`: the next shell call of any agent "
            "reports `pid 4242 cargo test --workspace` in subagent a7's cgroup.",
    instead="Stop the process, or let it finish knowingly; then find which layer missed it.",
    exceptions="It sees what is running when a shell call ends (and swarm-watch at each tick); a run that "
               "started and ended between two looks is seen only through the other layers. Each process is "
               "reported once.")

_SCOPE = ("SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; "
          "reason=commit gate for this batch'")


def _ledger(agent_id: str = "a1", **extra) -> dict:
    from swarmgate import fast_json as json   # built at import: the json package costs the hook ~2 ms
    b = {"label": f"agent implementer {agent_id}", "kind": "agent", "basis": "agent", "cap": 1 << 30,
         "booked": 1 << 30, "pid": 1, "start": 1, "cgroup": "/nonexistent/agent-1-1-a1", "session": "selftest-session",
         "agent_id": agent_id, "agent_type": "implementer", "oom_seen": 0, **extra}
    return {".selftest-state/runner/ledger.json": json.dumps({"version": 1, "waiters": {},
                                                              "bookings": {f"agent:agent-1-1-{agent_id}": b}})}


def _pending(agent_id: str = "a1") -> dict:
    from swarmgate import fast_json as json
    rec = {"reported": {}, "pending": [{"agent_id": agent_id, "agent_name": "agent-1-1-a1", "pid": 4242, "start": 7,
                                        "argv": ["cargo", "test", "--workspace"],
                                        "pattern": "cargo test --workspace"}]}
    return {".selftest-state/sessions/selftest-session/sightings.json": json.dumps(rec)}


GUARDS = (
    G.Guard(
        code="X01", summary="a heavy program refused where it starts (exec-time shim): no authorization for it",
        events=("SessionStart",), tools=(), check=check_shims, act=act_install_shims, advisory=True, doc=_X01_DOC,
        breaks={"x01-no-shims": "sessions start without the shims on PATH"},
        cases=lambda: (
            G.Case("startup", "SessionStart", {"source": "startup"}, fires=True, breaks=("x01-no-shims",)),
            G.Case("unknown-source", "SessionStart", {"source": "teleport"}, fires=False))),
    G.Guard(
        code="X01", summary="a heavy program refused where it starts (exec-time shim): no authorization for it",
        events=("PreToolUse",), tools=SHELL, check=check_grants, act=act_record_grants, act_refuses=True,
        advisory=True, needs=("bash",), doc=_X01_DOC,
        breaks={"x01-no-grants": "the main agent's allowed heavy runs get no authorization"},
        cases=lambda: (
            G.Case("main-capped-heavy-run", "PreToolUse",
                   _main(f"SWARMGATE_HEAVY=commit {_SCOPE} run-with-memory-cap 8G -- cargo test --workspace"),
                   fires=True, breaks=("x01-no-grants",)),
            G.Case("main-unprefixed", "PreToolUse", _main("run-with-memory-cap 8G -- cargo test --workspace"),
                   fires=False),
            G.Case("subagent-prefixed", "PreToolUse",
                   _sub("SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo test --workspace"), fires=False),
            G.Case("light-command", "PreToolUse", _main("cargo build"), fires=False))),
    G.Guard(
        code="X02", summary="a subagent's shell commands run inside its own memory-capped, CPU-limited cgroup",
        events=("PreToolUse",), tools=SHELL, check=check_contain, act=act_contain, doc=_X02_DOC, needs=("bash",),
        advisory=True,
        breaks={"x02-no-containment": "subagent commands run outside any agent cgroup"},
        cases=lambda: (
            G.Case("subagent-command-contained", "PreToolUse", _sub("cargo build"), fires=True,
                   breaks=("x02-no-containment",)),
            G.Case("subagent-monitor-contained", "PreToolUse", _sub("tail -f build.log", "Monitor"), fires=True,
                   breaks=("x02-no-containment",)),
            G.Case("main-agent-not-contained", "PreToolUse", _main("cargo build"), fires=False),
        )),
    G.Guard(
        code="X02", summary="a subagent's shell commands run inside its own memory-capped, CPU-limited cgroup",
        events=("PostToolUse", "PostToolUseFailure"), tools=SHELL, check=check_oom, act=act_oom_seen,
        advisory=True, doc=_X02_DOC,
        breaks={"x02-no-oom-report": "an agent is not told that its own cap killed its command"},
        cases=lambda: (
            G.Case("killed-at-its-own-cap", "PostToolUseFailure",
                   {**_sub("python3 big.py"), "error": "Exit code 137"}, fires=True,
                   breaks=("x02-no-oom-report",), files=_ledger(oom_kills=1)),
            G.Case("kill-already-told", "PostToolUse", {**_sub("ls"), "tool_response": {}}, fires=False,
                   files=_ledger(oom_kills=1, oom_seen=1)),
            G.Case("nothing-killed", "PostToolUse", {**_sub("cargo build"), "tool_response": {}}, fires=False,
                   files=_ledger()))),
    G.Guard(
        code="X02", summary="a subagent's shell commands run inside its own memory-capped, CPU-limited cgroup",
        events=("SubagentStop",), tools=(), check=check_release, act=act_release, advisory=True,
        doc=_X02_DOC, breaks={"x02-keep-agent-cgroups": "agent cgroups stay after the agent handed back"},
        cases=lambda: (
            G.Case("hand-back", "SubagentStop", {"agent_id": "a1", "agent_type": "implementer"}, fires=True,
                   breaks=("x02-keep-agent-cgroups",), files=_ledger()),
            G.Case("never-ran-a-command", "SubagentStop", {"agent_id": "a1", "agent_type": "implementer"},
                   fires=False))),
    G.Guard(
        code="X02", summary="a subagent's shell commands run inside its own memory-capped, CPU-limited cgroup",
        events=("SessionStart",), tools=(), check=check_containment_status, act=act_probe, advisory=True,
        doc=_X02_DOC, breaks={"x02-no-containment": "subagent commands run outside any agent cgroup"},
        cases=lambda: (
            G.Case("startup", "SessionStart", {"source": "startup"}, fires=True, breaks=("x02-no-containment",),
                   config='[memory]\ntotal = "2G"\n'),
            G.Case("unknown-source", "SessionStart", {"source": "teleport"}, fires=False))),
    G.Guard(
        code="X03", summary="a heavy program seen running inside a subagent's cgroup: alert and H02 red line",
        events=("PostToolUse", "PostToolUseFailure", "SubagentStop"), tools=(), check=check_sightings,
        act=act_sightings, advisory=True, doc=_X03_DOC,
        breaks={"x03-no-sightings": "nobody looks for heavy programs in subagents' cgroups"},
        cases=lambda: (
            G.Case("seen-by-swarm-watch", "PostToolUse", {**_sub("ls"), "tool_response": {}}, fires=True,
                   breaks=("x03-no-sightings",), files=_pending()),
            G.Case("nothing-running", "PostToolUse", {**_sub("ls"), "tool_response": {}}, fires=False))),
)
