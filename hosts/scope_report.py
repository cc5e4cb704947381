"""What a systemd scope's shell tells the wrapper through fd 3 (the systemd backend).

Two things cannot be seen from outside a transient scope:
- systemd removes the scope's cgroup the moment its last process exits, so the run's final
  ``memory.peak`` and ``memory.events.local`` are gone before the wrapper could read them;
- when ``systemd-run`` itself fails (no scope, no bus), its exit code looks like the command's.

So the command runs as ``systemd-run --scope ... -- /bin/sh -c SCRIPT swarmgate-run SCOPE COMMAND...``
with fd 3 a pipe to the wrapper. The shell, already inside the scope, writes ``started``, runs the
command (fd 3 closed for it: the command inherits nothing new), then writes the command's status and
the scope's peak and local events while the scope still exists, and exits with the command's status.
No ``started``: systemd-run failed before anything ran (exit 251). The shell uses built-ins only
(no process beyond the command). A run the shell does not survive (a signal, an OOM kill with
OOMPolicy=stop) reports only ``started``; the runner then has its samples and the kernel's OOM line.

Run-path module: standard library only.
"""
from __future__ import annotations

import os

FD = 3
SCRIPT = ('cg=$1; shift; echo started >&3; "$@" 3>&-; rc=$?; '
          '{ echo "rc $rc"; read -r v < "$cg/memory.peak" && echo "peak $v"; '
          'while read -r k v; do echo "event $k $v"; done < "$cg/memory.events.local"; } >&3 2>/dev/null; '
          'exit $rc')
ARGV0 = "swarmgate-run"  # $0 of the shell: what `ps` shows for it


def wrap(scope_path: str, argv: list[str]) -> list[str]:
    """The argv after systemd-run's ``--``."""
    return ["/bin/sh", "-c", SCRIPT, ARGV0, scope_path, *argv]


class Report:
    __slots__ = ("started", "rc", "peak", "events")

    def __init__(self) -> None:
        self.started = False
        self.rc: int | None = None
        self.peak: int | None = None
        self.events: dict[str, int] = {}


def parse(data: bytes) -> Report:
    rep = Report()
    for line in data.decode("ascii", "replace").splitlines():
        words = line.split()
        try:
            if words == ["started"]:
                rep.started = True
            elif len(words) == 2 and words[0] == "rc":
                rep.rc = int(words[1])
            elif len(words) == 2 and words[0] == "peak":
                rep.peak = int(words[1])
            elif len(words) == 3 and words[0] == "event":
                rep.events[words[1]] = int(words[2])
        except ValueError:
            continue
    return rep


def read(fd: int, limit: int = 64 * 1024) -> Report:
    """Everything the shell wrote (it has exited: the pipe ends), parsed; the fd is closed."""
    chunks: list[bytes] = []
    os.set_blocking(fd, False)
    try:
        while sum(map(len, chunks)) < limit:
            try:
                b = os.read(fd, 4096)
            except BlockingIOError:
                break
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(fd)
    return parse(b"".join(chunks))


def merge(c, rep: Report):
    """The counters (a cgroups.Counters: the samples) with the shell's final values laid over them (the
    peak is the highest). The caller makes the Counters: hosts/cgroups.py builds its command with wrap."""
    if rep.peak is not None:
        c.peak = max(c.peak or 0, rep.peak)
    if rep.events:
        c.oom = rep.events.get("oom", c.oom or 0)
        c.oom_kill = rep.events.get("oom_kill", c.oom_kill)
        c.failcnt = rep.events.get("max", c.failcnt)
    return c
