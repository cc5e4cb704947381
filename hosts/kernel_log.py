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


def oom_lines(messages: list[str]) -> list[dict]:
    """The OOM killer's lines as {"oom_memcg", "task_memcg", "pid", "task"}."""
    out = []
    for m in messages:
        if "oom_memcg=" not in m or "task_memcg=" not in m:
            continue
        fields = {}
        for part in m.split(","):
            k, sep, v = part.partition("=")
            if sep:
                fields[k.strip().rsplit(":", 1)[-1]] = v.strip()
        out.append({"oom_memcg": fields.get("oom_memcg", ""), "task_memcg": fields.get("task_memcg", ""),
                    "pid": fields.get("pid", ""), "task": fields.get("task", "")})
    return out


def gpu_oom(messages: list[str]) -> bool:
    return any("NV_ERR_NO_MEMORY" in m for m in messages)
