"""Which VM backend boots here: chosen by a real boot, once per test session.

The order (docs/testing.md, "Which backend boots"):

1. ``qemu-kvm``: QEMU with KVM, only where /dev/kvm opens AND a probe guest is seen to boot. On
   these machines /dev/kvm opens and KVM_CREATE_VM succeeds, but a guest hangs after "Probing EDD"
   (nested virtualisation does not run), so only a boot can tell.
2. ``qemu-tcg``: QEMU's software emulation. It runs on any x86-64 CPU.
3. ``uml``: user-mode Linux, where its kernel runs on the host CPU (it panics at init on a CPU with
   AMX).

The probe is a v2 guest whose job is ``true``: the backend is chosen when the guest writes
``started`` on its share. A probe that does not get there within its bound (``PROBE_S``) moves on to
the next backend, and the reason is kept for the log. ``SWARMGATE_VM_BACKEND`` (a name or a
comma-separated list of them) restricts the candidates, e.g. ``uml`` to run the layouts on user-mode
Linux where it boots.
"""
from __future__ import annotations

import os
import threading

from tests.vm import machine, qemu, uml

ORDER = ("qemu-kvm", "qemu-tcg", "uml")
PROBE_S = {"qemu-kvm": 40.0, "qemu-tcg": 600.0, "uml": 300.0}  # a guest that boots gets there far sooner
PROBE_STALL_S = {"qemu-kvm": 40.0, "qemu-tcg": 240.0, "uml": 120.0}
PROBE_MEM = "512M"


def wanted() -> list[str]:
    raw = os.environ.get("SWARMGATE_VM_BACKEND", "").strip()
    if not raw:
        return list(ORDER)
    names = [n.strip() for n in raw.split(",") if n.strip()]
    bad = [n for n in names if n not in ORDER]
    if bad or not names:
        raise RuntimeError(f"SWARMGATE_VM_BACKEND={raw!r}: name one or more of {', '.join(ORDER)}")
    return names


def why_not(name: str) -> str | None:
    """Why backend ``name`` cannot even be tried here (None: it can)."""
    if name == "uml":
        return uml.unavailable()
    reason = qemu.unavailable()
    if reason is None and name == "qemu-kvm" and not qemu.kvm_usable():
        reason = "/dev/kvm cannot be opened read-write"
    return reason


def make(name: str):
    return uml.Backend() if name == "uml" else qemu.Backend(name.removeprefix("qemu-"))


def unavailable() -> str | None:
    """None when some backend can be tried here, else why none can (and how to get one)."""
    reason = machine.common_unavailable()
    if reason:
        return reason
    try:
        names = wanted()
    except RuntimeError as e:
        return str(e)
    reasons = {n: why_not(n) for n in names}
    if all(reasons.values()):
        return "no VM backend can run here (" + "; ".join(f"{n}: {r}" for n, r in reasons.items()) + ")"
    return None


class Chooser:
    """The first backend of the order whose probe guest boots; asked by every boot, probed once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.chosen = None
        self.trail: list[str] = []   # one line per backend looked at, in order: what it did
        self.failed: str | None = None

    def choose(self, cancel: threading.Event | None = None):
        with self.lock:
            if self.chosen is not None:
                return self.chosen
            if self.failed is not None:
                raise RuntimeError(self.failed)
            for name in wanted():
                reason = why_not(name)
                if reason:
                    self.trail.append(f"{name}: not tried ({reason})")
                    continue
                if cancel is not None and cancel.is_set():
                    raise RuntimeError("the test session ended before a VM backend was chosen")
                backend = make(name)
                probe = machine.run(backend, machine.Job("v2", [], mem=PROBE_MEM, init_only="true"),
                                    timeout=PROBE_S[name], stall=PROBE_STALL_S[name], cancel=cancel)
                if probe.left:
                    self.failed = f"host processes of the {name} probe VM survived the kill: {probe.left}"
                    raise RuntimeError(self.failed)
                if probe.started:
                    self.trail.append(f"{name}: a probe guest booted in {probe.seconds:.1f}s")
                    self.chosen = backend
                    return backend
                self.trail.append(f"{name}: no guest ({probe.why_no_results()}): "
                                  f"{' '.join(probe.console.split()[-40:])}")
            self.failed = "no VM backend boots here: " + " | ".join(self.trail)
            raise RuntimeError(self.failed)


CHOOSER = Chooser()


def boot(layout: str, nodeids: list[str], *, timeout: float, stall: float | None = None,
         mem: str = machine.DEFAULT_MEM, env: dict[str, str] | None = None, pytest_args: list[str] | None = None,
         init_only: str | None = None, cancel: threading.Event | None = None, backend=None) -> machine.Boot:
    """Boot one VM of ``layout`` on the chosen backend (or ``backend``), run ``nodeids`` inside, return it.

    ``init_only`` replaces the guest's job with a shell command (the harness's own tests).
    Raises RuntimeError when no backend boots here.
    """
    if layout not in machine.LAYOUTS:
        raise ValueError(f"unknown VM layout {layout!r} (one of {', '.join(machine.LAYOUTS)})")
    chosen = backend if backend is not None else CHOOSER.choose(cancel)
    job = machine.Job(layout, list(nodeids), mem=mem, env=dict(env or {}), pytest_args=list(pytest_args or []),
                      init_only=init_only)
    return machine.run(chosen, job, timeout=timeout, stall=stall, cancel=cancel)
