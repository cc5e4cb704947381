"""What every VM backend shares: one boot's job, its bounds, its cleanup and what it gave back.

A backend (tests/vm/qemu.py, tests/vm/uml.py) only says how to start its guest: the argv, the
environment, and which of its files to remove. This module makes the boot's host directory (the
*share*, which carries the job in and the results out, and the scratch disk), starts the backend's
process in a new session, waits under two bounds (the whole boot; a stall: nothing new reported for
too long), kills every host process of the VM by pid whatever happens, reads the results back and
removes every file the boot made.

The guest's side is the same for all backends: tests/vm/init.sh (PID 1, or the script the QEMU
initramfs switches to), then tests/vm/guest.py, which reads ``job.json`` on the share, writes
``started``, runs pytest and writes ``results.jsonl``, ``pytest.log`` and ``exit``.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INIT = os.path.join(CHECKOUT, "tests", "vm", "init.sh")
LAYOUTS = ("v2", "systemd")
DEFAULT_MEM = "1G"
SCRATCH_SIZE = "2G"  # sparse: only what the guest writes takes space


class Boot:
    """What one boot gave back."""

    def __init__(self) -> None:
        self.records: list[dict] = []   # one per test phase, written by the guest (tests/vm/plugin.py)
        self.exit: int | None = None    # the guest pytest's exit status, None when it never finished
        self.console = ""
        self.log = ""                   # the guest pytest's output
        self.timed_out = False
        self.stalled = False            # killed because the guest reported nothing new for too long
        self.started = False            # the guest's job began (guest.py ran): the VM booted
        self.vm_rc: int | None = None   # the exit status of the backend's process (qemu, linux.uml)
        self.backend = ""               # which backend booted it: "qemu-kvm", "qemu-tcg", "uml"
        self.seconds = 0.0
        self.left: list[int] = []       # host pids of the VM still alive after cleanup (must be empty)
        self.paths: list[str] = []      # the boot's host dirs (removed before boot() returns)

    def tail(self, n: int = 3000) -> str:
        text = (self.log or "") + ("\n--- console ---\n" + self.console if self.console else "")
        return text[-n:]

    def why_no_results(self) -> str:
        who = self.backend or "the VM"
        if self.stalled:
            return (f"the VM ({who}) reported nothing new for its stall bound and was killed after "
                    f"{self.seconds:.0f}s"
                    + ("" if self.started else ", before its guest started (it never finished booting)"))
        if self.timed_out:
            return f"the VM ({who}) ran past its time bound ({self.seconds:.0f}s) and was killed"
        if not self.started:
            return f"the VM ended ({who} exit {self.vm_rc}) before its guest started: it did not boot"
        if self.exit is None:
            return f"the VM ended ({who} exit {self.vm_rc}) before the guest's tests finished"
        return f"the guest's pytest exited {self.exit} without reporting this test"


@dataclass
class Job:
    """One boot's request: the layout, the cases, and what the guest's pytest gets."""
    layout: str
    nodeids: list[str]
    mem: str = DEFAULT_MEM
    env: dict[str, str] = field(default_factory=dict)
    pytest_args: list[str] = field(default_factory=list)
    init_only: str | None = None   # a shell command instead of pytest (the harness's own tests, the probe)


@dataclass
class Launch:
    """How a backend starts its guest for one boot (made by the backend from the boot's Dirs)."""
    argv: list[str]
    env: dict[str, str]
    cwd: str
    console: str                   # the file the guest's console goes to
    output: str | None = None      # where the process's own stdout and stderr go, when not to the console


@dataclass
class Dirs:
    """The host directories of one boot: ``base`` (share + scratch disk) and ``private`` (the backend's)."""
    base: str
    private: str

    @property
    def share(self) -> str:
        return os.path.join(self.base, "share")

    @property
    def disk(self) -> str:
        return os.path.join(self.base, "scratch.ext4")


def disk_tmp() -> str:
    """The share lives on the host's disk: in the guest, its files are reclaimable page cache."""
    for d in ("/var/tmp", tempfile.gettempdir()):
        if os.path.isdir(d) and os.access(d, os.W_OK):
            return d
    return tempfile.gettempdir()


def shm_tmp() -> str | None:
    """A RAM directory (tmpfs at /dev/shm) for a backend's private files, else None (the default temp dir)."""
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] == "/dev/shm" and parts[2] == "tmpfs":
                    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    except OSError:
        pass
    return None


def common_unavailable() -> str | None:
    """Why no backend can boot the job here, whatever the backend (None when nothing stands in the way)."""
    if os.geteuid() != 0:
        return "the VM tests need root (the guest's python must read the checkout and the venv as root)"
    for path in (CHECKOUT, sys.executable):
        if any(c.isspace() or c == "," for c in path):
            return f"{path!r} holds whitespace or a comma, which a kernel command line or a QEMU option cannot carry"
    if not os.access(INIT, os.X_OK):
        return f"{INIT} is not executable"
    if mkfs() is None:
        return "mkfs.ext4 is missing (apt-get install e2fsprogs): the guest's scratch disk needs it"
    return None


def mkfs() -> str | None:
    for p in (shutil.which("mkfs.ext4"), "/sbin/mkfs.ext4", "/usr/sbin/mkfs.ext4"):
        if p and os.access(p, os.X_OK):
            return p
    return None


def guest_params(layout: str, share_arg: str, backend: str) -> list[str]:
    """The kernel parameters init.sh reads (unknown name=value parameters reach init as its environment)."""
    return [f"sgvm_share={share_arg}", f"sgvm_layout={layout}", f"sgvm_python={sys.executable}",
            f"sgvm_checkout={CHECKOUT}", f"sgvm_backend={backend}"]


def group_members(pgid: int) -> list[int]:
    """Live processes of the process group ``pgid`` (the VM's own session: we started it there)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(name))
    return out


def kill_vm(proc: subprocess.Popen, settle_s: float = 10.0) -> list[int]:
    """SIGKILL every host process of the VM, by pid; returns the pids still alive after ``settle_s``."""
    pgid = proc.pid  # start_new_session: the process we started leads its own group and session
    deadline = time.monotonic() + settle_s
    while True:
        members = group_members(pgid)
        if proc.poll() is None and proc.pid not in members:
            members.append(proc.pid)
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        left = group_members(pgid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def run(backend, job: Job, *, timeout: float, stall: float | None = None,
        cancel: threading.Event | None = None) -> Boot:
    """Boot one VM with ``backend`` for ``job``, bounded, and return what came back; leaves nothing behind.

    ``backend`` has ``name`` and ``launch(job, dirs) -> Launch``. Two bounds: ``timeout`` for the whole
    boot, and ``stall``: the VM is killed when its guest has reported nothing new (console, results,
    pytest's log) for that long. A loaded machine slows the guest down but it keeps reporting, so the
    stall bound catches a hung VM without a wall-clock bound tight enough to kill a slow one.
    ``cancel`` set from another thread ends the boot early (the test session is over).
    """
    if job.layout not in LAYOUTS:
        raise ValueError(f"unknown VM layout {job.layout!r} (one of {', '.join(LAYOUTS)})")
    res = Boot()
    res.backend = backend.name
    dirs = Dirs(tempfile.mkdtemp(prefix=f"swarmgate-vm-{job.layout}-", dir=disk_tmp()),
                tempfile.mkdtemp(prefix=f"swarmgate-{backend.name}-", dir=shm_tmp()))
    res.paths = [dirs.base, dirs.private]
    os.mkdir(dirs.share)
    try:
        make_scratch(dirs.disk)
        spec = {"layout": job.layout, "checkout": CHECKOUT, "python": sys.executable, "nodeids": job.nodeids,
                "env": dict(job.env), "pytest_args": list(job.pytest_args), "shell": job.init_only,
                "backend": backend.name}
        with open(os.path.join(dirs.share, "job.json"), "w") as f:
            json.dump(spec, f)
        launch = backend.launch(job, dirs)
    except (OSError, subprocess.SubprocessError, RuntimeError) as e:
        shutil.rmtree(dirs.base, ignore_errors=True)
        shutil.rmtree(dirs.private, ignore_errors=True)
        raise RuntimeError(f"cannot set up the {backend.name} guest's files in {dirs.base}: {e}") from None
    t0 = time.monotonic()
    proc = None
    progress = Progress([launch.console] + [os.path.join(dirs.share, n)
                                            for n in ("started", "results.jsonl", "pytest.log")])
    try:
        with open(launch.output or launch.console, "wb") as out:
            proc = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    env=launch.env, cwd=launch.cwd, start_new_session=True)
            deadline = time.monotonic() + timeout
            while res.vm_rc is None and not (cancel is not None and cancel.is_set()):
                try:
                    res.vm_rc = proc.wait(timeout=min(0.5, max(deadline - time.monotonic(), 0.01)))
                except subprocess.TimeoutExpired:
                    now = time.monotonic()
                    if now >= deadline:
                        res.timed_out = True
                        break
                    if stall is not None and now - progress.last(now) >= stall:
                        res.timed_out = res.stalled = True
                        break
    finally:
        if proc is not None:
            res.left = kill_vm(proc)
            if res.vm_rc is None:
                res.vm_rc = proc.returncode
        res.seconds = time.monotonic() - t0
        res.console = read(launch.console, limit=200_000)
        said = read(launch.output, limit=20_000).strip() if launch.output else ""
        if said:  # the backend's own words (QEMU: a device it could not open, say)
            res.console += f"\n--- {backend.name} ---\n{said}"
        res.records = records(os.path.join(dirs.share, "results.jsonl"))
        code = read(os.path.join(dirs.share, "exit")).strip()
        res.exit = int(code) if code.lstrip("-").isdigit() else None
        res.log = read(os.path.join(dirs.share, "pytest.log"), limit=400_000)
        res.started = os.path.exists(os.path.join(dirs.share, "started"))
        shutil.rmtree(dirs.base, ignore_errors=True)
        shutil.rmtree(dirs.private, ignore_errors=True)
    return res


class Progress:
    """When the files a guest writes to last changed size (the boot's start until one does)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self.sizes: list[int] = []
        self.at = time.monotonic()

    def last(self, now: float) -> float:
        sizes = []
        for p in self.paths:
            try:
                sizes.append(os.stat(p).st_size)
            except OSError:
                sizes.append(-1)
        if sizes != self.sizes:
            self.sizes, self.at = sizes, now
        return self.at


def make_scratch(path: str) -> None:
    with open(path, "wb") as f:
        f.truncate(size_bytes(SCRATCH_SIZE))
    argv = [mkfs() or "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", path]
    try:
        subprocess.run(argv, check=True, capture_output=True, timeout=60)
    except OSError:
        # the start itself failed (seen once in CI: EFAULT from the exec of mkfs.ext4 while the runner's
        # OOM tests loaded the machine), not mkfs: one more start, so one bad exec does not skip a whole
        # layer of guests; a second failure stands
        time.sleep(1.0)
        subprocess.run(argv, check=True, capture_output=True, timeout=60)


def size_bytes(size: str) -> int:
    return int(size[:-1]) << {"M": 20, "G": 30}[size[-1]]


def read(path: str, limit: int = 10_000) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def records(path: str) -> list[dict]:
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a VM that was killed mid-write
                if isinstance(rec, dict):
                    out.append(rec)
    except OSError:
        pass
    return out
