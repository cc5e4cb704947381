"""Boot user-mode Linux with tests/vm/init.sh as init, bounded in time, and leave nothing behind.

The guest is a separate kernel (``linux.uml``, Debian's ``user-mode-linux``) running as ordinary
host processes. Its root is the host's ``/`` through hostfs, mounted **read-only**; the guest writes
only to tmpfs, to a scratch disk made for this boot (an ext4 image as the UML block device ubda,
mounted at /var/tmp: files there make reclaimable page cache, which hostfs and tmpfs files do not),
and to one host directory made for this boot (the *share*, a second hostfs mount at /run/sgvm/share
in the guest), which carries the job in (job.json) and the results out (results.jsonl, exit,
pytest.log). The console (con0) goes to a file, read as a fallback when the share holds nothing.

Cleanup, whatever happens (timeout, panic, a test interrupted): UML forks several host processes (one
per guest address space, plus helpers), all in the process group of the ``linux.uml`` we start in a
new session; every one is killed by pid and confirmed gone. UML's own files (its physical memory
file, the umid directory with the pid file and mconsole socket) go to a directory made for this boot
(``TMPDIR`` and ``uml_dir=``) that is removed afterwards, as are the share and the scratch disk.
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
import uuid

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INIT = os.path.join(CHECKOUT, "tests", "vm", "init.sh")
LAYOUTS = ("v2", "systemd")
DEFAULT_MEM = "1G"
SCRATCH_SIZE = "2G"  # sparse: only what the guest writes takes space


def binary() -> str | None:
    return shutil.which("linux.uml") or (os.path.exists("/usr/bin/linux.uml") and "/usr/bin/linux.uml") or None


def unavailable() -> str | None:
    """None when a VM can be booted here, else why not (and how to get it)."""
    if binary() is None:
        return "user-mode Linux is not installed (apt-get install user-mode-linux)"
    if os.geteuid() != 0:
        return "the VM tests need root (the guest's python must read the checkout and the venv as root)"
    for path in (CHECKOUT, sys.executable):
        if any(c.isspace() for c in path):
            return f"{path!r} holds whitespace, which a kernel command line cannot carry"
    if not os.access(INIT, os.X_OK):
        return f"{INIT} is not executable"
    if shutil.which("mkfs.ext4") is None and not os.path.exists("/sbin/mkfs.ext4"):
        return "mkfs.ext4 is missing (apt-get install e2fsprogs): the guest's scratch disk needs it"
    return None


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
        self.uml_rc: int | None = None
        self.seconds = 0.0
        self.left: list[int] = []       # host pids of the VM still alive after cleanup (must be empty)
        self.paths: list[str] = []      # the boot's host dir and UML's temp dir (removed before boot() returns)

    def tail(self, n: int = 3000) -> str:
        text = (self.log or "") + ("\n--- console ---\n" + self.console if self.console else "")
        return text[-n:]

    def why_no_results(self) -> str:
        if self.stalled:
            return (f"the VM reported nothing new for its stall bound and was killed after {self.seconds:.0f}s"
                    + ("" if self.started else ", before its guest started (it never finished booting)"))
        if self.timed_out:
            return f"the VM ran past its time bound ({self.seconds:.0f}s) and was killed"
        if not self.started:
            return f"the VM ended (linux.uml exit {self.uml_rc}) before its guest started: it did not boot"
        if self.exit is None:
            return f"the VM ended (linux.uml exit {self.uml_rc}) before the guest's tests finished"
        return f"the guest's pytest exited {self.exit} without reporting this test"


def _disk_tmp() -> str:
    """The share lives on the host's disk: in the guest, its files are reclaimable page cache."""
    for d in ("/var/tmp", tempfile.gettempdir()):
        if os.path.isdir(d) and os.access(d, os.W_OK):
            return d
    return tempfile.gettempdir()


def _shm_tmp() -> str | None:
    """UML's physical memory is a file in TMPDIR: keep it in RAM (tmpfs) rather than on disk."""
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] == "/dev/shm" and parts[2] == "tmpfs":
                    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    except OSError:
        pass
    return None


def _group_members(pgid: int) -> list[int]:
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
    pgid = proc.pid  # start_new_session: the linux.uml we started leads its own group and session
    deadline = time.monotonic() + settle_s
    while True:
        members = _group_members(pgid)
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
        left = _group_members(pgid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def boot(layout: str, nodeids: list[str], *, timeout: float, stall: float | None = None, mem: str = DEFAULT_MEM,
         env: dict[str, str] | None = None, pytest_args: list[str] | None = None,
         init_only: str | None = None, cancel: threading.Event | None = None) -> Boot:
    """Boot one VM of ``layout``, run ``nodeids`` inside with pytest, return what came back.

    Two bounds: ``timeout`` for the whole boot, and ``stall``: the VM is killed when its guest has
    reported nothing new (console, results, pytest's log) for that long. A loaded machine slows the
    guest down but it keeps reporting, so the stall bound catches a hung VM without a wall-clock
    bound tight enough to kill a slow one. ``init_only`` replaces the guest's job with a shell
    command (the harness's own tests); ``cancel`` set from another thread ends the boot early (the
    test session is over).
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown VM layout {layout!r} (one of {', '.join(LAYOUTS)})")
    res = Boot()
    base = tempfile.mkdtemp(prefix=f"swarmgate-vm-{layout}-", dir=_disk_tmp())
    uml_tmp = tempfile.mkdtemp(prefix="swarmgate-uml-", dir=_shm_tmp())
    res.paths = [base, uml_tmp]
    share, disk = os.path.join(base, "share"), os.path.join(base, "scratch.ext4")
    os.mkdir(share)
    try:
        _make_scratch(disk)
    except (OSError, subprocess.SubprocessError) as e:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(uml_tmp, ignore_errors=True)
        raise RuntimeError(f"cannot make the guest's scratch disk {disk}: {e}") from None
    console_path = os.path.join(uml_tmp, "console.txt")
    job = {"layout": layout, "checkout": CHECKOUT, "python": sys.executable, "nodeids": nodeids,
           "env": dict(env or {}), "pytest_args": list(pytest_args or []), "shell": init_only}
    with open(os.path.join(share, "job.json"), "w") as f:
        json.dump(job, f)
    umid = f"sg-{uuid.uuid4().hex[:10]}"
    argv = [binary() or "linux.uml", f"mem={mem}", "root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
            f"init={INIT}", f"ubd0={disk}", "con=null", "con0=null,fd:1", f"umid={umid}", f"uml_dir={uml_tmp}",
            # unknown name=value parameters reach init as environment variables
            f"sgvm_share={share}", f"sgvm_layout={layout}", f"sgvm_python={sys.executable}",
            f"sgvm_checkout={CHECKOUT}"]
    uml_env = {k: v for k, v in os.environ.items() if k not in ("TMP", "TEMP")}
    uml_env["TMPDIR"] = uml_tmp
    t0 = time.monotonic()
    proc = None
    progress = _Progress([console_path] + [os.path.join(share, n) for n in ("started", "results.jsonl", "pytest.log")])
    try:
        with open(console_path, "wb") as console:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                                    env=uml_env, cwd=uml_tmp, start_new_session=True)
            deadline = time.monotonic() + timeout
            while res.uml_rc is None and not (cancel is not None and cancel.is_set()):
                try:
                    res.uml_rc = proc.wait(timeout=min(0.5, max(deadline - time.monotonic(), 0.01)))
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
            if res.uml_rc is None:
                res.uml_rc = proc.returncode
        res.seconds = time.monotonic() - t0
        res.console = _read(console_path, limit=200_000)
        res.records = _records(os.path.join(share, "results.jsonl"))
        code = _read(os.path.join(share, "exit")).strip()
        res.exit = int(code) if code.lstrip("-").isdigit() else None
        res.log = _read(os.path.join(share, "pytest.log"), limit=400_000)
        res.started = os.path.exists(os.path.join(share, "started"))
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(uml_tmp, ignore_errors=True)
    return res


class _Progress:
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


def _make_scratch(path: str) -> None:
    with open(path, "wb") as f:
        f.truncate(_bytes(SCRATCH_SIZE))
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", path],
                   check=True, capture_output=True, timeout=60, env=dict(os.environ, PATH=os.environ.get(
                       "PATH", "") + ":/usr/sbin:/sbin"))


def _bytes(size: str) -> int:
    return int(size[:-1]) << {"M": 20, "G": 30}[size[-1]]


def _read(path: str, limit: int = 10_000) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def _records(path: str) -> list[dict]:
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
