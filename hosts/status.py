"""`swarmgate status [--json]`: the runner's ledger, the slice's use, history peaks, the live sessions
of this repository with their subagents and teammates, scratch locks and the last day's alerts; rows of
the caller's session (its CLAUDE_CODE_SESSION_ID, or --session) are marked "yours".

Reading the ledger reconciles it first (a dead wrapper's booking and run
cgroup are removed, as the next run would), so what is shown is live.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from swarmgate import heavy_grants
from swarmgate.alerts import all_alerts
from swarmgate.config import ConfigError, find_repo, load_config
from swarmgate.hooks import repo_sessions, scratch_locks
from swarmgate.hooks import session_state as S
from swarmgate.front_door import entry
from swarmgate.hosts import cgroups, history, ledger
from swarmgate.hosts.runner_cli import runner_total
from swarmgate.sizes import human
from swarmgate.statefile import StateError
from swarmgate.tool_parser import ToolParser


def gather(session: str | None = None) -> dict:
    """The ledger, slice and history; ``session`` (default: this shell's agent session) marks the
    runs, agents and waiters that are its own ("yours")."""
    notes: list[str] = []
    slice_name, backend_kind, total, cfg = "swarmgate-heavy", "auto", None, None
    try:
        cfg = load_config()
        slice_name, backend_kind = cfg["memory"]["slice"], cfg["memory"]["backend"]
        total = runner_total(cfg)
    except (ConfigError, ValueError) as e:
        notes.append(f"config: {e}")
    backend = None
    try:
        backend = cgroups.get(backend_kind)
    except cgroups.CgroupError as e:
        notes.append(f"cgroups: {e}")
    report = notes.append
    try:
        with ledger.lock(timeout=10):
            data = ledger.load(report=report)
            removed = ledger.reconcile(data, backend, slice_name)
            if removed.changed:
                ledger.save(data)
            if removed:
                notes.extend(removed)
            hist = history.load(report=report)
    except StateError as e:
        notes.append(str(e))
        data, hist = ledger.empty(), {"labels": {}}
    now = time.time()
    mine = session if session is not None else ledger.session_of()
    bookings, agents = [], []
    for key, b in sorted(data["bookings"].items(), key=lambda kv: kv[1].get("since", 0)):
        use = peak = oom = None
        path = b.get("cgroup")
        if backend is not None and path:
            try:
                c = backend.counters(path)
                use, peak, oom = c.usage, c.peak, c.oom_kill
            except OSError:
                pass
        row = {"id": key, "label": b.get("label"), "pid": b.get("pid"), "cap": b.get("cap"),
               "booked": b.get("booked"), "basis": b.get("basis"), "use": use, "peak": peak,
               "for_s": round(now - float(b.get("since") or now), 1), "cgroup": path,
               "session": b.get("session"), "yours": bool(mine) and b.get("session") == mine}
        if b.get("kind") == "agent":
            row.update({"agent_id": b.get("agent_id"), "agent_type": b.get("agent_type"),
                        "cpus": b.get("cpus"), "oom_kills": oom})
            agents.append(row)
        else:
            bookings.append(row)
    waiters = [{"id": k, "label": w.get("label"), "pid": w.get("pid"), "need": w.get("need"),
                "cap": w.get("cap"), "for_s": round(now - float(w.get("since") or now), 1),
                "session": w.get("session"), "yours": bool(mine) and w.get("session") == mine}
               for k, w in sorted(data["waiters"].items(), key=lambda kv: kv[1].get("since", 0))]
    sl = None
    if backend is not None:
        path = backend.slice_path(slice_name)
        if os.path.isdir(path):
            c = backend.counters(path)
            sl = {"name": slice_name, "path": path, "backend": backend.name, "limit": c.limit,
                  "usage": c.usage, "reclaimable": c.reclaimable, "non_reclaimable": c.non_reclaimable,
                  "peak": c.peak}
        else:
            sl = {"name": slice_name, "path": path, "backend": backend.name, "absent": True}
    labels = [{"label": k, "peak": v.get("peak"), "runs": v.get("runs"), "duration_s": v.get("duration_s"),
               "ceiling_hit": bool(v.get("ceiling_hit")), "pushed_out": bool(v.get("pushed_out")),
               "last_outcome": v.get("last_outcome")}
              for k, v in sorted(hist["labels"].items(), key=lambda kv: -(kv[1].get("last") or 0))]
    grants = [{"argv": g.get("argv"), "session": g.get("session"), "pattern": g.get("pattern"),
               "expires_in_s": round(float(g.get("expires") or now) - now, 1)} for g in heavy_grants.outstanding(now)]
    rep = {"total": total, "slice": sl, "bookings": bookings, "agents": agents, "grants": grants, "waiters": waiters,
           "history": labels, "notes": notes, "session": mine}
    rep.update(sessions_and_locks(mine, now))
    return rep


ALERT_HOURS = 24


def sessions_and_locks(mine: str | None, now: float) -> dict:
    """The live sessions of this repository (with their running subagents and teammates), the scratch
    locks held and the alerts of the last day, each marked "yours" when it is ``mine``'s."""
    repo = find_repo()
    sessions = []
    for rec in repo_sessions.live_sessions(repo):
        sid = str(rec["session"])
        st = S.load(sid)
        mate = rec.get("teammate") if isinstance(rec.get("teammate"), dict) else None
        sessions.append({"session": sid, "yours": bool(mine) and sid == mine, "pid": (rec.get("proc") or {}).get("pid"),
                         "running": [{"agent_id": a, "type": x.get("type"), "name": x.get("name")}
                                     for a, x in S.running(st)],
                         "teammate": mate})
    locks = [{"path": r.get("path"), "session": r.get("session"), "dispatch": r.get("name") or r.get("dispatch"),
              "type": r.get("type"), "yours": bool(mine) and r.get("session") == mine}
             for r in scratch_locks.held()]
    alerts = [{"time": a.get("time"), "kind": a.get("kind"), "message": a.get("message"),
               "session": a.get("session"), "yours": bool(mine) and a.get("session") == mine}
              for a in all_alerts(since=now - ALERT_HOURS * 3600)][-50:]
    return {"repo": repo, "sessions": sessions, "scratch_locks": locks, "alerts": alerts}


def render(rep: dict) -> None:
    def h(n):
        return "-" if n is None else human(n)

    con = Console()
    sl = rep["slice"]
    if sl and not sl.get("absent"):
        con.print(f"[bold]slice[/bold] {sl['name']} ({sl['backend']}): total {h(rep['total'])}, "
                  f"limit {h(sl['limit'])}, in use {h(sl['usage'])} of which reclaimable {h(sl['reclaimable'])}")
    elif sl:
        con.print(f"[bold]slice[/bold] {sl['name']}: not created yet (total {h(rep['total'])})")
    def whose(x) -> str:
        return "[bold green]yours[/]" if x.get("yours") else str(x.get("session") or "-")[:8]

    t = Table(title="running (booked)" + (f"; yours: session {rep['session'][:8]}" if rep.get("session") else ""))
    for col in ("label", "pid", "session", "cap", "booked", "basis", "uses", "peak", "for"):
        t.add_column(col)
    for b in rep["bookings"]:
        t.add_row(str(b["label"]), str(b["pid"]), whose(b), h(b["cap"]), h(b["booked"]), str(b["basis"]),
                  h(b["use"]), h(b["peak"]), f"{b['for_s']:.0f}s")
    con.print(t)
    if rep["agents"]:
        a = Table(title="subagents (containment cgroups, booked at their cap)")
        for col in ("agent", "type", "session", "cap", "cpus", "uses", "peak", "OOM kills", "for"):
            a.add_column(col)
        for x in rep["agents"]:
            a.add_row(str(x["agent_id"]), str(x["agent_type"]), whose(x), h(x["cap"]),
                      "-" if x["cpus"] is None else f"{x['cpus']:g}", h(x["use"]), h(x["peak"]),
                      str(x["oom_kills"] if x["oom_kills"] is not None else "-"), f"{x['for_s']:.0f}s")
        con.print(a)
    else:
        con.print("no subagent containment cgroups")
    for g in rep.get("grants", []):
        con.print(f"authorized once (X01): `{' '.join(g['argv'] or [])}` for {g['expires_in_s']:.0f} s more")
    if rep["waiters"]:
        w = Table(title="waiting")
        for col in ("label", "pid", "session", "needs", "cap", "for"):
            w.add_column(col)
        for x in rep["waiters"]:
            w.add_row(str(x["label"]), str(x["pid"]), whose(x), h(x["need"]), h(x["cap"]), f"{x['for_s']:.0f}s")
        con.print(w)
    else:
        con.print("nobody waiting")
    st = Table(title=f"sessions on {rep.get('repo')}")
    for col in ("session", "pid", "running subagents", "teammate"):
        st.add_column(col)
    for x in rep.get("sessions") or []:
        mate = x.get("teammate")
        st.add_row(whose(x) if x.get("yours") else str(x["session"])[:8], str(x.get("pid")),
                   ", ".join(f"{a['agent_id'][:10]} ({a.get('type')})" for a in x["running"]) or "-",
                   f"{mate.get('name')} of {str(mate.get('parent'))[:8]} ({'busy' if mate.get('busy') else 'idle'})"
                   if mate else "-")
    con.print(st if rep.get("sessions") else "no live session recorded for this repository")
    if rep.get("scratch_locks"):
        lt = Table(title="scratch locks (D16)")
        for col in ("path", "session", "dispatch", "type"):
            lt.add_column(col)
        for x in rep["scratch_locks"]:
            lt.add_row(str(x["path"]), whose(x), str(x.get("dispatch")), str(x.get("type")))
        con.print(lt)
    if rep.get("alerts"):
        at = Table(title=f"alerts of the last {ALERT_HOURS} h")
        for col in ("when", "kind", "session", "message"):
            at.add_column(col)
        for x in rep["alerts"][-15:]:
            at.add_row(time.strftime("%H:%M:%S", time.localtime(float(x.get("time") or 0))), str(x.get("kind")),
                       whose(x), str(x.get("message"))[:100])
        con.print(at)
    ht = Table(title="history (peak per label)")
    for col in ("label", "peak", "runs", "duration", "marks", "last"):
        ht.add_column(col)
    for x in rep["history"][:40]:
        marks = ", ".join(m for m, on in (("hit its cap", x["ceiling_hit"]), ("pushed out", x["pushed_out"])) if on)
        ht.add_row(x["label"][:60], h(x["peak"]), str(x["runs"]),
                   "-" if x["duration_s"] is None else f"{x['duration_s']:.1f}s", marks or "-",
                   str(x["last_outcome"]))
    con.print(ht)
    for n in rep["notes"]:
        con.print(f"[yellow]note:[/yellow] {n}")


@entry("status")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(prog="swarmgate status",
                                description="The runner's ledger (running bookings, waiters), the slice's use "
                                            "and the history peaks.")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--session", default=None,
                   help="mark this session's runs as yours (default: $CLAUDE_CODE_SESSION_ID)")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    rep = gather(args.session)
    if args.json:
        print(json.dumps(rep, indent=1, sort_keys=True))
    else:
        render(rep)
    return 0
