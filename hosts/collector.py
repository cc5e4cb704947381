"""The host collector: what one machine has free right now (SPEC §5.2).

Stdlib only (pynvml optional) and self-contained: host-resources runs it here
in-process, and sends this file's source to a peer over ssh (`python3 -`), so
nothing needs to be installed there. Input (argv[1] as JSON when run as a
script): {"state_dir": ..., "slice": ..., "yield_names": [...]}. Output: one
JSON object on stdout.

GPUs are read through pynvml; that module is the seam tests replace (a fake
pynvml on PYTHONPATH), never our logic.
"""
import json
import os
import sys
import time

CG_V1 = "/sys/fs/cgroup/memory"
CG_V2 = "/sys/fs/cgroup"


def _read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def meminfo():
    out = {}
    for line in (_read("/proc/meminfo", "") or "").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out


def _cpu_sample():
    fields = (_read("/proc/stat", "cpu 0 0 0 0") or "cpu 0 0 0 0").splitlines()[0].split()[1:]
    v = [int(x) for x in fields]
    return [sum(v), v[3] + (v[4] if len(v) > 4 else 0)]


def cpu_busy(interval=0.25, snapshot=None):
    """Cores in use.

    With ``snapshot`` (a file shared by callers on this host) the report never
    sleeps: the delta against the previous caller's /proc/stat sample (0.5-60 s
    old) is used; a sample younger than 0.5 s reuses the figure computed then;
    with no usable sample the 1-minute load average (capped at the core count)
    stands in, and this call's sample serves the next one. Without a snapshot
    file: sample over ``interval``.
    """
    b = _cpu_sample()
    cores = os.cpu_count() or 1
    if not snapshot:
        time.sleep(interval)
        return _busy(b, _cpu_sample(), cores)
    now = time.time()
    old = None
    try:
        with open(snapshot) as f:
            old = json.load(f)
        age = now - float(old["t"])
    except (OSError, ValueError, KeyError, TypeError):
        old, age = None, None
    if old is not None and age is not None and 0 <= age < 0.5 and isinstance(old.get("busy"), (int, float)):
        return old["busy"]  # a fresh figure from a moment ago; keep the older sample as the base
    if old is not None and age is not None and 0.5 <= age <= 60:
        busy = _busy(old["s"], b, cores)
    else:
        busy = round(min(os.getloadavg()[0], float(cores)), 2)
    try:
        tmp = f"{snapshot}.{os.getpid()}.tmp"
        os.makedirs(os.path.dirname(snapshot), exist_ok=True)
        with open(tmp, "w") as f:
            json.dump({"t": now, "s": b, "busy": busy}, f)
        os.replace(tmp, snapshot)
    except OSError:
        pass
    return busy


def _busy(a, b, cores):
    total, idle = b[0] - a[0], b[1] - a[1]
    return round((total - idle) / total * cores, 2) if total > 0 else 0.0


def _cg_file(cg, v1, v2):
    for d, name in ((os.path.join(CG_V1, cg.strip("/")), v1), (os.path.join(CG_V2, cg.strip("/")), v2)):
        text = _read(os.path.join(d, name))
        if text is not None:
            return text
    return None


def _cg_int(cg, v1, v2):
    text = _cg_file(cg, v1, v2)
    try:
        return int(text.strip()) if text and text.strip() != "max" else None
    except ValueError:
        return None


def slice_state(slice_name):
    """The runner's parent cgroup: limit, usage, reclaimable page cache (v1 or v2)."""
    if not slice_name:
        return None
    for cg in (slice_name, slice_name + ".slice"):
        usage = _cg_int(cg, "memory.usage_in_bytes", "memory.current")
        if usage is None:
            continue
        limit = _cg_int(cg, "memory.limit_in_bytes", "memory.max")
        stat = {}
        for line in (_cg_file(cg, "memory.stat", "memory.stat") or "").splitlines():
            k, _, v = line.partition(" ")
            if v.strip().isdigit():
                stat[k] = int(v)
        reclaimable = stat.get("total_inactive_file", stat.get("inactive_file", 0))
        if limit is not None and limit >= 1 << 60:
            limit = None
        return {"cgroup": cg, "limit": limit, "usage": usage, "reclaimable": reclaimable}
    return None


def bookings(state_dir):
    """Running bookings of the runner's ledger with their current use (tolerant of format and corruption)."""
    text = _read(os.path.join(state_dir, "runner", "ledger.json"))
    if not text:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    items = data.get("bookings", data) if isinstance(data, dict) else data
    if isinstance(items, dict):
        items = list(items.values())
    out = []
    for b in items if isinstance(items, list) else []:
        if not isinstance(b, dict):
            continue
        booked = b.get("booked") or b.get("booked_bytes") or 0
        cg = b.get("cgroup") or b.get("cgroup_path") or ""
        used = None
        if cg:
            rel = cg
            for root in (CG_V1, CG_V2):
                if rel.startswith(root):
                    rel = rel[len(root):]
            used = _cg_int(rel, "memory.usage_in_bytes", "memory.current")
        pid = b.get("pid")
        if pid and not os.path.exists(f"/proc/{pid}"):
            continue
        out.append({"label": b.get("label", ""), "booked": int(booked), "used": int(used or 0)})
    return out


def driver_visible():
    """Cheap check before importing pynvml (20-60 ms): is an NVIDIA driver loaded here?"""
    if os.environ.get("SWARMGATE_NVML_PROBE") == "force":
        return True  # containers that hide /proc/driver/nvidia; tests with a fake pynvml
    return os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidiactl")


def gpus(yield_names):
    """Per GPU: total, free, compute processes; a yield service's share without its name."""
    if not driver_visible():
        return None, "no GPU (no NVIDIA driver loaded)"
    try:
        import pynvml
    except ImportError:
        return None, "no GPU (pynvml not installed)"
    try:
        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 - no driver is "no GPU", not an error
        return None, f"no GPU ({type(e).__name__})"
    cards = []
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            name = pynvml.nvmlDeviceGetName(h)
            if isinstance(name, bytes):
                name = name.decode(errors="replace")
            procs, yield_mib = [], 0
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h) or []:
                used = int((getattr(p, "usedGpuMemory", 0) or 0) // (1 << 20))
                comm = (_read(f"/proc/{p.pid}/comm", "") or "").strip()
                if comm and comm in yield_names:
                    yield_mib += used
                else:
                    procs.append({"pid": p.pid, "name": comm or "?", "used_mib": used})
            cards.append({"index": i, "name": name, "total_mib": int(mem.total // (1 << 20)),
                          "free_mib": int(mem.free // (1 << 20)), "processes": procs,
                          "yield_service_mib": yield_mib})
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return cards, None


def collect(opts):
    t0 = time.monotonic()
    mem = meminfo()
    state_dir = opts.get("state_dir") or "/var/tmp/swarmgate"
    books = bookings(state_dir)
    not_grown = sum(max(b["booked"] - b["used"], 0) for b in books)
    sl = slice_state(opts.get("slice"))
    cards, gpu_note = gpus(set(opts.get("yield_names") or []))
    load = os.getloadavg()
    quiesce = os.path.join(state_dir, "gpu")
    try:
        holders = len([n for n in os.listdir(quiesce) if n[:1].isdigit()])
    except OSError:
        holders = 0
    return {
        "host": os.uname().nodename,
        "cores": os.cpu_count() or 1,
        "cores_in_use": cpu_busy(opts.get("cpu_interval", 0.25),
                                 os.path.join(state_dir, "host", "cpu-snapshot.json")
                                 if opts.get("cpu_snapshot", True) else None),
        "load": [round(x, 2) for x in load],
        "mem_total": mem.get("MemTotal", 0),
        "mem_available": mem.get("MemAvailable", 0),
        "booked_not_grown": not_grown,
        "bookings": books,
        "slice": sl,
        "gpus": cards,
        "gpu_note": gpu_note,
        "quiesce_holders": holders,
        "elapsed_s": round(time.monotonic() - t0, 3),
    }


if __name__ == "__main__":
    options = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    sys.stdout.write(json.dumps(collect(options)) + "\n")
