"""Preflight: should this script run, and can it? (SPEC §10, seed 003 §2.1)

A script declares in its header (the leading comment block)::

    # admission: inputs-changed crates/ scripts/crash/ env:SINGLEFS_THREAD_CAP
    # run-condition: command bash git rsync python3
    # run-condition: single-instance
    # run-condition: gpu
    # run-condition: memory 8G

``admission`` answers "is this call worth making?" (an input changed since
the last success); ``run-condition`` answers "can the environment bear it?"
(tools present, a GPU, enough memory, no other instance running).
``swarmgate preflight SCRIPT [-- ARGS]`` checks them and runs the script only
when all are met; otherwise it prints each unmet condition with its way out
and exits 78 (``Exit.PREFLIGHT``), having run nothing. 78 means only this, so
a caller never mistakes "did not run" for "ran and failed".
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


from swarmgate import break_switch, procinfo, state_paths, statefile
from swarmgate.bounded_read import read_bytes
from swarmgate.exit_codes import Exit, describe
from swarmgate.front_door import entry
from swarmgate.sizes import human, parse_size
from swarmgate.tool_parser import ToolParser

HEADER_RE = re.compile(r"^#\s*(admission|run-condition)\s*:\s*(.*?)\s*$")
MAX_HEADER_LINES = 80
KNOWN_CONDITIONS = ("command", "single-instance", "gpu", "memory")


@dataclass
class Unmet:
    condition: str
    why: str
    way_out: str

    def line(self) -> str:
        return f"  - {self.condition}: {self.why}\n    way out: {self.way_out}"


@dataclass
class Header:
    inputs: list[str] = field(default_factory=list)      # admission: inputs-changed paths
    env: list[str] = field(default_factory=list)         # admission: env:VAR
    commands: list[str] = field(default_factory=list)
    single_instance: bool = False
    gpu: int = 0                                         # GPUs needed (0: none)
    memory: int = 0                                      # bytes of MemAvailable needed
    errors: list[Unmet] = field(default_factory=list)    # header lines that cannot be read

    @property
    def has_admission(self) -> bool:
        return bool(self.inputs or self.env)

    @property
    def empty(self) -> bool:
        return not (self.has_admission or self.commands or self.single_instance or self.gpu
                    or self.memory or self.errors)


def parse_header(text: str, where: str = "script") -> Header:
    """The admission and run-condition lines of the leading comment block."""
    h = Header()
    for n, raw in enumerate(text.splitlines()[:MAX_HEADER_LINES], 1):
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("#"):
            break
        m = HEADER_RE.match(line)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2)
        words = rest.split()
        if kind == "admission":
            if not words or words[0] != "inputs-changed":
                h.errors.append(Unmet(f"{where}:{n} admission", f"cannot read {rest!r}",
                                      "write `# admission: inputs-changed PATH... env:VAR`"))
                continue
            for w in words[1:]:
                if w.startswith("env:") and len(w) > 4:
                    h.env.append(w[4:])
                else:
                    h.inputs.append(w)
            continue
        cond = words[0] if words else ""
        args = words[1:]
        if cond == "command" and args:
            h.commands.extend(args)
        elif cond == "single-instance" and not args:
            h.single_instance = True
        elif cond == "gpu" and len(args) <= 1 and (not args or args[0].isdigit()):
            h.gpu = max(h.gpu, int(args[0]) if args else 1)
        elif cond == "memory" and len(args) == 1:
            try:
                h.memory = max(h.memory, parse_size(args[0]))
            except ValueError as e:
                h.errors.append(Unmet(f"{where}:{n} run-condition memory", str(e), "write e.g. `memory 8G`"))
        else:
            h.errors.append(Unmet(f"{where}:{n} run-condition", f"cannot read {rest!r}",
                                  "known: `command PROG...`, `single-instance`, `gpu [N]`, `memory SIZE`"))
    return h


def read_header(script: Path) -> Header:
    try:
        head = read_bytes(str(script), 64 * 1024, truncate=True)  # a FIFO or device is refused, not waited on
    except OSError as e:
        h = Header()
        h.errors.append(Unmet("script", f"cannot read {script}: {e.strerror}", "check the path and its permissions"))
        return h
    return parse_header(head.decode("utf-8", errors="replace"), str(script))


# --- the checks ---

def gpu_count() -> tuple[int, str]:
    """(number of NVIDIA GPUs, why none) through NVML; no driver is 0, never a crash."""
    try:
        import pynvml  # noqa: PLC0415 - only for a script declaring `gpu`; absent without NVML
    except ImportError:
        return 0, "pynvml (nvidia-ml-py) is not installed"
    try:
        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return 0, f"no NVIDIA driver ({type(e).__name__})"
    try:
        return int(pynvml.nvmlDeviceGetCount()), "no GPU visible to the driver"
    except Exception as e:  # noqa: BLE001
        return 0, f"NVML could not count GPUs ({type(e).__name__})"
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def mem_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def script_id(script: Path) -> str:
    return hashlib.sha256(str(Path(script).resolve()).encode()).hexdigest()[:24]


def _state_file(script: Path, suffix: str) -> Path:
    return state_paths.preflight_dir() / f"{script_id(script)}.{suffix}"


def fingerprint_inputs(header: Header, base: Path, env: dict[str, str] | None = None) -> str:
    """Content of every admission input (files under each path) and the env values."""
    env = os.environ if env is None else env
    h = hashlib.sha256()
    for rel in sorted(set(header.inputs)):
        p = base / rel
        h.update(f"\0path {rel}\0".encode())
        if p.is_file():
            h.update(_file_digest(p))
        elif p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if d not in (".git", "__pycache__"))
                for name in sorted(filenames):
                    fp = Path(dirpath) / name
                    h.update(f"\0file {fp.relative_to(base)}\0".encode())
                    h.update(_file_digest(fp))
        else:
            h.update(b"\0missing\0")
    for var in sorted(set(header.env)):
        val = env.get(var)
        h.update(f"\0env {var}={'<unset>' if val is None else val}\0".encode())
    return h.hexdigest()


def _file_digest(p: Path) -> bytes:
    try:
        if p.is_symlink():
            return b"link:" + os.readlink(p).encode(errors="surrogateescape")
        with open(p, "rb") as f:
            return hashlib.file_digest(f, "sha256").digest()
    except OSError as e:
        return f"unreadable:{e.errno}".encode()


def base_dir(script: Path) -> Path:
    """Admission paths are relative to the repository holding the script (else its directory)."""
    start = Path(script).resolve().parent
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


class InstanceLock:
    """single-instance: a filelock per script, held while it runs (released when we die)."""

    def __init__(self, script: Path) -> None:
        self.path = _state_file(script, "lock")
        self.holder = _state_file(script, "holder.json")
        self.lock = None

    def try_acquire(self) -> dict | None:
        """None when acquired; else the holder's record (who runs it)."""
        statefile.ensure_dir(self.path.parent)
        if os.path.islink(self.path):
            raise statefile.StateError(f"{self.path} is a symlink; refusing to use it as a lock")
        from filelock import FileLock, Timeout   # ~17 ms of import, only for a preflight that locks

        lock = FileLock(str(self.path), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            rec = statefile.read_json(self.holder, {})
            return rec if isinstance(rec, dict) else {}
        me = procinfo.identity()
        try:
            statefile.write_json_atomic(self.holder, {**me, "since": int(time.time()), "argv": sys.argv[:8]})
        except BaseException:   # a holder nobody could name: not a lock taken (check says why: 78)
            lock.release()
            raise
        self.lock = lock
        return None

    def release(self) -> None:
        if self.lock is not None:
            try:
                os.unlink(self.holder)
            except OSError:
                pass
            self.lock.release()
            self.lock = None


def check(header: Header, script: Path, *, admission: bool = True, lock: InstanceLock | None = None,
          env: dict[str, str] | None = None) -> tuple[list[Unmet], str | None]:
    """Unmet conditions (empty: run it) and the admission fingerprint to record on success."""
    env = os.environ if env is None else env
    if break_switch.broken("preflight-ignores-conditions"):
        return [], None
    unmet: list[Unmet] = list(header.errors)
    if header.commands:
        missing = [c for c in header.commands if not shutil.which(c, path=env.get("PATH", os.defpath))]
        if missing:
            unmet.append(Unmet("run-condition: command", "not found on PATH: " + ", ".join(missing),
                               f"install {', '.join(missing)} or put {'them' if len(missing) > 1 else 'it'} on PATH"))
    if header.gpu:
        n, why = gpu_count()
        if n < header.gpu:
            unmet.append(Unmet("run-condition: gpu", f"needs {header.gpu} GPU(s), found {n}: {why}",
                               "run it on a machine with a GPU (`host-dispatch` places it where one is free)"))
    if header.memory:
        avail = mem_available()
        if avail < header.memory:
            unmet.append(Unmet("run-condition: memory",
                               f"needs {human(header.memory)} available, MemAvailable is {human(avail)}",
                               "wait for running jobs to finish (`swarmgate status`), or run it where it "
                               "fits (`host-dispatch`)"))
    fingerprint = None
    if header.has_admission:
        fingerprint = fingerprint_inputs(header, base_dir(script), env)
        if admission:
            last = statefile.read_json(_state_file(script, "json"), {})
            if isinstance(last, dict) and last.get("fingerprint") == fingerprint:
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last.get("at", 0)))
                what = " ".join([*header.inputs, *(f"env:{v}" for v in header.env)])
                unmet.append(Unmet("admission: inputs-changed",
                                   f"nothing changed in {what} since the last success ({when})",
                                   "nothing to do: that run passed with these inputs; change an input, or "
                                   "pass --force to run anyway"))
    if header.single_instance and lock is not None and not unmet:
        try:
            holder = lock.try_acquire()
        except statefile.StateError as e:   # a full or read-only state filesystem: the condition fails
            holder = None
            unmet.append(Unmet("run-condition: single-instance", f"the instance lock could not be taken: {e}",
                               "make room on (or repair) the state filesystem, then run it again"))
        if holder is not None:
            who = f"pid {holder.get('pid')}" if holder.get("pid") else "another process"
            since = holder.get("since")
            when = time.strftime(" since %H:%M:%S", time.localtime(since)) if since else ""
            unmet.append(Unmet("run-condition: single-instance", f"already running ({who}{when})",
                               "wait for it to finish; do not start a second copy"))
    return unmet, fingerprint


def record_success(script: Path, fingerprint: str) -> None:
    statefile.write_json_atomic(_state_file(script, "json"),
                                {"script": str(Path(script).resolve()), "fingerprint": fingerprint,
                                 "at": int(time.time())})


def format_unmet(script: str, unmet: list[Unmet]) -> str:
    lines = [f"preflight: not running {script}: {len(unmet)} condition(s) not met"]
    lines += [u.line() for u in unmet]
    lines.append(f"exit {describe(Exit.PREFLIGHT)}")
    return "\n".join(lines)


def script_argv(script: Path, args: list[str]) -> list[str]:
    if os.access(script, os.X_OK):
        return [str(script), *args]
    try:
        with open(script, "rb") as f:
            first = f.readline(512).decode(errors="replace")
    except OSError:
        first = ""
    if first.startswith("#!"):
        return [*shlex.split(first[2:].strip()), str(script), *args]
    if str(script).endswith(".py"):
        return [sys.executable, str(script), *args]
    return ["sh", str(script), *args]


@entry("preflight")
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    if "--" in args:
        i = args.index("--")
        args, script_args = args[:i], args[i + 1:]
    p = ToolParser(
        prog="swarmgate preflight",
        description="Check a script's `# admission:` and `# run-condition:` header lines; run it only if met "
                    "(else list what is missing and exit 78, running nothing).")
    p.add_argument("script", help="the script to check and run")
    p.add_argument("--check", action="store_true", help="only check: exit 0 if it would run, 78 if not")
    p.add_argument("--force", action="store_true", help="ignore the admission (inputs-changed) check")
    p.add_argument("--json", action="store_true", help="print the unmet conditions as JSON")
    ns = p.parse_args(args)
    script = Path(ns.script)
    if not script.is_file():
        print(f"swarmgate preflight: {script}: no such file (give the path of the script to run)", file=sys.stderr)
        return Exit.USAGE
    header = read_header(script)
    lock = InstanceLock(script) if header.single_instance and not ns.check else None
    try:
        unmet, fingerprint = check(header, script, admission=not ns.force, lock=lock)
        if unmet:
            if ns.json:
                print(json.dumps({"script": str(script), "exit": int(Exit.PREFLIGHT),
                                  "unmet": [u.__dict__ for u in unmet]}, indent=1))
            else:
                print(format_unmet(str(script), unmet), file=sys.stderr)
            return Exit.PREFLIGHT
        if ns.check:
            print(f"preflight: {script}: every condition met")
            return Exit.OK
        try:
            rc = subprocess.run(script_argv(script, script_args)).returncode
        except OSError as e:
            print(f"swarmgate preflight: cannot start {script}: {e.strerror}", file=sys.stderr)
            return Exit.USAGE
        if rc < 0:
            rc = 128 - rc
        if rc == 0 and fingerprint is not None:
            try:
                record_success(script, fingerprint)
            except statefile.StateError as e:   # it ran and passed: its code stands, the next run is not skipped
                print(f"swarmgate preflight: {script} passed, but its success was not recorded: {e}",
                      file=sys.stderr)
        return rc
    finally:
        if lock is not None:
            lock.release()
