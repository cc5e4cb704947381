"""The user-mode Linux backend: Debian's ``linux.uml`` (6.1um), a kernel that runs as host processes.

The last backend tried (tests/vm/backends.py): it needs no emulation, but its kernel runs on the
host CPU, and on a CPU with AMX it panics at init whatever the init (FACTS.md, 2026-12-01). It has
no PSI (systemd-oomd cannot run) and one virtual CPU.

The guest's root is the host's ``/`` through hostfs, mounted **read-only**; the share is a second
hostfs mount at /run/sgvm/share, the scratch disk the UML block device ubda. UML forks several host
processes (one per guest address space, plus helpers), all in the process group of the
``linux.uml`` started in a new session (tests/vm/machine.py kills each by pid). UML's own files (its
physical memory file, the umid directory with the pid file and mconsole socket) go to the boot's
private directory (``TMPDIR`` and ``uml_dir=``, in /dev/shm), removed afterwards.
"""
from __future__ import annotations

import os
import shutil
import uuid

from tests.vm import machine

NAME = "uml"


def binary() -> str | None:
    return shutil.which("linux.uml") or (os.path.exists("/usr/bin/linux.uml") and "/usr/bin/linux.uml") or None


def unavailable() -> str | None:
    """None when this backend can be tried here, else why not (and how to get it)."""
    if binary() is None:
        return "user-mode Linux is not installed (apt-get install user-mode-linux)"
    return None


class Backend:
    name = NAME

    def launch(self, job: machine.Job, dirs: machine.Dirs) -> machine.Launch:
        console = os.path.join(dirs.private, "console.txt")
        argv = [binary() or "linux.uml", f"mem={job.mem}", "root=/dev/root", "rootfstype=hostfs", "rootflags=/",
                "ro", f"init={machine.INIT}", f"ubd0={dirs.disk}", "con=null", "con0=null,fd:1",
                f"umid=sg-{uuid.uuid4().hex[:10]}", f"uml_dir={dirs.private}",
                *machine.guest_params(job.layout, dirs.share, NAME)]
        env = {k: v for k, v in os.environ.items() if k not in ("TMP", "TEMP")}
        env["TMPDIR"] = dirs.private
        return machine.Launch(argv=argv, env=env, cwd=dirs.private, console=console)
