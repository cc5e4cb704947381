"""Bench: admission by history peak vs by declared cap (issue 5 bar: ≥ 1.8×, 0 kills outside own caps).

One run, real cgroups, a temporary slice with a 1 GiB total and a temporary
state dir. 24 jobs of 6 kinds; each allocates and holds 80–128 MiB for
1.0–1.8 s and declares a cap 3.5× its real peak. A warm-up run of one job per
kind fills the history. Then the same 24 jobs are started at once twice:
- peak booking (the runner as shipped): admission books each label's history peak;
- baseline: the break switch ``book-cap-not-peak`` (under a self-test marker),
  so admission books the declared cap, as a runner without history would.
Printed: the makespan of each, the ratio, and kills outside the runs' own caps
(OOM kills whose limit was the slice's or the machine's, exit 254): must be 0.

Usage: .venv/bin/python bench/admission.py
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

MiB = 1 << 20
TOTAL = "1G"
KINDS = [(96, 1.2), (112, 1.5), (128, 1.0), (80, 1.8), (104, 1.4), (120, 1.6)]  # (MiB held, seconds)
JOBS = 24
CAP_FACTOR = 3.5
BASE_MIB = 10  # the interpreter itself


def job_argv(kind: int) -> list[str]:
    mib, hold = KINDS[kind]
    cap = int((mib + BASE_MIB) * CAP_FACTOR)
    code = f"import time; b=b'x'*({mib}*2**20); time.sleep({hold})"
    return [f"{cap}M", "--label", f"bench-kind-{kind}", "--wait", "600", "--", "python3", "-c", code]


def run_batch(runner: str, kinds: list[int], cwd: str, env: dict) -> tuple[float, list[int], list[str]]:
    from swarmgate.hosts.kernel_log import KernelLog

    klog = KernelLog()
    t0 = time.monotonic()
    procs: list[subprocess.Popen] = []
    try:
        for k in kinds:
            procs.append(subprocess.Popen([runner, *job_argv(k)], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        errs = [p.communicate()[1].decode(errors="replace") for p in procs]
    except BaseException:
        for p in procs:  # the wrappers stop their runs on TERM
            p.terminate()
            p.wait()
        raise
    makespan = time.monotonic() - t0
    messages = klog.read_new() or []
    klog.close()
    for p, err in zip(procs, errs):
        if p.returncode:
            print(f"  job exited {p.returncode}: {err.strip()[-300:]}", file=sys.stderr)
    return makespan, [p.returncode for p in procs], messages


def outside_kills(messages: list[str], slice_name: str) -> tuple[int, int]:
    """(OOM kills whose limit was not the victim's own run cgroup, own-cap kills) in our slice or machine-wide."""
    from swarmgate.hosts.kernel_log import oom_lines

    outside = own = 0
    for m in messages:
        if "CONSTRAINT_NONE" in m and "oom-kill:" in m:
            outside += 1  # the machine itself ran out
    for o in oom_lines(messages):
        if not o["task_memcg"].startswith(f"/{slice_name}/"):
            continue
        if o["oom_memcg"] == o["task_memcg"]:
            own += 1
        else:
            outside += 1
    return outside, own


def main() -> int:
    from swarmgate.break_switch import BREAK_ENV, selftest_marker
    from swarmgate.hosts.cgroups import get

    runner = os.path.join(os.path.dirname(sys.executable), "run-with-memory-cap")
    tmp = tempfile.mkdtemp(prefix="swarmgate-bench-adm-")
    slice_name = f"sgbench-adm-{os.getpid()}"
    repo = os.path.join(tmp, "repo")
    state = os.path.join(tmp, "state")
    os.makedirs(os.path.join(repo, ".claude"))
    with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
        f.write(f'[memory]\ntotal = "{TOTAL}"\nslice = "{slice_name}"\nreport_every = 600\n')
    os.environ["SWARMGATE_STATE_DIR"] = state  # the self-test marker must land where the runner looks
    env = dict(os.environ, CLAUDE_PROJECT_DIR=repo, SWARMGATE_HOSTS_CONFIG=os.path.join(tmp, "hosts.toml"))
    env.pop(BREAK_ENV, None)
    kinds = [i % len(KINDS) for i in range(JOBS)]
    try:
        warm, codes, _ = run_batch(runner, list(range(len(KINDS))), repo, env)
        if any(codes):
            print(f"warm-up failed: exit codes {codes}", file=sys.stderr)
            return 1
        peak_t, peak_codes, peak_msgs = run_batch(runner, kinds, repo, env)
        with selftest_marker() as marker_env:
            base_env = dict(env, **marker_env)
            base_env[BREAK_ENV] = "book-cap-not-peak"
            cap_t, cap_codes, cap_msgs = run_batch(runner, kinds, repo, base_env)
        from swarmgate.hosts import history

        hist = history.load()["labels"]
    finally:
        try:
            get("auto").remove_slice(slice_name)
        except Exception as e:  # noqa: BLE001
            print(f"cleanup: {e}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    out_p, own_p = outside_kills(peak_msgs, slice_name)
    out_c, own_c = outside_kills(cap_msgs, slice_name)
    pushed = peak_codes.count(254) + cap_codes.count(254)
    print(f"admission bench: {JOBS} jobs of {len(KINDS)} kinds, total {TOTAL}, caps {CAP_FACTOR}x real peak, "
          f"warm-up {warm:.1f}s")
    for k, (mib, hold) in enumerate(KINDS):
        e = hist.get(f"bench-kind-{k}", {})
        cap = int((mib + BASE_MIB) * CAP_FACTOR)
        print(f"  kind {k}: holds {mib}M for {hold}s, cap {cap}M, history peak {(e.get('peak') or 0) / MiB:.0f}M")
    print(f"  peak booking          : makespan {peak_t:6.1f}s  exit codes {sorted(set(peak_codes))}")
    print(f"  book-cap-not-peak     : makespan {cap_t:6.1f}s  exit codes {sorted(set(cap_codes))}")
    ratio = cap_t / peak_t
    print(f"  ratio: {ratio:.2f}x (goal >= 1.8x): {'OK' if ratio >= 1.8 else 'UNDER'}")
    outside = out_p + out_c + pushed
    print(f"  kills outside the runs' own caps: {outside} (254 exits {pushed}, slice/machine OOM lines "
          f"{out_p + out_c}); own-cap kills: {own_p + own_c} (goal: 0 outside)")
    return 0 if ratio >= 1.8 and outside == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
