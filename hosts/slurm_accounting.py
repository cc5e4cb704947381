"""A Slurm job's peak memory and duration, for the runner's history table (SPEC §5.8).

What works depends on the cluster, so each source is tried in order:

1. ``sacct -j JOB -n -P -o JobID,MaxRSS,Elapsed`` after the job: the accounting
   database's figures, on clusters that run slurmdbd;
2. otherwise (``AccountingStorageType=accounting_storage/none``, as in the
   single-node test cluster: sacct answers "Slurm accounting storage is
   disabled") the peak is the largest ``MaxRSS`` that ``sstat`` reported for
   the job's steps while it ran (the step's jobacct_gather/cgroup figures,
   sampled every ``SAMPLE_S``), and the duration is the job's ``RunTime``
   from ``scontrol show job`` (also written by jobcomp/filetxt);
3. a job killed for memory before any sample was taken records no peak: its
   history entry is marked "hit its ceiling" (the next prediction books its
   cap × 1.5), which is all the history needs from it.

Parsing is pure (``parse_rss``, ``parse_elapsed``, ``max_rss``); the sampler is
a thread around srun.
"""
from __future__ import annotations

import subprocess
import threading

SAMPLE_S = 1.0
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_rss(text: str) -> int | None:
    """Bytes of a Slurm memory figure (``107136K``, ``1.5G``, ``512``: plain numbers are bytes)."""
    t = (text or "").strip().upper()
    if not t:
        return None
    unit = t[-1] if t[-1] in _UNITS else ""
    number = t[:-1] if unit else t
    try:
        return int(float(number) * _UNITS[unit])
    except ValueError:
        return None


def parse_elapsed(text: str) -> float | None:
    """Seconds of a Slurm duration: ``[D-]HH:MM:SS`` or ``MM:SS`` (fractions allowed)."""
    t = (text or "").strip()
    if not t or t.upper() in ("UNKNOWN", "INVALID"):
        return None
    days = 0
    if "-" in t:
        d, _, t = t.partition("-")
        try:
            days = int(d)
        except ValueError:
            return None
    parts = t.split(":")
    try:
        nums = [float(p) for p in parts]
    except ValueError:
        return None
    while len(nums) < 3:
        nums.insert(0, 0.0)
    h, m, s = nums[-3:]
    return days * 86400 + h * 3600 + m * 60 + s


def max_rss(lines: str) -> int | None:
    """The largest MaxRSS of ``sstat``/``sacct -P`` output whose first field is MaxRSS or second is."""
    best = None
    for line in (lines or "").splitlines():
        for field in line.split("|"):
            v = parse_rss(field) if field and field[-1:].upper() in "KMGT" and field[:1].isdigit() else None
            if v is not None and (best is None or v > best):
                best = v
    return best


class Sampler:
    """Polls ``sstat`` for a job's steps while it runs; ``peak`` is the largest MaxRSS seen."""

    def __init__(self, find_job, env=None, every: float = SAMPLE_S) -> None:
        self.find_job = find_job  # () -> job id or None (the job appears a moment after srun starts)
        self.env = env
        self.every = every
        self.job: str | None = None
        self.peak: int | None = None
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.job is None:
                    self.job = self.find_job()
                if self.job is not None:
                    cp = subprocess.run(["sstat", "-a", "-n", "-P", "-o", "MaxRSS,JobID", "-j", self.job],
                                        capture_output=True, text=True, timeout=10, env=self.env)
                    v = max_rss(cp.stdout) if cp.returncode == 0 else None
                    if v is not None:
                        self.samples += 1
                        self.peak = v if self.peak is None else max(self.peak, v)
            except (OSError, subprocess.SubprocessError):
                pass
            self._stop.wait(self.every)


def from_sacct(job: str, env=None) -> tuple[int | None, float | None, str]:
    """(peak, elapsed, why not) from the accounting database; why not is '' when it answered."""
    try:
        cp = subprocess.run(["sacct", "-j", job, "-n", "-P", "-o", "JobID,MaxRSS,Elapsed"], capture_output=True,
                            text=True, timeout=30, env=env)
    except (OSError, subprocess.SubprocessError) as e:
        return None, None, f"sacct: {e}"
    if cp.returncode != 0 or not cp.stdout.strip():
        return None, None, "sacct: " + ((cp.stderr or cp.stdout).strip().splitlines() or ["no answer"])[-1]
    peak, elapsed = None, None
    for line in cp.stdout.splitlines():
        fields = line.split("|")
        if len(fields) < 3:
            continue
        v = parse_rss(fields[1])
        if v is not None and (peak is None or v > peak):
            peak = v
        e = parse_elapsed(fields[2])
        if e is not None and fields[0] == job:
            elapsed = e
    return peak, elapsed, ""


def job_runtime(fields: dict) -> float | None:
    """The job's duration from ``scontrol show job`` fields (RunTime)."""
    return parse_elapsed(fields.get("RunTime", ""))
