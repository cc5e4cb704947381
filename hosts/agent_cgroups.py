"""Per-agent containment (issue 10, docs/containment.md): every subagent's shell commands run
inside its own cgroup with a memory cap and a CPU limit ([agents] memory_cap, cpu_max).

- The cgroup sits under the runner's slice, so the slice's limit (the runner's total) bounds
  agents and capped runs together, and it is booked in the runner's ledger like a run (basis
  "agent", booked = its cap): admission of a capped run counts what the agents may still grow to.
- Its name carries the session process (pid + start time) and the agent's id
  (``cgroups.agent_name``): ``ledger.reconcile`` removes the agent cgroups of a dead session,
  whoever reconciles first (a run, `swarmgate status`, the next hook).
- A command joins it by writing its shell's pid into each of its ``cgroup.procs`` before anything
  else runs: ``join_line()`` is that first line, which the PreToolUse hook puts in front of the
  command (``updatedInput``). Everything the command starts is inside from then on.
- Removed at SubagentStop (what is left in it is killed: a subagent's work does not outlive its
  hand-back) or when its session is found dead.

The sizes: ``memory_cap = "auto"`` is the runner's total / ([dispatch] max_concurrent + 1), so the
dispatch cap's number of agents fits under the total with one share left for the main agent's
capped runs; ``cpu_max = "auto"`` is the machine's CPUs / max_concurrent, at least 0.5.

Backend-neutral: everything goes through hosts/cgroups.py (v1 here; v2 where it is live).
"""
from __future__ import annotations

import os
import shlex
import time

from swarmgate.hosts import cgroups, ledger
from swarmgate.hosts.runner_cli import runner_total
from swarmgate.procinfo import cmdline
from swarmgate.statefile import StateError

BASIS = "agent"
BOOKING_PREFIX = "agent:"
MIN_CAP = 64 << 20


class ContainmentError(Exception):
    """The agent cgroup cannot be made here; the message is one line saying why."""


def sizes(config, total: int | None = None, cpus_here: int | None = None) -> tuple[int, float]:
    """(memory cap in bytes, CPUs) of one agent, with "auto" resolved (docstring above)."""
    ag = config["agents"]
    n = int(config["dispatch"]["max_concurrent"])
    cap = ag["memory_cap"]
    if cap == "auto":
        if total is None:
            total = runner_total(config)
        cap = max(MIN_CAP, int(total) // (n + 1))
    cpus = ag["cpu_max"]
    if cpus == "auto":
        here = cpus_here or os.cpu_count() or 1
        cpus = max(0.5, round(here / n, 2))
    return int(cap), float(cpus)


def booking_key(name: str) -> str:
    return BOOKING_PREFIX + name


def backend_for(config):
    try:
        return cgroups.get(config["memory"]["backend"])
    except cgroups.CgroupError as e:
        raise ContainmentError(str(e)) from None


def ensure(config, owner: dict, agent_id: str, agent_type: str, session_id: str,
           backend=None, now: float | None = None):
    """The agent's cgroup (cgroups.AgentCgroup), made and booked if it is not there yet.

    ``owner`` is the session process {"pid", "start"}. Cheap when it exists already (one stat
    and one ledger read under the lock is avoided: the booking is checked only on creation).
    ContainmentError (one line) when it cannot be made."""
    backend = backend or backend_for(config)
    slice_name = config["memory"]["slice"]
    name = cgroups.agent_name(int(owner["pid"]), owner.get("start"), agent_id)
    paths = [p for p in backend.agent_paths(slice_name, name) if os.path.isdir(p)]
    if paths and paths[0] == backend.run_path(slice_name, name):
        return cgroups.AgentCgroup(name, paths, True, "")  # made by an earlier call (limits set then)
    try:
        total = runner_total(config)
        cap, cpus = sizes(config, total)
    except ValueError as e:
        raise ContainmentError(str(e)) from None
    try:
        with ledger.lock(timeout=10):
            data = ledger.load()
            backend.ensure_slice(slice_name, total)
            made = backend.create_agent(slice_name, name, cap, cpus)
            data["bookings"][booking_key(name)] = {
                "label": f"agent {agent_type or '?'} {agent_id}", "kind": BASIS, "basis": BASIS,
                "cap": cap, "booked": cap, "cpus": cpus if made.cpu_limited else None,
                "pid": int(owner["pid"]), "start": owner.get("start"), "cgroup": made.memory_path,
                "paths": made.paths, "since": round(now or time.time(), 3), "command": "",
                "session": session_id, "agent_id": agent_id, "agent_type": agent_type, "oom_seen": 0}
            ledger.save(data)
    except cgroups.CgroupError as e:
        raise ContainmentError(str(e)) from None
    except StateError as e:
        raise ContainmentError(f"the runner's ledger: {e}") from None
    return made


def remove(config, owner: dict, agent_id: str, backend=None) -> list[str]:
    """Kill what is left in the agent's cgroup, remove it, drop its booking. Returns notes
    (what was killed, what could not be removed); [] when there was nothing."""
    backend = backend or backend_for(config)
    slice_name = config["memory"]["slice"]
    name = cgroups.agent_name(int(owner["pid"]), owner.get("start"), agent_id)
    notes = []
    paths = [p for p in backend.agent_paths(slice_name, name) if os.path.isdir(p)]
    if paths:
        left = described_pids(backend.tree_pids(paths[0]))
        if left:
            notes.append(f"stopped {len(left)} process(es) the agent left running: " + "; ".join(left[:5]))
        if not backend.remove_agent(slice_name, name):
            notes.append(f"could not remove the agent cgroup {name}; the next reconcile removes it")
    try:
        with ledger.lock(timeout=10):
            data = ledger.load()
            if data["bookings"].pop(booking_key(name), None) is not None:
                ledger.save(data)
    except StateError as e:
        notes.append(f"could not drop its booking ({e}); the next reconcile drops it")
    return notes


def described_pids(pids: list[int], limit: int = 5) -> list[str]:
    out = []
    for pid in pids[:limit]:
        words = [w.split("\n", 1)[1] if is_contained(w) else w for w in cmdline(pid)]
        out.append(f"pid {pid} `{' '.join(words)[:80]}`")
    return out


def join_line(paths: list[str]) -> str:
    """The first line of a contained command: its shell joins the agent cgroup (every
    hierarchy) or the command does not run (exit 251: never uncontained, never silently).

    No quotes inside its braces: Claude Code 2.1.332 refuses every command of a worktree-isolated
    subagent (isolation "worktree") holding a brace group with a quoted word ("too complex to
    verify that it stays inside the worktree", measured: tests/e2e/worktree_e2e_test.py)."""
    writes = " && ".join(f"echo $$ >{shlex.quote(os.path.join(p, 'cgroup.procs'))}" for p in paths)
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(paths[0]))
    return (f"{{ {writes}; }} 2>/dev/null || {{ echo swarmgate: could not join the agent cgroup {name}, "
            f"the command was not run, exit 251. Run it again: the next call makes the cgroup anew. >&2; "
            f"exit 251; }}")


def contained_command(command: str, paths: list[str]) -> str:
    """The command with the join line in front. The original text stays intact after it, on its
    own line, so its meaning does not change (the client evaluates the whole text as one script)."""
    return join_line(paths) + "\n" + command


def is_contained(command: str) -> bool:
    """Already rewritten (a second hook round, a replayed input): do not join twice."""
    return command.startswith("{ echo $$ >") and "cgroup.procs" in command.split("\n", 1)[0]


def booking_of(data: dict, session_id: str, agent_id: str) -> tuple[str, dict] | None:
    """(key, booking) of a subagent's cgroup in the ledger ``data``, found by session and agent."""
    for key, b in data["bookings"].items():
        if b.get("kind") == BASIS and b.get("agent_id") == agent_id and b.get("session") == session_id:
            return key, b
    return None


def oom_view(config, session_id: str, agent_id: str, backend=None) -> dict | None:
    """What the kernel did to a subagent's cgroup, read only: {"news" (OOM kills not reported yet),
    "kills", "cap", "peak", "use", "key"}; None when the agent has no booked cgroup. A booking may
    carry the kills it last counted ("oom_kills"): a cgroup already gone keeps its count."""
    found = booking_of(ledger.load(report=lambda _m: None), session_id, agent_id)
    if found is None:
        return None
    key, b = found
    kills, peak, use = int(b.get("oom_kills") or 0), b.get("peak"), None
    path = b.get("cgroup")
    if path and os.path.isdir(path):
        try:
            backend = backend or backend_for(config)
            c = backend.counters(path)
            kills, peak, use = max(kills, int(c.oom_kill or 0)), c.peak, c.usage
        except (ContainmentError, OSError):
            pass
    return {"news": max(kills - int(b.get("oom_seen") or 0), 0), "kills": kills, "cap": int(b.get("cap") or 0),
            "peak": peak, "use": use, "key": key}


def mark_oom_seen(session_id: str, agent_id: str, kills: int) -> None:
    try:
        with ledger.lock(timeout=5):
            data = ledger.load()
            found = booking_of(data, session_id, agent_id)
            if found is not None and kills > int(found[1].get("oom_seen") or 0):
                found[1]["oom_seen"] = kills
                found[1]["oom_kills"] = max(kills, int(found[1].get("oom_kills") or 0))
                ledger.save(data)
    except StateError:
        pass


def probe(config) -> str | None:
    """None when agent cgroups can be made here, else one line saying why not (SessionStart,
    `swarmgate doctor`). Makes and removes a throw-away agent cgroup under the slice; a slice that
    was not there before is removed again (only while empty: never a run someone just started)."""
    try:
        backend = backend_for(config)
    except ContainmentError as e:
        return f"subagents are NOT contained (no per-agent memory cap): {e}"
    slice_name = config["memory"]["slice"]
    name = cgroups.agent_name(os.getpid(), 0, "probe")
    made_slice = [p for p in (backend.slice_path(slice_name),
                              *[os.path.dirname(x) for x in backend.agent_paths(slice_name, name)[1:]])
                  if not os.path.isdir(p)]
    try:
        total = runner_total(config)
        cap, cpus = sizes(config, total)
        backend.ensure_slice(slice_name, total)
        made = backend.create_agent(slice_name, name, cap, cpus)
    except (cgroups.CgroupError, ValueError) as e:
        return f"subagents are NOT contained (no per-agent memory cap): {e}"
    finally:
        backend.remove_agent(slice_name, name)
        for p in made_slice:
            try:
                os.rmdir(p)
            except OSError:
                pass
    if made.note:
        return f"subagents are contained (memory cap) but {made.note}"
    return None
