"""OOM kills from the kernel log: parse `dmesg` / `journalctl -k` output (pure) and read it
(bounded in time, best effort).

Line shapes (recorded on these machines, see tests/hooks/fixtures/):

    [Sun Nov 29 12:13:26 2026] oom-kill:constraint=CONSTRAINT_MEMCG,...,oom_memcg=/P,task_memcg=/P/A,task=python3,pid=15282,uid=0
    [Sun Nov 29 12:13:26 2026] Memory cgroup out of memory: Killed process 15282 (python3) total-vm:..kB, anon-rss:..kB, ...
    [  855.941954] oom-kill:...                                  (dmesg without -T: seconds since boot)
    2026-11-29T02:11:45+0000 host kernel: Out of memory: Killed process 7313 (cc1plus) ...   (journalctl -k -o short-iso)
    Nov 29 02:11:45 host kernel: ...                              (journalctl -k, default format)

Whole-machine OOM: the kill line says "Out of memory: Killed process" (not
"Memory cgroup out of memory"), and the oom-kill summary has ``global_oom`` or
``oom_memcg=/``. Cgroup-limited: "Memory cgroup out of memory", or
``oom_memcg=/some/path``; when oom_memcg differs from task_memcg, the limit hit
was an ancestor's (a shared parent full), not the task's own cgroup.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from types import ModuleType


MACHINE = "machine"
CGROUP = "cgroup"
_MONTHS = {m: i + 1 for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
                                           "Oct", "Nov", "Dec"))}


class OomKill:
    __slots__ = ("time", "pid", "name", "kind", "oom_memcg", "task_memcg", "anon_rss_kb", "line")

    def __init__(self, time: float | None, pid: int, name: str, kind: str, oom_memcg: str = "",
                 task_memcg: str = "", anon_rss_kb: int | None = None, line: str = "") -> None:
        self.time = time
        self.pid = pid
        self.name = name
        self.kind = kind
        self.oom_memcg = oom_memcg
        self.task_memcg = task_memcg
        self.anon_rss_kb = anon_rss_kb
        self.line = line

    def __repr__(self) -> str:
        return f"OomKill({self.kind}, pid={self.pid}, {self.name!r}, memcg={self.oom_memcg!r}, t={self.time})"


def _re() -> ModuleType:
    import re
    return re


def split_stamp(line: str, boot_time: float | None, now: float) -> tuple[float | None, str]:
    """(epoch seconds or None, message) of one kernel log line in any supported format."""
    import time as _t

    re = _re()
    s = line.rstrip("\n")
    m = re.match(r"\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\] ?(.*)$", s)
    if m:
        try:
            return _t.mktime(_t.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")), m.group(2)
        except ValueError:
            return None, m.group(2)
    m = re.match(r"\[\s*(\d+\.\d+)\] ?(.*)$", s)
    if m:
        return ((boot_time + float(m.group(1))) if boot_time is not None else None), m.group(2)
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) \S+ kernel: ?(.*)$", s)
    if m:
        from datetime import datetime
        try:
            stamp = m.group(1).replace(",", ".").replace("Z", "+00:00")
            dt = datetime.fromisoformat(stamp)
            return (dt.timestamp() if dt.tzinfo else _t.mktime(dt.timetuple())), m.group(2)
        except ValueError:
            return None, m.group(2)
    m = re.match(r"(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) \S+ kernel: ?(.*)$", s)
    if m and m.group(1) in _MONTHS:
        year = _t.localtime(now).tm_year
        tt = (year, _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
              0, 0, -1)
        t = _t.mktime(tt)
        if t > now + 86400:  # a December line read in January
            t = _t.mktime((year - 1,) + tt[1:])
        return t, m.group(6)
    return None, s


def parse(text: str, *, now: float, boot_time: float | None = None) -> list:
    """Every OOM kill in ``text`` (oldest first); a kill seen as both the summary and the
    "Killed process" line is one entry."""
    from swarmgate.hosts.kernel_log import oom_summary

    re = _re()
    kills: list[OomKill] = []
    summary: dict = {}  # pid -> (time, fields)
    by_pid: dict = {}
    for line in text.splitlines():
        if "oom-kill:" not in line and "Killed process" not in line:
            continue
        t, msg = split_stamp(line, boot_time, now)
        fields = oom_summary(msg)
        if fields is not None:
            try:
                pid = int(fields.get("pid") or 0)
            except (TypeError, ValueError):
                continue
            summary[pid] = (t, fields)
            k = by_pid.get(pid)
            if k is not None and (k.time is None or t is None or abs(k.time - t) < 120):
                _apply(k, fields)
            continue
        m = re.search(r"(Memory cgroup out of memory|Out of memory)(?: \(oom_kill_allocating_task\))?: "
                      r"Killed process (\d+) \((.*?)\)(?:.*?anon-rss:(\d+)kB)?", msg)
        if not m:
            continue
        pid = int(m.group(2))
        kind = CGROUP if m.group(1).startswith("Memory cgroup") else MACHINE
        k = OomKill(t, pid, m.group(3), kind, anon_rss_kb=int(m.group(4)) if m.group(4) else None,
                    line=line.strip())
        prev = summary.get(pid)
        if prev is not None and (prev[0] is None or t is None or abs(prev[0] - t) < 120):
            _apply(k, prev[1])
        kills.append(k)
        by_pid[pid] = k
    # summaries whose "Killed process" line is missing (victim already exiting, log cut)
    for pid, (t, fields) in summary.items():
        if pid in by_pid:
            continue
        k = OomKill(t, pid, str(fields.get("task") or "?"), MACHINE)
        _apply(k, fields)
        kills.append(k)
    kills.sort(key=lambda k: k.time or 0.0)
    return kills


def _apply(k: OomKill, fields: dict) -> None:
    memcg = fields.get("oom_memcg")
    k.oom_memcg = memcg if isinstance(memcg, str) else ""
    tm = fields.get("task_memcg")
    k.task_memcg = tm if isinstance(tm, str) else ""
    if fields.get("global_oom") is True or k.oom_memcg == "/" or fields.get("constraint") == "CONSTRAINT_NONE":
        k.kind = MACHINE
    elif k.oom_memcg:
        k.kind = CGROUP


def recent(kills: list, now: float, hours: float = 12.0) -> list:
    """Kills of the last ``hours`` (kills without a time are kept: better shown than lost)."""
    lo = now - hours * 3600
    return [k for k in kills if k.time is None or lo <= k.time <= now + 300]


def boot_time() -> float | None:
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def read_live(timeout: float = 3.0) -> tuple[str, str]:
    """(kernel log text, where it came from); ("", why not) when neither source answers."""
    import subprocess

    tries = (
        (["journalctl", "-k", "--since", "-12h", "-o", "short-iso", "--no-pager", "-q"], "journalctl -k"),
        (["dmesg", "-T"], "dmesg -T"),
        (["dmesg"], "dmesg"),
    )
    why = []
    for argv, label in tries:
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, errors="replace")
        except FileNotFoundError:
            why.append(f"{label}: not installed")
            continue
        except subprocess.TimeoutExpired:
            why.append(f"{label}: no answer in {timeout:.0f}s")
            continue
        out = p.stdout
        if p.returncode != 0 or not out.strip() or out.strip().startswith("-- No entries --"):
            why.append(f"{label}: {(p.stderr.strip().splitlines() or ['no entries'])[0][:80]}")
            continue
        return out, label
    return "", "; ".join(why)


def describe(k: OomKill) -> str:
    import time as _t

    when = _t.strftime("%m-%d %H:%M:%S", _t.localtime(k.time)) if k.time else "time unknown"
    from swarmgate.sizes import human
    rss = f", anon-rss {human(k.anon_rss_kb * 1024)}" if k.anon_rss_kb else ""
    where = ""
    if k.kind == CGROUP and k.oom_memcg:
        where = f" in {k.oom_memcg}"
        if k.task_memcg and k.task_memcg != k.oom_memcg:
            where += f" (the limit of a parent was hit; the task was in {k.task_memcg})"
    return f"{when} {k.name} (pid {k.pid}){where}{rss}"
