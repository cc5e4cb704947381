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

import contextlib
import json
import os
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator


class StateError(Exception):
    """A state path cannot be used safely (e.g. a planted symlink)."""


def _warn(msg: str) -> None:
    print(f"swarmgate: {msg}", file=sys.stderr)


def ensure_dir(path: Path, mode: int = 0o755) -> Path:
    """mkdir -p that refuses to walk through a symlink at the last component."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True, exist_ok=True, mode=mode)
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise StateError(f"{path} is a symlink; refusing to use it as a state directory")
    if not stat.S_ISDIR(st.st_mode):
        raise StateError(f"{path} exists and is not a directory")
    return path


def _open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == 40:  # ELOOP: the last component is a symlink
            raise StateError(f"{path} is a symlink; refusing to follow it") from None
        raise


def read_text(path: Path) -> str | None:
    """File content, or None if absent. Raises StateError on a symlink."""
    try:
        fd = _open_nofollow(Path(path), os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as f:
        return f.read()


def quarantine(path: Path, why: str, report: Callable[[str], None] | None = None) -> None:
    """Move a corrupt file aside (path.corrupt-<time>) and say so."""
    path = Path(path)
    dest = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    n = 1
    while os.path.lexists(dest):  # never overwrite an earlier quarantined copy
        dest = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{n}")
        n += 1
    with contextlib.suppress(OSError):
        os.replace(path, dest)
    (report or _warn)(f"state file {path} was corrupt ({why}); moved to {dest.name} and rebuilt")


def read_json(path: Path, default: Any, *, expect: type | None = dict,
              report: Callable[[str], None] | None = None) -> Any:
    """Parsed JSON, or ``default`` when absent or corrupt (corrupt: reported, moved aside)."""
    text = read_text(path)
    if text is None:
        return default
    try:
        data = json.loads(text)
    except ValueError as e:
        quarantine(path, f"not JSON: {e}", report)
        return default
    if expect is not None and not isinstance(data, expect):
        quarantine(path, f"expected a JSON {expect.__name__}, found {type(data).__name__}", report)
        return default
    return data


def write_text_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    path = Path(path)
    ensure_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)  # replaces a planted symlink itself, never its target
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def append_jsonl(path: Path, record: dict) -> None:
    """Append one JSON line with a single O_APPEND write (atomic for small records)."""
    path = Path(path)
    line = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    try:
        fd = _open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    except FileNotFoundError:
        ensure_dir(path.parent)
        fd = _open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


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
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield rec


@contextlib.contextmanager
def locked(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """An exclusive filelock at ``path`` (a sibling ``.lock`` file is the usual choice)."""
    from filelock import FileLock, Timeout

    path = Path(path)
    ensure_dir(path.parent)
    if os.path.islink(path):
        raise StateError(f"{path} is a symlink; refusing to use it as a lock")
    lock = FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise StateError(f"could not take the lock {path} within {timeout:.0f}s") from None
    try:
        yield
    finally:
        lock.release()
