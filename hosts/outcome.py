"""What a finished run's exit code is (SPEC §9), from its own counters. Pure.

Order: stopped by a signal to the wrapper (128+N) > timeout (253) > OOM in the
run's cgroup (250 own cap / 254 pushed out by the total) > GPU memory
exhausted (245) > the command's own code.

250 vs 254 (FACTS.md):
- the kernel's OOM line names the cgroup whose limit was hit (``oom_memcg``)
  and the victim's (``task_memcg``): the run's own path → 250; an ancestor → 254;
- without that line: v2 ``memory.events.local`` ``oom`` > 0 → 250, else 254;
  v1 the run's own ``failcnt`` > 0 → 250, else (``oom_kill`` > 0 but its own
  limit never failed a charge) 254.
"""
from __future__ import annotations

from swarmgate.exit_codes import Exit

CUDA_OOM_MARKERS = (b"CUDA out of memory", b"CUDA_ERROR_OUT_OF_MEMORY", b"NV_ERR_NO_MEMORY")


def oom_kind(own_oom: int | None, own_oom_kill: int, own_failcnt: int,
             kernel_ooms: list[dict] | None, run_cgroup: str,
             misread_parent: bool = False) -> str | None:
    """"own", "total" or None (no OOM kill in the run). ``run_cgroup`` is the path the kernel prints;
    a victim in a cgroup the command made inside its run is the run's too."""
    ours = [o for o in (kernel_ooms or []) if _within(o.get("task_memcg", ""), run_cgroup)]
    if not ours and own_oom_kill <= 0:
        return None
    if misread_parent:
        return "own"  # the break switch: any OOM counts as the run's own cap
    if ours:
        return "own" if any(_within(o.get("oom_memcg", ""), run_cgroup) for o in ours) else "total"
    if own_oom is not None:  # v2
        return "own" if own_oom > 0 else "total"
    return "own" if own_failcnt > 0 else "total"


def usage_at_own_oom(kernel_ooms: list[dict] | None, run_cgroup: str) -> int | None:
    """The most the kernel saw charged to the run (or a cgroup inside it) when it hit its own limit:
    a floor for the run's peak, or None."""
    seen = [o["usage"] for o in kernel_ooms or () if o.get("usage") and _within(o.get("oom_memcg", ""), run_cgroup)]
    return max(seen, default=None)


def _within(path: str, cgroup: str) -> bool:
    return path == cgroup or path.startswith(cgroup.rstrip("/") + "/")


def classify(returncode: int, *, signalled: int | None = None, timed_out: bool = False,
             oom: str | None = None, gpu_kernel: bool = False, gpu_output: bool = False) -> int:
    if signalled:
        return 128 + signalled
    if timed_out:
        return int(Exit.TIMEOUT)
    if oom == "own":
        return int(Exit.OWN_CAP)
    if oom == "total":
        return int(Exit.PUSHED_OUT)
    if gpu_kernel or (gpu_output and returncode != 0):
        return int(Exit.GPU_OOM)
    return returncode


def explain(code: int, *, cap: str, label: str, timeout: float | None = None,
            total: str = "", peak: str = "", killer: str = "", killer_said: str = "") -> str | None:
    """The one line on stderr that says what happened and what to do."""
    if code == Exit.PUSHED_OUT and killer:
        return (f"run-with-memory-cap: exit 254: killed by {killer}, a userspace OOM killer acting on the "
                f"machine's memory pressure, not because of the run's own cap; its result is void: rerun it "
                f"(label {label!r} now books its full cap {cap}). {killer} said: {killer_said}")
    if code == Exit.OWN_CAP:
        return (f"run-with-memory-cap: exit 250: the run hit its own memory cap {cap} (peak {peak}); "
                f"raise the cap (run-with-memory-cap BIGGER ...) or make the job smaller. Label {label!r}.")
    if code == Exit.PUSHED_OUT:
        return (f"run-with-memory-cap: exit 254: killed because the shared total {total} was full, not "
                f"because of its own cap; its result is void: rerun it (label {label!r} now books its full "
                f"cap {cap}, so the rerun waits for room instead of gambling).")
    if code == Exit.TIMEOUT:
        return (f"run-with-memory-cap: exit 253: wall-clock timeout after {timeout:g}s; every process of the "
                f"run was stopped. Raise --timeout or shorten the job.")
    if code == Exit.GPU_OOM:
        return ("run-with-memory-cap: exit 245: the GPU ran out of memory during the run (NV_ERR_NO_MEMORY "
                "or CUDA out of memory); free GPU memory (gpu-quiesce-run) or reduce the batch, then rerun.")
    return None
