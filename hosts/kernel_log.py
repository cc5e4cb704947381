"""The kernel log between a run's start and its end, read from /dev/kmsg.

Opened (and moved to the end) before the command starts; read once after it
ended. Two things are looked for: the OOM killer's line
``oom-kill:...,oom_memcg=/slice/run,task_memcg=/slice/run,...`` (which cgroup's
limit was hit, which cgroup the victim was in) and the NVIDIA driver's
``NV_ERR_NO_MEMORY``. Where /dev/kmsg cannot be read, both are unknown and
the runner falls back to the cgroup counters. Only the kernel's own messages
count (facility 0): a program cannot fake an OOM or a GPU line by writing to
/dev/kmsg, since the kernel files user-space writes under another facility.
"""
from __future__ import annotations

import errno
import os
import re


class KernelLog:
    def __init__(self, path: str = "/dev/kmsg") -> None:
        self.fd: int | None = None
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            os.lseek(self.fd, 0, os.SEEK_END)
        except OSError:
            self.close()

    @property
    def readable(self) -> bool:
        return self.fd is not None

    def read_new(self, limit: int = 20000) -> list[str] | None:
        """Messages logged since the open (or the last read); None when unreadable."""
        if self.fd is None:
            return None
        out: list[str] = []
        while len(out) < limit:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:  # overwritten under us: keep reading from the next one
                    continue
                break
            if not rec:
                break
            text = rec.decode("utf-8", "replace")
            head, _, msg = text.partition(";")
            try:
                facility = int(head.split(",", 1)[0]) >> 3
            except ValueError:
                continue
            if facility != 0:
                continue  # written by a user-space program (anyone may write /dev/kmsg): not the kernel
            out.append(msg.split("\n", 1)[0])
        return out

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
        self.fd = None


def oom_summary(message: str) -> dict | None:
    """The fields of the OOM killer's summary line, wherever it sits in ``message`` (after a
    /dev/kmsg header, a dmesg or journalctl stamp): ``oom-kill:constraint=CONSTRAINT_MEMCG,...,
    oom_memcg=/P,task_memcg=/P/A,task=python3,pid=15282,uid=0`` as {key: value} (a word without
    ``=`` maps to True); None for any other line. The one parser of that line: the runner reads
    it from /dev/kmsg (``oom_lines``), SessionStart from dmesg/journalctl (hooks/kernel_oom.py)."""
    i = message.find("oom-kill:")
    if i < 0:
        return None
    fields: dict = {}
    for part in message[i + len("oom-kill:"):].split(","):
        k, sep, v = part.partition("=")
        fields[k.strip()] = v.strip() if sep else True
    return fields


def oom_lines(messages: list[str]) -> list[dict]:
    """The OOM killer's lines as {"oom_memcg", "task_memcg", "pid", "task", "usage"}.

    ``usage``: the bytes ``oom_memcg`` held when the kernel decided to kill (its report's
    ``memory: usage 49152kB, limit 49152kB, failcnt 12``, logged before the summary line under the
    same OOM lock), or None where that line was not seen. It is the run's peak when systemd removed
    the scope, and with it memory.peak, before anyone could read it.
    """
    out = []
    usage = None
    for m in messages:
        u = _USAGE.match(m)
        if u:
            usage = int(u.group(1)) * 1024
            continue
        f = oom_summary(m)
        if not f or not isinstance(f.get("oom_memcg"), str) or not isinstance(f.get("task_memcg"), str):
            continue
        line = {k: f[k] if isinstance(f.get(k), str) else "" for k in ("oom_memcg", "task_memcg", "pid", "task")}
        line["usage"], usage = usage, None
        out.append(line)
    return out


_USAGE = re.compile(r"memory: usage (\d+)kB, limit \d+kB")


def gpu_oom(messages: list[str]) -> bool:
    return any("NV_ERR_NO_MEMORY" in m for m in messages)
