"""State files: atomic writes, tolerant reads, locks, no symlink following.

Every state file swarmgate keeps goes through here:
- writes are a temp file in the same directory + fsync + os.replace, so a
  reader sees the old content or the new, never half;
- reads never follow a symlink (O_NOFOLLOW) and never raise on a corrupt
  file: the bad file is moved aside, reported once, and the caller gets its
  default back to rebuild from;
- locks are filelock locks beside the file.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import stat
import sys

from swarmgate import fast_json

# Hot path: hooks append to the decision log and keep session state through
# this module, so it imports nothing heavy at load time (no pathlib, tempfile,
# typing, contextlib); paths may be str or Path. Annotations are never evaluated:
# the names they use are imported for type checkers only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any


class StateError(Exception):
    """A state path cannot be used safely (e.g. a planted symlink)."""


class StateWriteError(StateError, OSError):
    """A state file could not be written (a full disk, a read-only or failing filesystem, a quota).

    Both a StateError (a tool answers it with its set-up code and one line naming the path and the
    errno, never a traceback) and an OSError (callers that already treated a failed write as one
    keep doing so)."""

    def __init__(self, path: str, err: OSError) -> None:
        self.path = path
        self.message = f"cannot write {path}: {err.strerror or err} ({errno_name(err.errno)})"
        super().__init__(self.message)
        self.errno = err.errno
        self.strerror = err.strerror

    def __str__(self) -> str:  # OSError's would print "[Errno 28] ..." without the path
        return self.message


def errno_name(n: int | None) -> str:
    """ENOSPC for 28, and so on (the errno module's names; ``errno N`` for one it does not know)."""
    import errno

    return errno.errorcode.get(n or 0, f"errno {n}")


def os_error_line(e: OSError) -> str:
    """An OSError as one line: the path, what happened and the errno's name."""
    where = f"{e.filename}: " if e.filename else ""
    return f"{where}{e.strerror or e} ({errno_name(e.errno)})"


def _warn(msg: str) -> None:
    print(f"swarmgate: {msg}", file=sys.stderr)


def ensure_dir(path: Path, mode: int = 0o755) -> Path:
    """mkdir -p that refuses to walk through a symlink at the last component."""
    from pathlib import Path

    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            os.makedirs(path, mode=mode, exist_ok=True)
        except OSError as e:   # a full, read-only or failing filesystem: the path and the errno, one line
            raise StateWriteError(str(path), e) from None
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise StateError(f"{path} is a symlink; refusing to use it as a state directory")
    if not stat.S_ISDIR(st.st_mode):
        raise StateError(f"{path} exists and is not a directory")
    return path


def ensure_private_dir(path: str) -> str:
    """A directory only this user can use (mode 0700, owned by us, not a symlink), made if absent;
    StateError when what is there is anything else (e.g. planted by another user in /tmp)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise StateError(f"{path} is not a private directory of this user; refusing to use it")
    return path


def _open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == 40:  # ELOOP: the last component is a symlink
            raise StateError(f"{path} is a symlink; refusing to follow it") from None
        raise


STATE_MAX_BYTES = 256 << 20  # a bound, not a size any state file should reach


def read_text(path: Path, max_bytes: int = STATE_MAX_BYTES) -> str | None:
    """File content, or None if absent. Raises StateError on a symlink, on anything but a regular
    file (a planted FIFO or device) and on a file over ``max_bytes`` (swarmgate.bounded_read)."""
    from swarmgate.bounded_read import FileRefused, open_regular, read_fd

    path = os.fspath(path)
    try:
        fd, _ = open_regular(path, follow=False)
    except FileNotFoundError:
        return None
    except FileRefused as e:
        raise StateError(f"{path}: {e.strerror}") from None
    try:
        return read_fd(fd, path, max_bytes).decode("utf-8", "replace")
    except FileRefused as e:
        raise StateError(f"{path}: {e.strerror}") from None
    finally:
        os.close(fd)


def quarantine(path: Path, why: str, report: Callable[[str], None] | None = None) -> None:
    """Move a corrupt file aside (path.corrupt-<time>) and say so."""
    import time
    from pathlib import Path

    path = Path(path)
    dest = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    n = 1
    while os.path.lexists(dest):  # never overwrite an earlier quarantined copy
        dest = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{n}")
        n += 1
    try:
        os.replace(path, dest)
    except OSError:
        pass
    (report or _warn)(f"state file {path} was corrupt ({why}); moved to {dest.name} and rebuilt")


def read_json(path: Path, default: Any, *, expect: type | None = dict,
              report: Callable[[str], None] | None = None) -> Any:
    """Parsed JSON, or ``default`` when absent or corrupt (corrupt: reported, moved aside)."""
    text = read_text(path)
    if text is None:
        return default
    try:
        data = fast_json.loads(text)
    except ValueError as e:
        quarantine(path, f"not JSON: {e}", report)
        return default
    if expect is not None and not isinstance(data, expect):
        quarantine(path, f"expected a JSON {expect.__name__}, found {type(data).__name__}", report)
        return default
    return data


def write_text_atomic(path: Path, text: str, mode: int = 0o644, *, durable: bool = True) -> None:
    """Replace ``path`` atomically; ``durable=False`` skips the fsync (state rebuilt anyway after a crash)."""
    path = os.fspath(path)
    parent, name = os.path.split(os.path.abspath(path))
    ensure_dir(parent)
    # an exclusive, never-followed temp name in the same directory (tempfile costs ms to import)
    tmp = os.path.join(parent, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise StateWriteError(path, e) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)  # replaces a planted symlink itself, never its target
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not isinstance(e, StateError):
            raise StateWriteError(path, e) from None
        raise


def write_json_atomic(path: Path, data: Any, *, durable: bool = True) -> None:
    import json

    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n", durable=durable)


def append_jsonl(path: Path, record: dict) -> None:
    """Append one JSON line with a single O_APPEND write (atomic for small records)."""
    path = os.fspath(path)
    # backslashreplace: a lone surrogate (a file name read back with surrogateescape) becomes its
    # JSON escape, so the line stays valid UTF-8 and valid JSON instead of raising
    line = (fast_json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode(
        "utf-8", "backslashreplace")
    try:
        try:
            fd = _open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except FileNotFoundError:
            ensure_dir(os.path.dirname(os.path.abspath(path)))
            fd = _open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError as e:   # a full disk, a read-only or failing filesystem: the path and the errno
        if isinstance(e, StateError):
            raise
        raise StateWriteError(path, e) from None


def read_jsonl(path: Path) -> Iterator[dict]:
    """Records of a JSON-lines file; bad lines are skipped (a torn write loses one line, not the file)."""
    text = read_text(path)
    if not text:
        return
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rec = fast_json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield rec


def tail_jsonl(path: Path, limit: int) -> list[dict]:
    """The records in the last ``limit`` bytes of a JSON-lines file (first partial line dropped)."""
    from swarmgate.bounded_read import open_regular

    try:
        fd, _ = open_regular(str(path), follow=False)  # never a planted FIFO or symlink
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - limit)
        os.lseek(fd, start, 0)
        data = b""
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]
    out = []
    for line in lines:
        try:
            rec = fast_json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out



class locked:
    """An exclusive lock at ``path`` (a sibling ``.lock`` file is the usual choice).

    ``with locked(path, timeout):`` — StateError when it cannot be taken in time
    or the lock path is a planted symlink or not a regular file.

    It is an flock(2) on the lock file, exactly what filelock's UnixFileLock
    takes, so it excludes (and is excluded by) filelock.FileLock on the same
    path. It does not import filelock: that import costs ~60 ms of CPU here
    (typing, dataclasses, hashlib, threading), more than a whole hook call, and
    hooks that keep session state lock on every call. Hardening: the file is
    opened with O_NOFOLLOW (a planted symlink is refused, never followed) and
    must be a regular file; it is never unlinked (unlinking a lock file races).
    """

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> None:
        import fcntl
        import time

        ensure_dir(os.path.dirname(os.path.abspath(self.path)))
        try:
            fd = _open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except StateError:
            raise
        except OSError as e:   # a lock file that cannot be made (a read-only or failing filesystem)
            raise StateWriteError(self.path, e) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StateError(f"{self.path} is not a regular file; refusing to use it as a lock")
            deadline = time.monotonic() + max(0.0, self.timeout)
            delay = 0.005
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise StateError(f"could not take the lock {self.path} within {self.timeout:.0f}s") from None
                    time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                    delay = min(delay * 2, 0.05)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return None

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            import fcntl

            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None
