"""The one table of exit codes (SPEC §9).

78 and 241-254 carry these meanings only, so a caller never mistakes
"did not run" for "ran and failed". systemd uses 241-243 and 245 for its own
service set-up failures; our runner uses ``systemd-run --scope``, where the exit
code is the command's, so the two do not meet. Users who wrap swarmgate in a
service must know which layer produced the code.
"""
from __future__ import annotations

import enum


class Exit(enum.IntEnum):
    OK = 0
    PREFLIGHT = 78          # not run: a run condition or admission is not met
    FITS_NOWHERE = 241      # fits on no host, ever
    TOOLCHAIN_DIFFERS = 242 # peer toolchain differs
    PEER_OFF = 243          # cross-machine switch off or peer unreachable
    LONG_JOB = 244          # long job on one machine without a declaration
    GPU_OOM = 245           # GPU memory exhausted during the run
    PEER_CLEANUP = 246      # peer run tree could not be verified deleted
    SIGNALLED = 247         # stopped by a signal; partial results fetched
    LOCK_TIMEOUT = 248      # workspace lock not acquired in time
    HEAVY_REFUSED = 249     # a heavy program refused where it starts (exec-time shim)
    OWN_CAP = 250           # hit its own memory cap
    USAGE = 251             # usage error, or the cap could not be set up
    NO_TURN = 252           # admission wait exhausted, or can never fit here
    TIMEOUT = 253           # wall-clock timeout
    PUSHED_OUT = 254        # killed because the shared total was full


MEANING: dict[int, str] = {
    Exit.PREFLIGHT: "not run: a run condition or admission is not met",
    Exit.FITS_NOWHERE: "fits on no host, ever",
    Exit.TOOLCHAIN_DIFFERS: "peer toolchain differs",
    Exit.PEER_OFF: "cross-machine switch off or peer unreachable (no local fallback)",
    Exit.LONG_JOB: "long job placed on one machine without a long-job declaration",
    Exit.GPU_OOM: "GPU memory exhausted during the run",
    Exit.PEER_CLEANUP: "peer run tree could not be verified deleted",
    Exit.SIGNALLED: "stopped by a signal; partial results fetched, cleanup done",
    Exit.LOCK_TIMEOUT: "workspace lock not acquired in time",
    Exit.HEAVY_REFUSED: "a heavy program refused where it starts (exec-time check): no authorization for it",
    Exit.OWN_CAP: "hit its own memory cap: raise the cap or shrink the job",
    Exit.USAGE: "usage error, or the cap could not be set up (never runs uncapped)",
    Exit.NO_TURN: "no turn: admission wait exhausted, or can never fit here",
    Exit.TIMEOUT: "wall-clock timeout",
    Exit.PUSHED_OUT: "pushed out by the total cap: not its fault, rerun",
}


def describe(code: int) -> str:
    """Human text for an exit code; the command's own code otherwise."""
    if code in MEANING:
        return f"{code}: {MEANING[code]}"
    return f"{code}: the command's own exit code"
