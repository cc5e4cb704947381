"""Reading a file someone else may have put there: bounded in bytes and in time.

Every file a hook reads (the config, state files, caches, transcripts, scripts and Makefiles the
bash reader follows) goes through here, because the hook must answer within its timeout or the
client decides without it. What is at a path is not trusted:

- the file is opened with O_NONBLOCK, so a FIFO with no writer opens at once instead of holding
  the hook until a writer comes (a FIFO transcript answered after 27 s);
- it must be a regular file (checked on the opened descriptor, not by a stat before the open):
  a FIFO, a device (a config symlinked to /dev/zero reads forever), a directory or a socket is
  refused with FileRefused;
- it is read up to ``max_bytes``: larger is refused (or, with ``truncate=True``, its first
  ``max_bytes`` are returned), and a file that grows while it is read is refused too;
- an optional ``deadline`` (time.monotonic()) is checked between 1 MiB chunks.

``follow=False`` adds O_NOFOLLOW (state files: a planted symlink is refused, never followed).
FileRefused is an OSError, so a caller that treats an unreadable file as unreadable needs no new
``except``; its ``strerror`` says why in words.

Hot path: imports only os and stat (time only when a deadline is given).
"""
from __future__ import annotations

import errno
from swarmgate import lean_os as os
import stat

CHUNK = 1 << 20
TRANSCRIPT_MAX = 64 << 20  # a transcript larger than this is reported as unreadable, never half judged

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"))


class FileRefused(OSError):
    """The file is not a regular file, is too large, or took too long to read."""


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """(fd, its stat) of the regular file at ``path``; FileRefused for anything else.

    The caller closes the fd. O_NONBLOCK is cleared again once the file is known to be regular."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow:
            raise FileRefused(errno.ELOOP, "it is a symlink; refusing to follow it", path) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(errno.EINVAL, f"it is {kind_of(st.st_mode)}, not a regular file", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, path: str, max_bytes: int, *, truncate: bool = False, deadline: float | None = None) -> bytes:
    """Up to ``max_bytes`` of an open regular file, from its current offset."""
    chunks = []
    total = 0
    while True:
        if deadline is not None:
            import time
            if time.monotonic() > deadline:
                raise FileRefused(errno.ETIMEDOUT, "reading it took longer than the time left", path)
        want = min(CHUNK, max_bytes + 1 - total)
        if want <= 0:
            break
        data = os.read(fd, want)
        if not data:
            break
        chunks.append(data)
        total += len(data)
    blob = b"".join(chunks)
    if len(blob) > max_bytes:
        if truncate:
            return blob[:max_bytes]
        raise FileRefused(errno.EFBIG, f"it is larger than {max_bytes} bytes", path)
    return blob


def read_bytes(path: str, max_bytes: int, *, follow: bool = True, truncate: bool = False,
               deadline: float | None = None) -> bytes:
    """The content of the regular file at ``path`` (see the module doc for what is refused)."""
    path = os.fspath(path)
    fd, st = open_regular(path, follow=follow)
    try:
        if st.st_size > max_bytes and not truncate:
            raise FileRefused(errno.EFBIG, f"it is {st.st_size} bytes, over the {max_bytes}-byte limit", path)
        return read_fd(fd, path, max_bytes, truncate=truncate, deadline=deadline)
    finally:
        os.close(fd)


def read_text(path: str, max_bytes: int, *, follow: bool = True, truncate: bool = False,
              deadline: float | None = None, errors: str = "replace") -> str:
    """read_bytes decoded as UTF-8 (``errors`` as for bytes.decode)."""
    return read_bytes(path, max_bytes, follow=follow, truncate=truncate, deadline=deadline).decode(
        "utf-8", errors)


def probe(path: str, *, follow: bool = True) -> str | None:
    """Why ``path`` cannot be read as a regular file, or None when it can (nothing is read)."""
    try:
        fd, _ = open_regular(os.fspath(path), follow=follow)
    except OSError as e:
        return e.strerror or type(e).__name__
    os.close(fd)
    return None
