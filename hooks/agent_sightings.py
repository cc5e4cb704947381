"""What runs inside subagents' containment cgroups (issue 10, part 3): a heavy program seen there,
whatever started it, is a run that every other layer missed (a static binary, an absolute path
that bypassed the shims, ``pytest.main()`` in a Python process, a renamed copy...).

``scan(config, repo, owner)`` lists the processes of every agent cgroup under the runner's slice
(of one session process, or all) whose argv runs a heavy command (hooks/exec_argv.heavy_argv:
B01's matcher, what the program reads). Reads /proc and the cgroup files only; the caller
decides what to report (X03 in hooks/containment_lifecycle.py, swarm-watch, H02's red line through the
alerts it writes). Not a guard module.

Alerts of kind ``heavy-in-agent-cgroup`` carry session, agent, pid, start and the argv; a
process is reported once (its pid + start time is the key).
"""
from __future__ import annotations

from swarmgate import lean_os as os

ALERT_KIND = "heavy-in-agent-cgroup"
MAX_PROCS = 400


class Sighting:
    __slots__ = ("agent_id", "agent_name", "pid", "start", "argv", "pattern")

    def __init__(self, agent_id: str, agent_name: str, pid: int, start: int | None, argv: list, pattern: str) -> None:
        self.agent_id = agent_id
        self.agent_name = agent_name
        self.pid = pid
        self.start = start
        self.argv = argv
        self.pattern = pattern

    @property
    def key(self) -> str:
        return f"{self.pid}-{self.start or 0}"

    def describe(self) -> str:
        from shlex import join
        return f"pid {self.pid} `{join(self.argv)[:160]}` (heavy pattern `{self.pattern}`)"


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return "/"


def scan(config, repo: str, owner: dict | None = None, agent_id: str | None = None) -> list[Sighting]:
    """Heavy processes in the agent cgroups of ``owner`` (the session process; None: every
    session's), or of one agent. [] where there is no backend or no slice."""
    from swarmgate.hooks import exec_shims
    from swarmgate.hooks.command_patterns import basename
    from swarmgate.hooks.exec_argv import heavy_argv, pattern_programs
    from swarmgate.hosts import cgroups
    from swarmgate.hosts.agent_cgroups import cmdline
    from swarmgate.procinfo import start_time

    try:
        backend = cgroups.get(config["memory"]["backend"])
    except cgroups.CgroupError:
        return []
    slice_name = config["memory"]["slice"]
    quick = pattern_programs(config) | set(exec_shims.RUNNERS) | set(exec_shims.PYTHONS) | set(exec_shims.LAUNCHERS)
    out: list[Sighting] = []
    seen = 0
    for name in backend.agents(slice_name):
        who = cgroups.agent_owner(name)
        if who is None:
            continue
        if owner is not None and (who[0], who[1]) != (int(owner["pid"]), owner.get("start") or None):
            continue
        if agent_id is not None and who[2] != cgroups.agent_part(agent_id):
            continue
        for pid in backend.tree_pids(backend.run_path(slice_name, name)):
            seen += 1
            if seen > MAX_PROCS:
                return out
            argv = cmdline(pid)
            if not argv or exec_shims.BOOT in " ".join(argv[:3]):
                continue   # a shim's own check in progress: it refuses or authorizes by itself
            if not any(basename(w) in quick for w in argv[:6]):
                continue
            try:
                hit = heavy_argv(argv, config, _cwd(pid), repo, env={})
            except Exception:  # noqa: BLE001 - one unreadable process does not hide the others
                continue
            if hit:
                out.append(Sighting(who[2], name, pid, start_time(pid), argv, hit[0]))
    return out


def seen_path(session_id: str) -> str:
    from swarmgate import state_paths
    return os.path.join(str(state_paths.session_dir(session_id or "no-session")), "sightings.json")


def _load(session_id: str) -> dict:
    from swarmgate.statefile import read_json

    rec = read_json(seen_path(session_id), {}, report=lambda _m: None)
    rec.setdefault("reported", {})
    rec.setdefault("pending", [])
    if not isinstance(rec["reported"], dict) or not isinstance(rec["pending"], list):
        return {"reported": {}, "pending": []}
    return rec


def pending(session_id: str) -> list[Sighting]:
    """Sightings swarm-watch recorded (and alerted) that no hook has shown to an agent yet."""
    out = []
    for p in _load(session_id)["pending"]:
        if isinstance(p, dict) and isinstance(p.get("pid"), int) and isinstance(p.get("argv"), list):
            out.append(Sighting(str(p.get("agent_id") or "?"), str(p.get("agent_name") or ""), p["pid"],
                                p.get("start"), [str(x) for x in p["argv"]], str(p.get("pattern") or "")))
    return out


def unreported(sightings: list[Sighting], session_id: str) -> list[Sighting]:
    done = _load(session_id)["reported"]
    return [s for s in sightings if s.key not in done]


def report(sightings: list[Sighting], session_id: str, source: str, *, shown: bool = True) -> list[Sighting]:
    """Write an alert per sighting not alerted yet and remember it; ``shown=False`` (swarm-watch)
    also keeps it pending for the next hook to show. Returns the ones alerted now. Never raises
    for a state problem."""
    import time

    from swarmgate.alerts import write_alert
    from swarmgate.statefile import StateError, locked, write_json_atomic

    if not sightings and not shown:
        return []
    path = seen_path(session_id)
    fresh = list(sightings)
    try:
        from swarmgate.statefile import ensure_dir
        ensure_dir(os.path.dirname(path))
        with locked(path + ".lock", 5):
            rec = _load(session_id)
            fresh = [s for s in sightings if s.key not in rec["reported"]]
            for s in fresh:
                rec["reported"][s.key] = round(time.time(), 3)
            if shown:
                rec["pending"] = []
            else:
                rec["pending"] += [{"agent_id": s.agent_id, "agent_name": s.agent_name, "pid": s.pid,
                                    "start": s.start, "argv": s.argv[:64], "pattern": s.pattern} for s in fresh]
            write_json_atomic(path, rec, durable=False)
    except (OSError, StateError):
        pass
    for s in fresh:
        write_alert(ALERT_KIND, f"RED: a heavy program runs inside subagent {s.agent_id}'s containment cgroup "
                                f"although nothing authorized it: {s.describe()}. It is bounded by the agent's "
                                f"memory cap; stop it (kill {s.pid}) or let it finish knowingly.",
                    source=source, session=session_id or None, agent=s.agent_id, pid=s.pid, start=s.start,
                    command=" ".join(s.argv)[:300], pattern=s.pattern)
    return fresh


def reported_for(session_id: str, agent_id: str) -> list[dict]:
    """The sightings alerts written for one subagent of a session (H02 reads them)."""
    from swarmgate.alerts import all_alerts

    return [a for a in all_alerts() if a.get("kind") == ALERT_KIND and a.get("agent") == agent_id
            and (not session_id or a.get("session") in (None, "", session_id))]
