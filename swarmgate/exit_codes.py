"""The one table of exit codes (SPEC §9): each code's meaning and what to do about it.

78 and 241-254 carry these meanings only, so a caller never mistakes "did not run" for "ran and
failed". systemd uses 241-243 and 245 for its own service set-up failures; our runner uses
``systemd-run --scope``, where the exit code is the command's, so the two do not meet. Users who
wrap swarmgate in a service must know which layer produced the code.

``Exit``, ``MEANING``, ``describe()`` and the exit-code tables of README.md and docs/runner.md
(written by `swarmgate docs`, checked by `swarmgate docs --check`) all come from CODES.
A new code: one row here, then `swarmgate docs` (docs/contributing.md, "Add an exit code").
"""
from __future__ import annotations

import enum


class ExitCode:
    __slots__ = ("code", "name", "meaning", "advice", "runner")

    def __init__(self, code: int, name: str, meaning: str, advice: str, runner: str | None = None) -> None:
        self.code = code          # the number; never reused for another meaning
        self.name = name          # Exit.<name>
        self.meaning = meaning    # what happened, in a few words
        self.advice = advice      # what the caller does about it
        self.runner = runner      # how run-with-memory-cap comes to end with it (None: it never does)


CODES: tuple[ExitCode, ...] = (
    ExitCode(78, "PREFLIGHT", "not run: a run condition or admission is not met",
             "meet the conditions it printed (they name the way out), or wait for the inputs to change"),
    ExitCode(241, "FITS_NOWHERE", "fits on no host, ever",
             "lower the memory it needs (shard it), or add a host that is big enough"),
    ExitCode(242, "TOOLCHAIN_DIFFERS", "peer toolchain differs",
             "bring the peer's toolchain to this machine's version, or run here"),
    ExitCode(243, "PEER_OFF", "cross-machine switch off or peer unreachable (no local fallback)",
             "switch the peer on in hosts.toml or reach it over ssh, or run here deliberately"),
    ExitCode(244, "LONG_JOB", "long job placed on one machine without a long-job declaration",
             "shard it, or declare `# long-job: sharded=... resume=... multi-host=...` in its script"),
    ExitCode(245, "GPU_OOM", "GPU memory exhausted during the run",
             "free GPU memory (`gpu-quiesce-run`), reduce the batch, rerun",
             runner="the GPU ran out of memory during the run (`NV_ERR_NO_MEMORY` in the kernel log between "
                    "start and end, or a CUDA out-of-memory message in the output of a run that failed)"),
    ExitCode(246, "PEER_CLEANUP", "peer run tree could not be verified deleted",
             "delete the run directory on the peer by hand (the message names it)"),
    ExitCode(247, "SIGNALLED", "stopped by a signal; partial results fetched, cleanup done",
             "rerun when you want the whole result; the partial one is where it said"),
    ExitCode(248, "LOCK_TIMEOUT", "workspace lock not acquired in time",
             "`workspace-lock status` names the holder: wait for it, or raise --timeout"),
    ExitCode(249, "HEAVY_REFUSED", "a heavy program refused where it starts (exec-time check): no authorization for it",
             "run it the way the refusal says (main agent: the line it prints, with SWARMGATE_HEAVY=commit, a "
             "filled-in run scope and run-with-memory-cap)",
             runner="not the runner's own code: a heavy program inside the command was refused by swarmgate's "
                    "exec-time shim (it had no authorization: see docs/exec-shims.md)"),
    ExitCode(250, "OWN_CAP", "hit its own memory cap", "raise the cap or shrink the job",
             runner="it hit **its own** cap (its own cgroup's limit, per the kernel's OOM line / its own "
                    "counters)"),
    ExitCode(251, "USAGE", "usage error, or the cap could not be set up (never runs uncapped)",
             "read the one line it printed; fix the argument, config, permissions or state path",
             runner="usage error, or the cgroup could not be set up: the command was **not** run"),
    ExitCode(252, "NO_TURN", "no turn: admission wait exhausted, or can never fit here",
             "rerun later, raise `--wait`, lower the cap, or use a bigger host",
             runner="no turn: `--wait` ran out, or it can never fit here"),
    ExitCode(253, "TIMEOUT", "wall-clock timeout", "raise the timeout or shorten the job",
             runner="`--timeout` passed; every process of the run was stopped"),
    ExitCode(254, "PUSHED_OUT", "pushed out by the total cap: not its fault",
             "its result is void: rerun (it now books its cap)",
             runner="it was killed because the **shared total** was full, or by the machine's own OOM killer "
                    "or a userspace one (earlyoom, systemd-oomd, named in its line), not because of its own cap"),
)

# what else run-with-memory-cap can end with: the command's own codes, passed through
RUNNER_PASS_THROUGH: tuple[tuple[str, str, str], ...] = (
    ("the command's", "it ended on its own (128+N: killed by signal N)", "—"),
    ("127 / 126", "the command was not found / is not executable", "—"),
    ("128+N", "the wrapper got TERM/INT/HUP: every process of the run was stopped (TERM, then KILL after 3 s)",
     "—"),
)

Exit = enum.IntEnum("Exit", {"OK": 0, **{c.name: c.code for c in CODES}}, module=__name__)

MEANING: dict[int, str] = {c.code: c.meaning for c in CODES}
ADVICE: dict[int, str] = {c.code: c.advice for c in CODES}


def describe(code: int) -> str:
    """Human text for an exit code: its meaning and what to do; the command's own code otherwise."""
    if code in MEANING:
        return f"{code}: {MEANING[code]} ({ADVICE[code]})"
    return f"{code}: the command's own exit code"


# --- the generated tables (README.md, docs/runner.md) ---

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def readme_table() -> str:
    lines = ["| code | meaning | what to do |", "|---|---|---|"]
    lines += [f"| {c.code} | {_cell(c.meaning)} | {_cell(c.advice)} |" for c in CODES]
    return "\n".join(lines) + "\n"


def runner_table() -> str:
    rows = [RUNNER_PASS_THROUGH[0]]
    rows += [(str(c.code), c.runner, c.advice) for c in sorted(CODES, key=lambda c: -c.code) if c.runner]
    rows += list(RUNNER_PASS_THROUGH[1:])
    lines = ["| code | meaning | what to do |", "|---|---|---|"]
    lines += [f"| {code} | {_cell(meaning)} | {_cell(advice)} |" for code, meaning, advice in rows]
    return "\n".join(lines) + "\n"
