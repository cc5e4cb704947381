"""host-dispatch: choose where a command runs and with what cap; never let any machine OOM (SPEC §5.3).

    host-dispatch [--gpu] [--mem SIZE] [--expect-duration SEC] [--label KEY] [--wait SEC]
                  [--backend local|slurm] [--dry-run] -- COMMAND...

0 244 when the expected duration (history, or --expect-duration) exceeds 2 h and
  the job would run on one machine, unless its script declares itself long
  (`# long-job: sharded=... resume=... multi-host=...` in its header);
1 hosts: this one always, then the peers of hosts.toml when the across-machines
  switch is on;
2 prediction: the history peak; a label that hit its ceiling → its cap × 1.5; no
  history → --mem or [memory] default_prediction. Cap = prediction × 1.5;
3 the first host where it fits now wins: its need plus the memory margin
  ([memory] margin: what must stay free for everything outside the capped
  runs) within the free memory (MemAvailable − booked-not-yet-grown − this
  dispatcher's own placements of the last 30 s), its need within the room
  under the host's total for capped runs (here: the slice; a peer: its
  machine memory − margin − what its runner's bookings hold), and with --gpu
  its GPU memory within the cards' (less the GPU margin and the GPU memory of
  placements of the last 30 s); none now → wait; larger than every host ever
  → 241 at once;
4 launch: here through run-with-memory-cap, on a peer through multi-host-run,
  with --gpu inside gpu-quiesce-run; --backend slurm submits through srun.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from swarmgate.break_switch import broken
from swarmgate.cell_outcome import by_exit, protected
from swarmgate.config import ConfigError, load_config
from swarmgate.exit_codes import Exit
from swarmgate.front_door import entry
from swarmgate.host_defaults import margin, thread_default
from swarmgate.hosts import history, ledger
from swarmgate.hosts.host_resources import gather, judge
from swarmgate.hosts.slurm_accounting import Sampler, from_sacct, job_runtime
from swarmgate.hosts.tool_cli import parser, preamble, split_command
from swarmgate.hosts_config import load_hosts_config
from swarmgate.selftest import Cell, Suite
from swarmgate.sizes import human, parse_size
from swarmgate.state_paths import dispatch_pending_path
from swarmgate.statefile import StateError, locked, read_json, write_json_atomic

GPU_MIB_DEFAULT = 1024


def say(msg: str) -> None:
    print(f"host-dispatch: {msg}", file=sys.stderr, flush=True)


# --- pure parts ---

class Prediction:
    __slots__ = ("need", "cap", "basis", "duration")

    def __init__(self, need: int, cap: int, basis: str, duration: float | None) -> None:
        self.need, self.cap, self.basis, self.duration = need, cap, basis, duration


def predict(hist: dict | None, mem: int | None, default: int) -> Prediction:
    """History peak; ceiling hit → cap × 1.5; else --mem or the default. Cap = need × 1.5."""
    duration = (hist or {}).get("duration_s")
    if hist and (hist.get("ceiling_hit") or hist.get("pushed_out")) and hist.get("cap"):
        need = int(hist["cap"] * 1.5)
        basis = f"hit its ceiling before: cap {human(hist['cap'])} × 1.5"
    elif hist and hist.get("peak"):
        need = int(hist["peak"])
        basis = f"history peak {human(need)}"
    elif mem:
        need, basis = int(mem), f"caller's estimate {human(mem)}"
    else:
        need, basis = int(default), f"no history: default {human(default)}"
    return Prediction(need, int(need * 1.5), basis, duration)


def long_job_declared(command: list[str], cwd: str) -> bool:
    """True when the command's script declares `# long-job: sharded=... resume=... multi-host=...`."""
    for word in command[:3]:
        path = word if os.path.isabs(word) else os.path.join(cwd, word)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                head = f.read(8192).decode(errors="replace")
        except OSError:
            continue
        for line in head.splitlines()[:40]:
            line = line.strip()
            if line.startswith("# long-job:"):
                fields = dict(p.split("=", 1) for p in line[len("# long-job:"):].split() if "=" in p)
                if all(fields.get(k) for k in ("sharded", "resume", "multi-host")):
                    return True
    return False


def held(report: dict) -> int:
    """What the host's runner bookings hold now: each run's booking, or its use when it grew past it."""
    return sum(max(int(b.get("booked") or 0), int(b.get("used") or 0)) for b in report.get("bookings") or []
               if isinstance(b, dict))


def judge_host(report: dict, v: dict, pred: Prediction, gpu: bool, pending: int, peer: dict | None,
               total_here: int | None, margin: int, gpu_margin_mib: int, gpu_need_mib: int,
               pending_gpu_mib: int = 0) -> dict:
    """Pure: {fits, never, cap, why} for one host (seed 003 §2.4 judge_host).

    free = MemAvailable − booked-not-grown (``v["available"]``) − ``pending`` (this dispatcher's
    placements of the last 30 s); the run fits when need + ``margin`` ≤ free and need ≤ room, room
    being the slice's room here, and on a peer (whose slice is not read) its total for capped runs
    (memory − margin) less what its runner's bookings already hold. Never: need > that total, or
    need + margin > the machine's memory. GPU: the cards' memory (free once quiesced, else total)
    less the GPU margin and the GPU memory placed in the last 30 s.
    """

    if not v.get("readable"):
        return {"fits": False, "never": False, "cap": pred.cap, "why": v["verdict"]}
    cap = pred.cap
    if peer is not None and peer.get("max_cap"):
        if pred.need > peer["max_cap"]:
            return {"fits": False, "never": True, "cap": cap,
                    "why": f"needs {human(pred.need)}, above the peer's max_cap {human(peer['max_cap'])}"}
        cap = min(cap, peer["max_cap"])
    if broken("dispatch-ignore-margin"):
        margin = 0
    mem_total = int(report.get("mem_total", 0))
    slice_total = total_here if total_here else max(mem_total - margin, 0)
    sl = report.get("slice")
    if sl and sl.get("limit"):
        slice_total = sl["limit"]
    free = int(v["available"]) - pending
    if v["slice_room"] is not None:
        room = v["slice_room"] - pending
    else:
        room = slice_total - (0 if broken("dispatch-ignore-peer-use") else held(report)) - pending
    never = pred.need > slice_total or pred.need + margin > mem_total
    fits = not never and pred.need + margin <= free and pred.need <= room
    why = []
    if never:
        why.append(f"needs {human(pred.need)} (+ margin {human(margin)}), more than its whole budget "
                   f"({human(slice_total)} for capped runs, {human(mem_total)} memory)")
    elif not fits:
        why.append(f"needs {human(pred.need)} + margin {human(margin)}; {human(max(free, 0))} free, "
                   f"{human(max(room, 0))} room now")
    if gpu:
        cards = report.get("gpus") or []
        if not cards:
            fits, never = False, True
            why.append("no GPU")
        else:
            quiesced = int(report.get("quiesce_holders", 0)) > 0
            avail = sum((c["free_mib"] if quiesced else c["total_mib"]) for c in cards) - gpu_margin_mib
            avail -= pending_gpu_mib
            if gpu_need_mib > avail:
                fits = False
                why.append(f"GPU: needs {gpu_need_mib} MiB, {avail} MiB available"
                           + (f" ({pending_gpu_mib} MiB placed in the last seconds)" if pending_gpu_mib else ""))
    return {"fits": fits, "never": never, "cap": cap, "why": "; ".join(why) or "fits"}


# --- the pending ledger: placements of the last 30 s ---

def pending_for(host: str, window: float) -> tuple[int, int]:
    """(memory bytes, GPU MiB) this dispatcher placed on ``host`` in the last ``window`` seconds."""
    data = read_json(dispatch_pending_path(), {"placed": []})
    now = time.time()
    recent = [p for p in data.get("placed", []) if isinstance(p, dict) and p.get("host") == host
              and now - float(p.get("time", 0)) < window]
    return sum(int(p.get("bytes", 0)) for p in recent), sum(int(p.get("gpu_mib", 0)) for p in recent)


def add_pending(host: str, nbytes: int, label: str, window: float, gpu_mib: int = 0) -> None:
    path = dispatch_pending_path()
    with locked(path.with_name(path.name + ".lock")):
        data = read_json(path, {"placed": []})
        now = time.time()
        placed = [p for p in data.get("placed", []) if isinstance(p, dict) and now - float(p.get("time", 0)) < window]
        placed.append({"host": host, "bytes": nbytes, "gpu_mib": gpu_mib, "label": label, "time": now,
                       "pid": os.getpid()})
        write_json_atomic(path, {"placed": placed})


# --- launch lines ---

def launch_argv(host: str, cap: int, label: str, command: list[str], gpu: bool, bindir: str) -> list[str]:
    def tool(name: str) -> str:
        p = os.path.join(bindir, name)
        return p if os.path.exists(p) else name
    cap_s = human(cap).replace(".0", "")
    if host == "here":
        inner = [tool("run-with-memory-cap"), cap_s, "--label", label, "--", *command]
        return [tool("gpu-quiesce-run"), "--", *inner] if gpu else inner
    inner = ["gpu-quiesce-run", "--", *command] if gpu else command
    return [tool("multi-host-run"), "--peer", host, "--memory-cap", cap_s, "--label", label, "--", *inner]


def slurm_argv(cap: int, threads: int, gpus: int, time_limit: str, partition: str, label: str,
               command: list[str]) -> list[str]:
    argv = ["srun", f"--mem={max(cap >> 20, 1)}M", f"--cpus-per-task={threads}", f"--time={time_limit}",
            f"--job-name={label[:60]}"]
    if gpus:
        argv.append(f"--gres=gpu:{gpus}")
    if partition:
        argv.append(f"--partition={partition}")
    return argv + ["--", *command]


@entry("host-dispatch")
def main(argv: Sequence[str] | None = None) -> int:

    argv, command = split_command(argv)
    p = parser("host-dispatch", __doc__)
    p.add_argument("--gpu", action="store_true", help="the command needs GPUs (runs inside gpu-quiesce-run)")
    p.add_argument("--gpu-mem", type=int, default=GPU_MIB_DEFAULT, metavar="MIB", help="GPU memory it needs")
    p.add_argument("--mem", help="your estimate of its memory, used when there is no history")
    p.add_argument("--expect-duration", type=float, metavar="SEC", help="your estimate, used when there is no history")
    p.add_argument("--label", help="history key (default: the command)")
    p.add_argument("--wait", type=float, default=3600.0, help="seconds to wait for a host (default 3600)")
    p.add_argument("--backend", choices=("local", "slurm"), help="local hosts (default) or a Slurm cluster")
    p.add_argument("--dry-run", action="store_true", help="print the placement and the command, run nothing")
    args = p.parse_args(argv)
    stop = preamble(args, "host-dispatch", say, command)
    if stop is not None:
        return stop
    try:
        config = load_config()
        hosts = load_hosts_config(args.hosts_config)
        mem = parse_size(args.mem) if args.mem else None
    except (ConfigError, ValueError) as e:
        say(str(e))
        return Exit.USAGE

    label = args.label or history.normalise(command)
    hist = history.entry(history.load(report=lambda m: None), label)
    pred = predict(hist, mem, int(config["memory"]["default_prediction"]))
    dispatch_cfg = hosts["dispatch"]
    duration = pred.duration or args.expect_duration
    if duration and duration > dispatch_cfg["long_job_seconds"] and not broken("no-long-job-check"):
        if not long_job_declared(command, os.getcwd()):
            say(f"expected to run {duration / 3600:.1f} h (> {dispatch_cfg['long_job_seconds'] / 3600:g} h) on one "
                f"machine: shard it across machines, or declare it in its script header: "
                f"`# long-job: sharded=<how> resume=<how> multi-host=<how>`")
            return Exit.LONG_JOB
    backend = args.backend or dispatch_cfg["backend"]
    bindir = os.path.dirname(sys.executable)
    if backend == "slurm":
        return run_slurm(args, config, hosts, pred, label, command)

    window = float(dispatch_cfg["pending_seconds"])
    deadline = time.monotonic() + args.wait
    say(f"{label!r}: predicted {human(pred.need)} ({pred.basis}), cap {human(pred.cap)}")
    announced = False
    while True:
        reports = gather(config, hosts, include_peers=hosts["across_machines"]["enabled"])
        choices = []
        for r in reports:
            v = judge(r, pred.need, thread_default(config), args.gpu)
            peer = hosts.peers.get(r["name"]) if r["name"] != "here" else None
            total_here = config["memory"]["total"] if r["name"] == "here" else None
            pending, pending_gpu = (0, 0) if broken("no-pending-ledger") else pending_for(r["name"], window)
            j = judge_host(r, v, pred, args.gpu, pending, peer, total_here,
                           margin(config, int(r.get("mem_total") or 0)) if "error" not in r else 0,
                           int(dispatch_cfg["gpu_margin_mib"]), args.gpu_mem if args.gpu else 0, pending_gpu)
            choices.append((r["name"], j))
        chosen = next(((n, j) for n, j in choices if j["fits"]), None)
        if chosen:
            break
        if all(j["never"] for _, j in choices):
            say("fits on no host, ever: " + "; ".join(f"{n}: {j['why']}" for n, j in choices) +
                ". Shrink the job or split it.")
            return Exit.FITS_NOWHERE
        if time.monotonic() >= deadline:
            say("no host had room within the wait: " + "; ".join(f"{n}: {j['why']}" for n, j in choices))
            return Exit.NO_TURN
        if not announced:
            say("no host has room now, waiting: " + "; ".join(f"{n}: {j['why']}" for n, j in choices))
            announced = True
        time.sleep(min(10.0, max(deadline - time.monotonic(), 0.1)))
    host, j = chosen
    line = launch_argv(host, j["cap"], label, command, args.gpu, bindir)
    say(f"placing on {host} with cap {human(j['cap'])}: {shlex.join(line)}")
    if args.dry_run:
        print(shlex.join(line))
        return 0
    add_pending(host, pred.need, label, window, args.gpu_mem if args.gpu else 0)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(line[0], line)
    except OSError as e:
        say(f"cannot start {line[0]}: {e.strerror}")
        return Exit.USAGE
    return 0  # not reached


SLURM_STATES = {"OUT_OF_MEMORY": Exit.OWN_CAP, "TIMEOUT": Exit.TIMEOUT}


def run_slurm(args, config, hosts, pred: Prediction, label: str, command: list[str]) -> int:
    """Submit through srun; map Slurm's OUT_OF_MEMORY / TIMEOUT to 250 / 253; record the job's peak and
    duration in the history table (hosts/slurm_accounting.py says where they come from)."""


    s = hosts["slurm"]
    job_name = f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', label).strip('-.')[:40] or 'job'}-{os.urandom(4).hex()}"
    argv = slurm_argv(pred.cap, thread_default(config), 1 if args.gpu else 0, s["time_limit"],
                      s["partition"], job_name, command)
    say(f"submitting to Slurm: {shlex.join(argv)}")
    if args.dry_run:
        print(shlex.join(argv))
        return 0
    started = time.time()
    with Sampler(lambda: slurm_job(job_name).get("JobId")) as sampler:
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
        err_lines = []
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line)
            sys.stderr.write(line)
        rc = proc.wait()
    fields = slurm_job(job_name)
    deadline = time.monotonic() + 10
    while fields.get("JobState") in (None, "RUNNING", "COMPLETING", "PENDING", "CONFIGURING") \
            and time.monotonic() < deadline:
        time.sleep(0.2)  # the controller records the final state a moment after srun returns
        fields = slurm_job(job_name)
    job, state = fields.get("JobId"), fields.get("JobState")
    if state in SLURM_STATES:
        code = int(SLURM_STATES[state])
        say(f"Slurm job {job} ended {state}: exit {code}")
    elif rc != 0 and any("Out Of Memory" in line or "oom-kill" in line.lower() for line in err_lines):
        code = int(Exit.OWN_CAP)
        say(f"Slurm job {job or job_name} ran out of memory (srun said so): exit {code}")
    else:
        code = rc
    record_slurm_job(label, job, fields, sampler, pred.cap, code, started)
    return code


def record_slurm_job(label: str, job: str | None, fields: dict, sampler, cap: int, code: int,
                     started: float) -> None:
    """The job's peak and duration into the history table and the runs log (never fails the job)."""

    peak, elapsed, why = from_sacct(job) if job else (None, None, "no job id")
    source = "sacct"
    if why:
        peak, elapsed = sampler.peak, job_runtime(fields)
        source = f"sstat ({sampler.samples} sample(s)) and scontrol RunTime, because {why}"
    if elapsed is None:
        elapsed = time.time() - started
    named = {int(Exit.OWN_CAP): "own_cap", int(Exit.TIMEOUT): "timeout"}
    outcome = named.get(code) or ("ok" if code == 0 else "failed")
    try:
        with ledger.lock(timeout=30):
            hist = history.load()
            history.record(hist, label, peak=peak, duration_s=elapsed, outcome=outcome, basis="cap", cap=cap)
            history.save(hist)
    except (StateError, OSError) as e:
        say(f"could not record the job in the history ({e})")
        return
    ledger.log_run({"label": label, "session": ledger.session_of(), "backend": "slurm", "job": job, "cap": cap,
                    "booked": cap, "basis": "cap", "peak": peak, "exit": code, "outcome": outcome,
                    "started": round(started, 3), "ended": round(time.time(), 3),
                    "duration_s": round(elapsed, 3)})
    say(f"history {label!r}: peak {human(peak) if peak else 'unknown'}, {elapsed:.1f}s, {outcome} (from {source})")


def slurm_job(job_name: str) -> dict:
    """`scontrol -o show job` fields of the newest job with this name ({} when none)."""
    try:
        cp = subprocess.run(["scontrol", "-o", "show", "job"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict = {}
    for line in cp.stdout.splitlines():
        fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if fields.get("JobName") == job_name:
            found = fields
    return found


if __name__ == "__main__":
    sys.exit(main())


# --- self-test ---

def _selftest_dispatch(extra_setup=None, args=()) -> tuple[int | None, str]:
    """(exit code or None on a timeout, output) of a dry-run dispatch in a temp repository."""

    with tempfile.TemporaryDirectory(prefix="swarmgate-hd-") as tmp:
        os.makedirs(os.path.join(tmp, ".claude"))
        with open(os.path.join(tmp, ".claude", "swarmgate.toml"), "w") as f:
            f.write('[memory]\ntotal = "1G"\nmargin = "64M"\nslice = "swarmgate-selftest-hd"\n')
        with open(os.path.join(tmp, "hosts.toml"), "w") as f:
            f.write("")
        env = dict(os.environ, SWARMGATE_STATE_DIR=os.path.join(tmp, "state"),
                   SWARMGATE_HOSTS_CONFIG=os.path.join(tmp, "hosts.toml"))
        if extra_setup:
            extra_setup(env)
        try:
            cp = subprocess.run([sys.executable, "-m", "swarmgate", "host-dispatch", "--dry-run", *args],
                                cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, ""
        return cp.returncode, cp.stdout + cp.stderr


def _cell_long_job():
    """A 10000 s job on one machine: 244 (refused), or 0 (placed: the check is off)."""
    code, out = _selftest_dispatch(args=("--mem", "64M", "--expect-duration", "10000", "--", "sh", "job.sh"))
    return by_exit(code, Exit.LONG_JOB, 0, "host-dispatch --dry-run of a long job", out)


def _cell_pending_counts():
    def fill(env):
        old = os.environ.get("SWARMGATE_STATE_DIR")
        os.environ["SWARMGATE_STATE_DIR"] = env["SWARMGATE_STATE_DIR"]
        try:
            add_pending("here", 900 << 20, "earlier", 30)
        finally:
            if old is None:
                os.environ.pop("SWARMGATE_STATE_DIR", None)
            else:
                os.environ["SWARMGATE_STATE_DIR"] = old
    code, out = _selftest_dispatch(fill, ("--mem", "300M", "--wait", "0", "--", "true"))
    return by_exit(code, Exit.NO_TURN, 0, "host-dispatch with 900M placed 30 s ago", out)


def selftest_suite():
    return Suite("host-dispatch",
                 [Cell("long-job-on-one-machine-refused", _cell_long_job),
                  Cell("recent-placements-count-against-host", _cell_pending_counts),
                  Cell("margin-kept-free", _cell_margin_kept),
                  Cell("peer-runs-count-against-its-room", _cell_peer_use)],
                 {"no-long-job-check": ["long-job-on-one-machine-refused"],
                  "no-pending-ledger": ["recent-placements-count-against-host"],
                  "dispatch-ignore-margin": ["margin-kept-free"],
                  "dispatch-ignore-peer-use": ["peer-runs-count-against-its-room"]})


def _cell_margin_kept():
    """10G free, a 4G job and an 8G margin: it must not be placed (pure judgement)."""
    g = 1 << 30
    rep = {"name": "p", "mem_total": 64 * g, "slice": None, "bookings": []}
    v = {"readable": True, "available": 10 * g, "slice_room": None, "verdict": ""}
    fits = judge_host(rep, v, Prediction(4 * g, 6 * g, "x", None), False, 0, None, None, 8 * g, 0, 0)["fits"]
    return protected(not fits, "a 4G job placed on 10G free with an 8G margin")


def _cell_peer_use():
    """A peer with a 56G total whose runs hold 54G has no room for a 4G job (pure judgement)."""
    g = 1 << 30
    rep = {"name": "p", "mem_total": 64 * g, "slice": None, "bookings": [{"booked": 50 * g, "used": 54 * g}]}
    v = {"readable": True, "available": 60 * g, "slice_room": None, "verdict": ""}
    fits = judge_host(rep, v, Prediction(4 * g, 6 * g, "x", None), False, 0, {}, None, 8 * g, 0, 0)["fits"]
    return protected(not fits, "a 4G job placed on a peer whose runs hold 54G of 56G")
