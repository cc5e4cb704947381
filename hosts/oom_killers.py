"""Who killed a run when the kernel's OOM killer did not: earlyoom or systemd-oomd.

Both act on the machine's memory pressure, not on the run's own cap. A run they kill was pushed out
by others, so the runner ends it with 254 (SPEC §9: "pushed out by the total: not its fault, rerun";
the machine is the outermost total) and a line naming the killer and its own words, never a bare
137/143. Looked for only when a run ended badly without a kernel OOM kill and without the wrapper
stopping it (a signal to the wrapper, --timeout), so a normal run pays nothing.

- systemd-oomd (and Meta's oomd) marks a cgroup it is about to kill with the xattr
  ``user.oomd_ooms`` (a count), then SIGKILLs everything in it; systemd logs for the unit
  "systemd-oomd killed N process(es) in this unit." The runner compares the mark on the run's
  cgroup and its ancestors with the count at the start, and, where the run's scope is gone
  (systemd removes it at once), asks the journal for that unit's line.
- earlyoom sends SIGTERM, then SIGKILL, to the process with the highest oom_score and says so on
  stderr, which its unit sends to the journal (identifier ``earlyoom``):
  ``sending SIGTERM to process 1234 uid 0 "python3": badness 1000, VmRSS 734 MiB``. The runner
  looks for such a line about a pid of the run between its start and its end.

Run-path module: standard library only; journalctl runs only on that rare path.
"""
from __future__ import annotations

import os
import re

OOMD_MARKS = ("user.oomd_ooms", "trusted.oomd_ooms")
EARLYOOM_LINE = re.compile(r'sending (SIGTERM|SIGKILL) to process (\d+) uid (\d+) "([^"]*)"')
OOMD_UNIT_LINE = "systemd-oomd killed"
JOURNAL_S = 5.0


class Kill:
    __slots__ = ("killer", "detail")

    def __init__(self, killer: str, detail: str) -> None:
        self.killer = killer
        self.detail = detail


def oomd_marks(path: str, top: str) -> dict[str, int]:
    """{cgroup path: oomd's kill count} for ``path`` and its ancestors below ``top``."""
    out: dict[str, int] = {}
    top = top.rstrip("/")
    while path.startswith(top + "/"):
        count = 0
        for name in OOMD_MARKS:
            try:
                count += int(os.getxattr(path, name).strip(b"\0 \n") or 0)
            except (OSError, ValueError):
                continue
        if count:
            out[path] = count
        path = os.path.dirname(path)
    return out


def parse_earlyoom(line: str) -> tuple[str, int, int, str] | None:
    """(signal, pid, uid, name) of an earlyoom kill line, or None."""
    m = EARLYOOM_LINE.search(line)
    if not m:
        return None
    return m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)


def journal(args: list[str], since: float, until: float) -> list[str] | None:
    """Journal messages (text only) between two wall-clock times, or None without a journal."""
    import shutil  # the rare path only: every capped run imports this module
    import subprocess

    exe = shutil.which("journalctl")
    if exe is None:
        return None
    try:
        r = subprocess.run([exe, "--quiet", "--no-pager", "--output=cat", f"--since=@{since:.3f}",
                            f"--until=@{until:.3f}", *args], capture_output=True, text=True, timeout=JOURNAL_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.splitlines() if r.returncode == 0 else None


def find(path: str, top: str, marks_before: dict[str, int], pids: set[int], since: float, until: float,
         unit: str | None = None, settle_s: float = 3.0) -> Kill | None:
    """The userspace killer of the run in ``path`` (still there or gone), or None. ``pids``: the
    processes seen in the run, given only when it died of TERM or KILL (then the journal is read)."""
    import time

    for cg, count in sorted(oomd_marks(path, top).items(), key=lambda kv: -len(kv[0])):
        if count > marks_before.get(cg, 0):
            return Kill("systemd-oomd", f"it marked {cg} with user.oomd_ooms and killed what was inside")
    if not pids:
        return None
    for line in journal(["--identifier", "earlyoom"], since, until + 2) or []:
        hit = parse_earlyoom(line)
        if hit and hit[1] in pids:  # earlyoom logs before it kills: the line is there by now
            return Kill("earlyoom", line.strip())
    if unit is not None:
        # systemd logs its line when it sees the scope empty, which may be a moment after we did; 3 s:
        # one journalctl call alone can take over 1 s on a slow machine (a TCG guest), and only a run
        # that died of TERM/KILL with no killer found yet waits that long
        deadline = time.monotonic() + settle_s
        while True:
            lines = journal(["--unit", unit], since, time.time() + 2)
            for line in lines or []:
                if OOMD_UNIT_LINE in line:
                    return Kill("systemd-oomd", line.strip())
            if lines is None or time.monotonic() >= deadline:
                return None
            time.sleep(0.25)
    return None
