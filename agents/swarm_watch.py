"""swarm-watch: one watchdog per session (SPEC §6.3).

    swarm-watch --session ID [--cwd DIR] [--pid PID] [--interval SEC] [--once]
    swarm-watch ack KEY|all --session ID
    swarm-watch status --session ID

Reads the session's and its subagents' transcripts, the command history and
the processes of the session it knows of, and reports into the alert records
(which SessionStart and the next hook surface):
- a tool call running longer than [watch] tool_call_minutes (8);
- no activity for [watch] idle_minutes (10) while subagents still run;
- a wait loop with no timeout that ran (B30's judgement);
- the same command repeated with unchanged output;
- a file being written that has not grown for [watch] stalled_file_minutes (20);
- a heavy test that ran without the prefix (B01's judgement);
- a process over the resident memory bound ([watch] rss_bound, 8 GiB);
- a long capped run using too few cores (core-usage's judgement): each of
  this session's runner bookings older than [watch] long_run_minutes (10)
  has its process tree's per-thread CPU time sampled at every tick; between
  two samples at least a minute apart, cores in use and threads computing at
  once both below [threads] heavy_default / 4 is reported, unless the run
  declared a serial phase (`serial now: <reason>` in the file its environment
  names as SWARMGATE_STATE_FILE). Reported, never stopped;
- a subagent that handed back but still has processes running in, or a
  registered copy left at, its work directories.
(A run waiting for memory here that would fit on the second host is reported
by run-with-memory-cap itself; the Stop hook sees a round ending with no
background task.) It never kills, except a process reported
[watch] kill_after_reports times in a row with nobody acknowledging
(`swarm-watch ack`), which it stops by pid and says so.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Sequence

from swarmgate.exit_codes import Exit
from swarmgate.front_door import entry
from swarmgate.host_defaults import thread_default


def say(msg: str) -> None:
    print(f"swarm-watch: {msg}", file=sys.stderr, flush=True)


class Report:
    __slots__ = ("key", "kind", "message", "pid", "start")

    def __init__(self, key: str, kind: str, message: str, pid: int | None = None, start: int | None = None):
        self.key, self.kind, self.message, self.pid, self.start = key, kind, message, pid, start

    def __repr__(self) -> str:
        return f"Report({self.kind}, {self.key})"


# --- observing (I/O) -------------------------------------------------------------------

def _ts(text) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    from datetime import datetime
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def transcript_files(session: str, cwd: str, transcripts: str | None = None) -> list[tuple[str, str]]:
    """[(agent label, path)]: the session's transcript and its subagents'."""
    import glob

    from swarmgate.agents.handover import project_dir_name, projects_dir

    root = transcripts or projects_dir()
    out = []
    for base in (os.path.join(root, project_dir_name(cwd)), *glob.glob(os.path.join(root, "*"))):
        main = os.path.join(base, f"{session}.jsonl")
        if os.path.isfile(main):
            out.append(("main", main))
            for p in sorted(glob.glob(os.path.join(base, session, "subagents", "agent-*.jsonl"))):
                out.append((os.path.basename(p)[len("agent-"):-len(".jsonl")], p))
            break
    return out


def read_calls(files: list[tuple[str, str]]) -> tuple[list[dict], float | None]:
    """Tool calls with start/result times, and the time of the last entry of any transcript."""
    from swarmgate.agents.handover import _blocks, _text_of, read_entries

    calls: list[dict] = []
    last = None
    for agent, path in files:
        try:
            entries, _ = read_entries(path)
        except OSError:
            continue
        by_id: dict[str, dict] = {}
        atype = None
        for e in entries:
            t = _ts(e.get("timestamp"))
            if t is not None:
                last = t if last is None else max(last, t)
            atype = atype or e.get("agentType") or e.get("subagent_type")
            for b in _blocks(e):
                if b.get("type") == "tool_use":
                    c = {"id": str(b.get("id") or ""), "agent": agent, "agent_type": atype, "tool": b.get("name"),
                         "input": b.get("input") if isinstance(b.get("input"), dict) else {},
                         "cwd": e.get("cwd") or "", "started": t, "ended": None, "result": None,
                         "is_error": False}
                    calls.append(c)
                    by_id[c["id"]] = c
                elif b.get("type") == "tool_result":
                    c = by_id.get(str(b.get("tool_use_id") or ""))
                    if c is not None:
                        c["ended"], c["result"], c["is_error"] = t, _text_of(b.get("content")), bool(b.get("is_error"))
    return calls, last


def session_processes(root_pid: int | None) -> list[dict]:
    """The session process's descendants with what the detectors need."""
    import psutil

    if not root_pid:
        return []
    try:
        root = psutil.Process(root_pid)
        procs = root.children(recursive=True)
    except psutil.Error:
        return []
    out = []
    for p in procs:
        try:
            with p.oneshot():
                files = []
                try:
                    for f in p.open_files():
                        if getattr(f, "mode", "r") in ("w", "a", "r+", "a+", "w+"):
                            files.append(f.path)
                except psutil.Error:
                    pass
                out.append({"pid": p.pid, "start": _start(p.pid), "cmd": " ".join(p.cmdline())[:200],
                            "rss": p.memory_info().rss, "created": p.create_time(), "cwd": _cwd(p),
                            "files": files})
        except psutil.Error:
            continue
    return out


def _start(pid: int) -> int | None:
    from swarmgate.procinfo import start_time
    return start_time(pid)


def _cwd(p) -> str:
    try:
        return p.cwd()
    except Exception:  # noqa: BLE001
        return ""


# --- judging (pure) ---------------------------------------------------------------------

def _short(text: str, n: int = 120) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[:n - 3] + "..."


def long_calls(calls: list[dict], now: float, minutes: int) -> list[Report]:
    out = []
    for c in calls:
        if c["ended"] is None and c["started"] and now - c["started"] > minutes * 60:
            what = c["input"].get("command") or c["input"].get("description") or c["tool"]
            out.append(Report(f"call:{c['id']}", "tool-call-running",
                              f"{c['agent']}'s {c['tool']} call has run {int((now - c['started']) // 60)} min "
                              f"(> {minutes}): {_short(what)}"))
    return out


def idle(last: float | None, now: float, minutes: int, running_subagents: int) -> list[Report]:
    if last is None or running_subagents == 0 or now - last <= minutes * 60:
        return []
    return [Report("idle", "no-activity", f"no transcript activity for {int((now - last) // 60)} min "
                                          f"while {running_subagents} subagent(s) still run")]


def guard_judgement(calls: list[dict], config, repo: str, session: str, codes: tuple) -> list[Report]:
    """Ran shell calls that B01 (heavy without prefix) or B30 (unbounded wait loop) refuse."""
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks import registry

    guards = [g for g in registry.guards() if g.code in codes]
    out = []
    for c in calls:
        if c["tool"] not in ("Bash", "Monitor") or c["is_error"] or c["result"] is None:
            continue
        payload = {"session_id": session, "cwd": c["cwd"] or repo, "tool_name": c["tool"], "tool_input": c["input"]}
        if c["agent"] != "main":
            payload.update(agent_id=c["agent"], agent_type=c.get("agent_type") or "subagent")
        ev = HookEvent("PreToolUse", payload, repo)
        for g in guards:
            try:
                r = g.check(ev, config)
            except Exception:  # noqa: BLE001
                continue
            for f in ([r] if r is not None and not isinstance(r, list) else (r or [])):
                kind = "heavy-without-prefix" if g.code == "B01" else "wait-loop-without-timeout"
                out.append(Report(f"{g.code}:{c['id']}", kind,
                                  f"{c['agent']} ran `{_short(c['input'].get('command', ''))}`, which {g.code} "
                                  f"refuses: {_short(f.message, 200)}"))
    return out


def repeated(history: list[dict], session: str, times: int = 3) -> list[Report]:
    """The same command with unchanged output, ``times`` runs in a row in this session."""
    mine = [h for h in history if h.get("session") == session]
    out, seen = [], set()
    for i in range(len(mine) - times + 1):
        win = mine[i:i + times]
        keys = {(h.get("command"), h.get("output_sha")) for h in win}
        if len(keys) == 1 and win[0].get("output_sha") and win[0].get("command") not in seen:
            cmd = win[0].get("command")
            seen.add(cmd)
            out.append(Report(f"repeat:{win[0].get('output_sha')}", "repeated-command",
                              f"`{_short(cmd)}` ran {times} times in a row with the same output: "
                              f"change something before running it again"))
    return out


def rss_over(procs: list[dict], bound: int) -> list[Report]:
    from swarmgate.sizes import human
    return [Report(f"rss:{p['pid']}-{p['start']}", "rss-over-bound",
                   f"pid {p['pid']} uses {human(p['rss'])} resident (> {human(bound)}): {_short(p['cmd'])}",
                   pid=p["pid"], start=p["start"]) for p in procs if p["rss"] > bound]


def stalled_files(procs: list[dict], sizes: dict, now: float, minutes: int) -> tuple[list[Report], dict]:
    """Files open for writing whose size has not changed for ``minutes``. Returns (reports, new sizes)."""
    new: dict = {}
    out = []
    for p in procs:
        for path in p["files"]:
            try:
                size = os.path.getsize(path)
            except OSError:
                continue
            old = sizes.get(path)
            since = old[1] if old and old[0] == size else now
            new[path] = [size, since]
            if now - since > minutes * 60:
                out.append(Report(f"file:{path}", "file-not-growing",
                                  f"{path} (written by pid {p['pid']}) has not grown for "
                                  f"{int((now - since) // 60)} min: is the job stuck?", pid=p["pid"], start=p["start"]))
    return out, new


CORE_WINDOW_S = 60.0  # the shortest window between two samples that is judged


def few_cores(runs: list[dict], samples: dict, now: float, heavy_default: int) -> tuple[list[Report], dict]:
    """Pure: too-few-cores reports for long runs, and the samples to keep.

    runs: [{"id", "label", "pid", "times": {"pid-tid": cpu s}, "serial": reason | None}];
    samples: {run id: {"t", "times"}} from the previous tick. A run is judged once its sample is
    at least CORE_WINDOW_S old (core-usage's measure and judge), then sampled afresh.
    """
    from swarmgate.break_switch import broken
    from swarmgate.hosts.core_usage import judge, measure

    if broken("watch-no-core-check"):
        return [], {}
    out, keep = [], {}
    for r in runs:
        old = samples.get(r["id"])
        if not isinstance(old, dict) or not isinstance(old.get("times"), dict) or now - float(old.get("t", 0)) < 0:
            keep[r["id"]] = {"t": now, "times": r["times"]}
            continue
        wall = now - float(old["t"])
        if wall < CORE_WINDOW_S:
            keep[r["id"]] = old  # not judged this tick: the last verdict stands (a finding is not "resolved")
            text = old.get("alert")
        else:
            text = judge(measure(old["times"], r["times"], wall), heavy_default, r.get("serial"))
            if text:
                text = f"capped run {r['label']!r} (pid {r['pid']}) over the last {wall / 60:.1f} min: {text}"
            keep[r["id"]] = {"t": now, "times": r["times"], "alert": text}
        if text:
            out.append(Report(f"cores:{r['id']}", "too-few-cores", text))
    return out, keep


def long_runs(session: str, now: float, minutes: int) -> list[dict]:
    """This session's runner bookings older than ``minutes``, each with its tree's per-thread CPU times."""
    from swarmgate.hosts import ledger
    from swarmgate.hosts.core_usage import serial_reason, tree_thread_times

    try:
        with ledger.lock(timeout=5):
            data = ledger.load(report=lambda m: None)
    except Exception:  # noqa: BLE001 - no ledger, or busy: no core check this tick
        return []
    out = []
    for bid, b in data["bookings"].items():
        if b.get("session") != session or b.get("kind") == "agent":
            continue
        if now - float(b.get("since") or now) < minutes * 60 or not ledger.holder_alive(b):
            continue
        times = tree_thread_times(int(b["pid"]))
        if not times:
            continue
        out.append({"id": bid, "label": b.get("label") or "?", "pid": b["pid"],
                    "times": {f"{p}-{t}": v for (p, t), v in times.items()},
                    "serial": serial_reason(_env_of(int(b["pid"])).get("SWARMGATE_STATE_FILE"))})
    return out


def _env_of(pid: int) -> dict:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    out = {}
    for item in raw.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep:
            out[k.decode(errors="replace")] = v.decode(errors="replace")
    return out


def after_handback(stopped: list[dict], procs: list[dict]) -> list[Report]:
    """stopped: [{"agent": id, "dirs": [abs paths]}]: processes still working there, or copies left."""
    out = []
    for s in stopped:
        for d in s["dirs"]:
            busy = [p for p in procs if p["cwd"] == d or p["cwd"].startswith(d.rstrip("/") + "/")]
            for p in busy:
                out.append(Report(f"handback-proc:{p['pid']}", "work-after-handback",
                                  f"subagent {s['agent']} handed back but pid {p['pid']} still runs in {d}: "
                                  f"{_short(p['cmd'])}", pid=p["pid"], start=p["start"]))
            if not busy and os.path.isdir(d):
                out.append(Report(f"handback-dir:{d}", "copy-left-after-handback",
                                  f"subagent {s['agent']} handed back and left {d} behind: delete it "
                                  f"(work-dir-owner clean) or say why not"))
    return out


# --- one tick ---------------------------------------------------------------------------

def heavy_in_agent_cgroups(session: str, cwd: str, root_pid: int | None, config) -> list[Report]:
    """Heavy programs running inside this session's subagent containment cgroups (issue 10, X03):
    alerted at once (kind heavy-in-agent-cgroup, which H02 and the next hook show), and reported
    on every tick while they run, so an unacknowledged one is stopped like any other report."""
    from swarmgate.hooks import agent_sightings as S

    owner = {"pid": root_pid, "start": _start(root_pid)} if root_pid else None
    try:
        found = S.scan(config, cwd, owner)
    except Exception as e:  # noqa: BLE001 - one check that cannot look does not stop the others
        say(f"could not look into the subagents' cgroups: {e}")
        return []
    S.report(found, session, source="swarm-watch", shown=False)
    return [Report(f"heavy-in-agent:{s.key}", "heavy-in-agent-cgroup",
                   f"heavy program in subagent {s.agent_id}'s cgroup: {s.describe()}", s.pid, s.start) for s in found]


def _state_path(session: str) -> str:
    from swarmgate.state_paths import safe_name, state_dir
    return os.path.join(str(state_dir()), "watch", safe_name(session) + ".json")


def tick(session: str, cwd: str, root_pid: int | None, config, transcripts: str | None = None,
         now: float | None = None) -> list[Report]:
    """Observe, judge, report new or continuing findings as alerts, escalate. Returns this tick's reports."""
    from swarmgate.alerts import write_alert
    from swarmgate.break_switch import broken
    from swarmgate.statefile import locked, read_json, write_json_atomic

    now = time.time() if now is None else now
    w = config["watch"]
    files = transcript_files(session, cwd, transcripts)
    calls, last = read_calls(files)
    procs = session_processes(root_pid)
    st_path = _state_path(session)
    with locked(st_path + ".lock"):
        state = read_json(st_path, {})
        reports: list[Report] = []
        reports += long_calls(calls, now, int(w["tool_call_minutes"]))
        running, stopped = _subagents(session, config, cwd)
        reports += idle(last, now, int(w["idle_minutes"]), running)
        reports += guard_judgement(calls, config, cwd, session, ("B01", "B30"))
        reports += repeated(_history(), session)
        reports += rss_over(procs, int(w["rss_bound"]))
        stalled, sizes = stalled_files(procs, state.get("files", {}), now, int(w["stalled_file_minutes"]))
        reports += stalled
        reports += after_handback(stopped, procs)
        cores, samples = few_cores(long_runs(session, now, int(w["long_run_minutes"])), state.get("cores", {}),
                                   now, thread_default(config))
        reports += cores
        reports += heavy_in_agent_cgroups(session, cwd, root_pid, config)
        findings = state.get("findings", {})
        current = {r.key for r in reports}
        for key in list(findings):
            if key not in current:
                del findings[key]  # resolved: the count restarts if it comes back
        for r in reports:
            f = findings.setdefault(r.key, {"count": 0, "first": now, "acked": False, "kind": r.kind})
            f["count"] += 1
            f["last"] = now
            f["message"] = r.message
            if f["count"] == 1 and not broken("watch-silent") and r.kind != "heavy-in-agent-cgroup":
                write_alert(f"watch:{r.kind}", r.message, source="swarm-watch", session=session, key=r.key,
                            pid=r.pid)
            elif not f["acked"] and r.pid and f["count"] >= int(w["kill_after_reports"]):
                if _stop_pid(r.pid, r.start):
                    write_alert("watch:stopped", f"stopped pid {r.pid} after {f['count']} reports in a row that "
                                f"nobody acknowledged: {r.message}", source="swarm-watch", session=session,
                                key=r.key, pid=r.pid)
                    f["stopped"] = True
        state.update(findings=findings, files=sizes, last_tick=now, cores=samples)
        write_json_atomic(st_path, state)
    return reports


def _stop_pid(pid: int, start: int | None) -> bool:
    from swarmgate.procinfo import is_alive
    if not is_alive(pid, start):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    for _ in range(100):
        if not is_alive(pid, start):
            return True
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    return True


def _history() -> list[dict]:
    try:
        from swarmgate.state_paths import command_history_path
        from swarmgate.statefile import tail_jsonl
        return tail_jsonl(command_history_path(), 512 * 1024)
    except Exception:  # noqa: BLE001 - no history yet
        return []


def _subagents(session: str, config, cwd: str = "") -> tuple[int, list[dict]]:
    """(number of running subagents, [{"agent", "dirs"}] of stopped ones with their work dirs)."""
    try:
        from swarmgate.hooks import session_state as S
        st = S.load(session)
        running = len(S.running(st))
        agents = st.get("agents", {})
    except Exception:  # noqa: BLE001
        return 0, []
    stopped = []
    from swarmgate.agents.work_dir_owner import work_root
    root = work_root(config, cwd)
    for aid, a in agents.items():
        if not isinstance(a, dict) or not a.get("stopped"):
            continue
        d = S.dispatch_of(st, aid) or {}
        dirs = [x if os.path.isabs(x) else os.path.join(cwd, x) for x in d.get("scratch") or []]
        if root:
            try:
                from swarmgate.agents.work_dir_owner import registrations
                dirs += [r["path"] for r in registrations(root, agent=aid)]
            except Exception:  # noqa: BLE001
                pass
        if dirs:
            stopped.append({"agent": aid, "dirs": dirs})
    return running, stopped


# --- CLI --------------------------------------------------------------------------------

@entry("swarm-watch")
def main(argv: Sequence[str] | None = None) -> int:
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(prog="swarm-watch", description=__doc__.split("\n")[0])
    p.add_argument("verb", nargs="?", choices=("watch", "ack", "status"), default="watch")
    p.add_argument("key", nargs="?", help="for ack: a finding key, or `all`")
    p.add_argument("--session", help="the session id (default: $CLAUDE_CODE_SESSION_ID)")
    p.add_argument("--cwd", default=None, help="the session's project directory (default: here)")
    p.add_argument("--pid", type=int, help="the session's Claude Code process (its descendants are watched)")
    p.add_argument("--interval", type=float, default=60.0)
    p.add_argument("--once", action="store_true", help="one tick, print what was found")
    p.add_argument("--transcripts", help="Claude Code's projects directory (default ~/.claude/projects)")
    args = p.parse_args(argv)
    session = args.session or os.environ.get("CLAUDE_CODE_SESSION_ID") or os.environ.get("CLAUDE_SESSION_ID")
    if not session:
        say("--session is required")
        return Exit.USAGE
    from swarmgate.statefile import locked, read_json, write_json_atomic
    if args.verb in ("ack", "status"):
        path = _state_path(session)
        with locked(path + ".lock"):
            state = read_json(path, {})
            findings = state.get("findings", {})
            if args.verb == "status":
                for k, f in findings.items():
                    print(f"{k}: {f.get('count')}x{' (acked)' if f.get('acked') else ''} {f.get('message')}")
                if not findings:
                    print("no open findings")
                return 0
            if not args.key:
                say("ack needs a finding key or `all` (see `swarm-watch status`)")
                return Exit.USAGE
            hit = [k for k in findings if args.key in ("all", k)]
            for k in hit:
                findings[k]["acked"] = True
            write_json_atomic(path, state)
        print(f"acknowledged {len(hit)} finding(s)")
        return 0 if hit or args.key == "all" else 1
    from swarmgate.config import ConfigError, load_config
    try:
        config = load_config(args.cwd)
    except ConfigError as e:
        say(str(e))
        return Exit.USAGE
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if args.once:
        for r in tick(session, cwd, args.pid, config, args.transcripts):
            print(f"{r.kind}: {r.message}")
        return 0
    if not claim_instance(session):
        print(f"swarm-watch already runs for session {session}")
        return 0
    from swarmgate.procinfo import is_alive
    root_start = _start(args.pid) if args.pid else None
    while True:
        tick(session, cwd, args.pid, config, args.transcripts)
        next_tick = time.monotonic() + args.interval
        while time.monotonic() < next_tick:
            if args.pid and not is_alive(args.pid, root_start):
                return 0  # the session ended: so does its watchdog
            if not os.path.isdir(cwd):
                return 0  # the project is gone
            time.sleep(min(1.0, args.interval))


def instance_path(session: str) -> str:
    return _state_path(session) + ".instance"


def running_instance(session: str) -> dict | None:
    from swarmgate.procinfo import holder_alive
    from swarmgate.statefile import read_json
    holder = read_json(instance_path(session), {})
    return holder if holder and holder_alive(holder) else None


def reserve_instance(session: str, pid: int) -> None:
    """Mark ``pid`` (a swarm-watch just started for ``session``) as the session's watchdog before it
    claims the place itself, so that a reader right after the start (the wake waiter at the Stop that
    follows the first dispatch) already sees it running. A live holder is left alone."""
    from swarmgate.procinfo import identity
    from swarmgate.statefile import locked, write_json_atomic
    with locked(instance_path(session) + ".lock"):
        if running_instance(session) is None:
            write_json_atomic(instance_path(session), identity(pid))


def claim_instance(session: str) -> bool:
    """Become the session's one watchdog; False when a live one exists."""
    from swarmgate.procinfo import identity
    from swarmgate.statefile import locked, write_json_atomic
    with locked(instance_path(session) + ".lock"):
        holder = running_instance(session)
        if holder and holder.get("pid") != os.getpid():
            return False
        write_json_atomic(instance_path(session), identity())
    return True


# --- self-test: a transcript with a call that has run for 20 minutes must become an alert ---

def _cell_long_call_alerted():
    import json
    import tempfile

    from swarmgate.agents.handover import project_dir_name
    from swarmgate.config import Config, validate

    with tempfile.TemporaryDirectory(prefix="swarmgate-watch-") as tmp:
        repo = os.path.join(tmp, "repo")
        base = os.path.join(tmp, "projects", project_dir_name(repo))
        os.makedirs(base)
        os.makedirs(repo)
        started = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 1200)) + ".000Z"
        with open(os.path.join(base, "selftest-watch.jsonl"), "w") as f:
            f.write(json.dumps({"type": "assistant", "timestamp": started, "cwd": repo, "message": {
                "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                  "input": {"command": "sleep 3600"}}]}}) + "\n")
        old = os.environ.get("SWARMGATE_STATE_DIR")
        os.environ["SWARMGATE_STATE_DIR"] = os.path.join(tmp, "state")
        try:
            from swarmgate.alerts import all_alerts
            from swarmgate.cell_outcome import protected
            tick("selftest-watch", repo, None, Config(validate({}), None, None, {}), os.path.join(tmp, "projects"))
            return protected(any(a["kind"] == "watch:tool-call-running" for a in all_alerts()),
                             "a 20-minute tool call raised no alert")
        finally:
            if old is None:
                os.environ.pop("SWARMGATE_STATE_DIR", None)
            else:
                os.environ["SWARMGATE_STATE_DIR"] = old


def _cell_few_cores_reported():
    """A long run whose one thread computed 30 s in 10 min, with a 31-thread default, is reported."""
    from swarmgate.cell_outcome import broken, green, red
    run = {"id": "1-1", "label": "replay", "pid": 1, "times": {"1-1": 40.0, "1-2": 0.0}, "serial": None}
    _, samples = few_cores([dict(run, times={"1-1": 10.0, "1-2": 0.0})], {}, 1000.0, 31)
    reports, _ = few_cores([run], samples, 1600.0, 31)
    kinds = [r.kind for r in reports]
    if kinds == ["too-few-cores"]:
        return green()
    if not kinds:
        return red("a serial long run was not reported")
    return broken(f"unexpected reports {kinds}")


def selftest_suite():
    from swarmgate.selftest import Cell, Suite
    return Suite("swarm-watch", [Cell("long-tool-call-alerted", _cell_long_call_alerted),
                                 Cell("long-run-with-few-cores-reported", _cell_few_cores_reported)],
                 {"watch-silent": ["long-tool-call-alerted"],
                  "watch-no-core-check": ["long-run-with-few-cores-reported"]})


if __name__ == "__main__":
    sys.exit(main())
