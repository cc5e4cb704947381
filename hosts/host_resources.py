"""host-resources: free memory, cores and GPUs per host, and where a command fits (SPEC §4.4, §5.2).

    host-resources [--json] [--host NAME...] [-- COMMAND]

Per host: cores, cores in use, load, heavy threads still free, MemAvailable
minus the runner's booked-but-not-yet-grown memory, the slice's room; per GPU:
total, free, the compute processes on it (a quiesce service's share as
"N MiB held by a yield service", never its name); this command's history (last
peak, duration); a verdict. Peers are read over ssh by sending the collector's
source (nothing installed there), all hosts in parallel, 12 s each, 25 s in all;
a host that cannot be read is reported as unreadable.
"""
from __future__ import annotations

import json
import os
import sys
import time

from swarmgate.front_door import entry
from swarmgate.host_defaults import margin, thread_default

COLLECTOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "collector.py")
GIB = 1 << 30


def _fmt(n) -> str:
    from swarmgate.sizes import human
    return human(n) if n is not None else "?"


def local_options(config, hosts) -> dict:
    from swarmgate.state_paths import state_dir
    return {"state_dir": str(state_dir()), "slice": config["memory"]["slice"],
            "yield_names": hosts["quiesce"]["process_names"], "cpu_interval": 0.1}


def read_local(config, hosts) -> dict:
    from swarmgate.hosts import collector
    data = collector.collect(local_options(config, hosts))
    data["name"] = "here"
    return data


def read_peer(peer: dict, hosts, budget: float) -> dict:
    from swarmgate.hosts import ssh
    opts = {"state_dir": peer.get("state_dir") or "/var/tmp/swarmgate", "slice": None,
            "yield_names": hosts["quiesce"]["process_names"], "cpu_interval": 0.25}
    with open(COLLECTOR, "rb") as f:
        src = f.read()
    cp = ssh.run(peer, f"{peer['python']} - {json.dumps(json.dumps(opts))}", input_bytes=src, timeout=budget)
    if cp.returncode != 0:
        raise ssh.PeerError(f"collector exited {cp.returncode}: {cp.stderr.decode(errors='replace').strip()[-200:]}")
    data = json.loads(cp.stdout.decode())
    data["name"] = peer["name"]
    return data


def gather(config, hosts, names: list[str] | None = None, include_peers: bool = True) -> list[dict]:
    """Reports of this host and the configured peers, in parallel, each bounded in time."""
    host_budget = float(hosts["report"]["host_budget_s"])
    total_budget = float(hosts["report"]["total_budget_s"])
    jobs = []
    if not names or "here" in names:
        jobs.append(("here", lambda: read_local(config, hosts)))
    if include_peers:
        for pname, peer in hosts.peers.items():
            if names and pname not in names:
                continue
            jobs.append((pname, lambda p=peer: read_peer(p, hosts, host_budget)))
    if len(jobs) == 1:
        name, fn = jobs[0]
        try:
            return [fn()]
        except Exception as e:  # noqa: BLE001 - unreadable is a report, not a crash
            return [{"name": name, "error": f"{type(e).__name__}: {e}"}]
    # only with peers: concurrent.futures costs a hook ~13 ms to import
    from concurrent.futures import ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=len(jobs))
    futures = {pool.submit(fn): name for name, fn in jobs}
    done, _ = wait(futures, timeout=total_budget)
    out = []
    for fut, name in futures.items():
        if fut in done:
            try:
                out.append(fut.result())
            except Exception as e:  # noqa: BLE001
                out.append({"name": name, "error": f"{type(e).__name__}: {e}"})
        else:
            out.append({"name": name, "error": f"not read within {total_budget:g}s"})
    pool.shutdown(wait=False, cancel_futures=True)
    return out


def command_history(label: str) -> dict | None:
    """This command's last peak and duration from the runner's history, if any."""
    try:
        from swarmgate.hosts import history as H
        rec = H.entry(H.load(report=lambda msg: None), label)
    except Exception:  # noqa: BLE001 - history is advisory
        return None
    if not rec:
        return None
    return {"peak": rec.get("peak"), "duration": rec.get("duration_s"), "runs": rec.get("runs"),
            "ceiling_hit": rec.get("ceiling_hit"), "pushed_out": rec.get("pushed_out")}


def label_for(command: str) -> str:
    """The runner's history key for a shell command: its --label, else the command it wraps."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    runners = ("run-with-memory-cap", "host-dispatch", "multi-host-run")
    for i, w in enumerate(words):
        if w.rsplit("/", 1)[-1] in runners:
            rest = words[i + 1:]
            if "--label" in rest and rest.index("--label") + 1 < len(rest):
                return rest[rest.index("--label") + 1]
            if "--" in rest:
                words = rest[rest.index("--") + 1:]
            break
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # env prefixes are not part of the key
    from swarmgate.hosts.history import normalise
    return normalise(words)  # the runner's own default label


def judge(report: dict, need: int, threads_default: int, gpu: bool, slice_total: int | None = None) -> dict:
    """Pure: derived figures and the verdict for one host report."""
    if "error" in report:
        return {"name": report["name"], "readable": False, "verdict": f"unreadable: {report['error']}"}
    cores = int(report.get("cores") or 1)
    in_use = float(report.get("cores_in_use") or 0.0)
    threads_free = max(0, min(threads_default, int(cores - in_use)))
    from swarmgate.break_switch import broken

    not_grown = 0 if broken("no-booking-subtraction") else int(report.get("booked_not_grown", 0))
    available = int(report.get("mem_available", 0)) - not_grown
    sl = report.get("slice")
    room = None
    if slice_total is not None and not (sl and sl.get("limit")):
        # no run has created the slice yet: its room is the whole total the runner would give it
        room = slice_total - not_grown
    if sl and sl.get("limit"):
        room = sl["limit"] - max(sl["usage"] - sl.get("reclaimable", 0), 0) - not_grown
    lacks = []
    if need > available:
        lacks.append(f"memory: needs {_fmt(need)}, {_fmt(max(available, 0))} available"
                     f" (short {_fmt(need - available)})")
    if room is not None and need > room:
        lacks.append(f"slice room: needs {_fmt(need)}, {_fmt(max(room, 0))} left under the total")
    if gpu:
        cards = report.get("gpus") or []
        if not cards:
            lacks.append("GPU: " + (report.get("gpu_note") or "no GPU"))
        elif all(c["processes"] for c in cards):
            lacks.append("GPU: every card runs another compute process")
    return {"name": report["name"], "readable": True, "threads_free": threads_free,
            "available": available, "slice_room": room, "lacks": lacks,
            "verdict": "can run here" if not lacks else "cannot run here: " + "; ".join(lacks)}


def local_total(config, report: dict) -> int | None:
    """The runner's total here: [memory] total, else machine memory - [memory] margin (host_defaults)."""
    if "error" in report:
        return None
    total = config["memory"]["total"]
    mem = int(report.get("mem_total", 0))
    return int(total) if total else max(mem - margin(config, mem), 0)


def build(config, hosts, command: str | None, gpu: bool | None = None, names=None) -> dict:
    label = label_for(command) if command else None
    hist = command_history(label) if label else None
    need = int(config["memory"]["default_prediction"])
    if hist and hist.get("peak"):
        need = int(hist["peak"])
    if gpu is None and command:
        words = command.replace("=", " ").split()
        gpu = any(p in w for w in words for p in config["gpu"]["patterns"])
    reports = gather(config, hosts, names, include_peers=hosts["across_machines"]["enabled"] or bool(names))
    verdicts = [judge(r, need, thread_default(config), bool(gpu),
                      local_total(config, r) if r.get("name") == "here" else None) for r in reports]
    return {"command": command, "label": label, "history": hist, "need": need, "gpu": bool(gpu),
            "hosts": reports, "verdicts": verdicts}


def render_text(rep: dict) -> str:
    """The report as plain text (R01's additionalContext)."""
    lines = []
    for r, v in zip(rep["hosts"], rep["verdicts"]):
        if not v["readable"]:
            lines.append(f"host {r['name']}: could not be read ({r.get('error')}); nothing is known about it")
            continue
        load = "/".join(f"{x:g}" for x in r["load"])
        line = (f"host {r['name']}: {r['cores']} cores, {r['cores_in_use']:g} in use, load {load}, "
                f"{v['threads_free']} heavy threads free; memory {_fmt(v['available'])} available "
                f"(MemAvailable {_fmt(r['mem_available'])} - {_fmt(r['booked_not_grown'])} booked not yet grown)")
        if v["slice_room"] is not None:
            line += f"; slice room {_fmt(v['slice_room'])}"
        lines.append(line)
        if r.get("gpus"):
            for c in r["gpus"]:
                procs = ", ".join(f"pid {p['pid']} {p['name']} {p['used_mib']} MiB" for p in c["processes"]) or "none"
                g = (f"  GPU {c['index']} {c['name']}: {c['total_mib']} MiB total, {c['free_mib']} MiB free; "
                     f"compute processes: {procs}")
                if c.get("yield_service_mib"):
                    g += f"; {c['yield_service_mib']} MiB held by a yield service"
                lines.append(g)
        elif rep["gpu"]:
            lines.append(f"  {r.get('gpu_note') or 'no GPU'}")
    if rep["command"]:
        lines.append(_command_line(rep))
    for v in rep["verdicts"]:
        if v["readable"]:
            lines.append(f"verdict {v['name']}: {v['verdict']}")
    return "\n".join(lines)


def _command_line(rep: dict) -> str:
    """What is known of the command's memory: its last peak, or the prediction assumed."""
    h = rep["history"]
    if h:
        dur = h.get("duration") or h.get("duration_s")
        return f"this command: last peak {_fmt(h.get('peak'))}" + (f", ran {float(dur):.0f}s" if dur else "")
    return f"this command: no history; assuming {_fmt(rep['need'])} (memory.default_prediction)"


@entry("host-resources")
def main(argv=None) -> int:
    from swarmgate.exit_codes import Exit
    from swarmgate.tool_parser import ToolParser

    argv = list(sys.argv[1:] if argv is None else argv)
    command = None
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
        import shlex
        command = " ".join(shlex.quote(w) for w in rest) if rest else None
    p = ToolParser(prog="host-resources", description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="JSON instead of a table")
    p.add_argument("--host", action="append", metavar="NAME", help="only these hosts (`here` is this one)")
    p.add_argument("--gpu", action="store_true", help="judge as a GPU command")
    p.add_argument("--hosts-config", help="hosts.toml (default ~/.config/swarmgate/hosts.toml)")
    args = p.parse_args(argv)
    from swarmgate.config import ConfigError, load_config
    from swarmgate.hosts_config import load_hosts_config
    try:
        config = load_config()
        hosts = load_hosts_config(args.hosts_config)
    except ConfigError as e:
        print(f"host-resources: {e}", file=sys.stderr)
        return Exit.USAGE
    if args.host:
        unknown = [h for h in args.host if h != "here" and h not in hosts.peers]
        if unknown:
            print(f"host-resources: unknown host(s) {', '.join(unknown)} "
                  f"(known: here, {', '.join(hosts.peers) or 'no peers'})", file=sys.stderr)
            return Exit.USAGE
    t0 = time.monotonic()
    rep = build(config, hosts, command, gpu=True if args.gpu else None, names=args.host)
    rep["elapsed_s"] = round(time.monotonic() - t0, 3)
    if args.json:
        print(json.dumps(rep, indent=1))
        return 0
    from rich.console import Console

    import shutil

    width = max(shutil.get_terminal_size((80, 24)).columns, 40)
    con = Console(width=width, highlight=False)
    t = _table(rep)
    if con.measure(t, options=con.options.update(max_width=10_000)).maximum <= width:
        con.print(t)
        if command:
            print(_command_line(rep))
    else:  # the nine columns would fold their words a few letters a line: a block per host
        print("\n".join(render_narrow(rep, width)))
    return 0


def _gpus(r: dict) -> list[str]:
    return [f"{c['index']}: {c['free_mib']}/{c['total_mib']} MiB free" for c in r["gpus"] or []] \
        or [r.get("gpu_note") or "no GPU"]


def _table(rep: dict):
    from rich.table import Table

    t = Table(title="host resources")
    for col in ("host", "cores", "in use", "load", "threads free", "available", "slice room", "GPUs", "verdict"):
        t.add_column(col)
    for r, v in zip(rep["hosts"], rep["verdicts"]):
        if not v["readable"]:
            t.add_row(r["name"], "", "", "", "", "", "", "", v["verdict"])
            continue
        t.add_row(r["name"], str(r["cores"]), f"{r['cores_in_use']:g}", "/".join(f"{x:g}" for x in r["load"]),
                  str(v["threads_free"]), _fmt(v["available"]),
                  _fmt(v["slice_room"]) if v["slice_room"] is not None else "-", "; ".join(_gpus(r)),
                  v["verdict"])
    return t


def render_narrow(rep: dict, width: int) -> list[str]:
    """The table as a block per host for a narrow terminal (pure): every line fits ``width``;
    a long verdict wraps at words under its own label."""
    import textwrap

    def put(text: str, indent: str = "", more: str = "      ") -> None:
        lines.extend(textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + more,
                                   break_on_hyphens=False) or [indent])

    lines = ["host resources"]
    for r, v in zip(rep["hosts"], rep["verdicts"]):
        if not v["readable"]:
            put(f"{r['name']}: could not be read ({r.get('error')})")
            put(f"verdict: {v['verdict']}", "  ")
            continue
        load = "/".join(f"{x:g}" for x in r["load"])
        put(f"{r['name']}: {r['cores']} cores, {r['cores_in_use']:g} in use, load {load}, "
            f"{v['threads_free']} heavy threads free")
        room = f", slice room {_fmt(v['slice_room'])}" if v["slice_room"] is not None else ""
        put(f"memory: {_fmt(v['available'])} available{room}", "  ")
        for g in _gpus(r):
            put(f"GPU {g}" if r["gpus"] else f"GPUs: {g}", "  ")
        put(f"verdict: {v['verdict']}", "  ")
    if rep["command"]:
        put(_command_line(rep))
    return lines


# --- self-test: a real ledger booking held by a live process ---

def _cell_bookings_subtracted():
    """A live booking of 1 PiB not yet grown: the report reads it, and the memory available for a
    run is MemAvailable less it. Hermetic: a temp repository with a slice of its own and a temp
    state dir, and it compares the report's own numbers, not a verdict that also depends on this
    machine's slice and memory."""
    import subprocess
    import tempfile

    from swarmgate.cell_outcome import broken, green, red
    from swarmgate.procinfo import start_time

    big = 1 << 50
    holder = subprocess.Popen(["sleep", "30"])
    try:
        with tempfile.TemporaryDirectory(prefix="swarmgate-hr-") as tmp:
            state, repo = os.path.join(tmp, "state"), os.path.join(tmp, "repo")
            os.makedirs(os.path.join(state, "runner"))
            os.makedirs(os.path.join(repo, ".claude"))
            with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
                f.write(f'[memory]\ntotal = "1G"\nslice = "swarmgate-selftest-hr-{os.getpid()}"\n')
            with open(os.path.join(state, "runner", "ledger.json"), "w") as f:
                json.dump({"version": 1, "waiters": {}, "bookings": {"b": {
                    "pid": holder.pid, "start": start_time(holder.pid), "label": "big", "booked": big,
                    "cgroup": ""}}}, f)
            env = dict(os.environ, SWARMGATE_STATE_DIR=state, CLAUDE_PROJECT_DIR=repo,
                       SWARMGATE_HOSTS_CONFIG=os.path.join(tmp, "none.toml"))
            try:
                cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-resources", "--json", "--host", "here",
                                     "--", "true"], env=env, cwd=repo, capture_output=True, text=True, timeout=60)
            except subprocess.TimeoutExpired:
                return broken("host-resources did not answer within 60 s")
            try:
                rep = json.loads(cp.stdout)
                host, verdict = rep["hosts"][0], rep["verdicts"][0]
                mem, booked, available = int(host["mem_available"]), int(host["booked_not_grown"]), \
                    int(verdict["available"])
            except (ValueError, KeyError, IndexError, TypeError):
                return broken(f"host-resources exit {cp.returncode} without a report: {cp.stderr.strip()[-200:]}")
            if booked != big:
                return broken(f"the report did not read the booking ({booked} booked not grown)")
            if available == mem - big:
                return green("MemAvailable less the booking")
            if available == mem:
                return red("the booking was not subtracted")
            return broken(f"available {available} is neither MemAvailable {mem} nor it less the booking")
    finally:
        holder.kill()
        holder.wait()


def selftest_suite():
    from swarmgate.selftest import Cell, Suite
    return Suite("host-resources", [Cell("booked-not-grown-subtracted", _cell_bookings_subtracted)],
                 {"no-booking-subtraction": ["booked-not-grown-subtracted"]})


if __name__ == "__main__":
    sys.exit(main())
