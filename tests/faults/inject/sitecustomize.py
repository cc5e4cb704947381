"""Fault injection at swarmgate's one state-write layer, loaded only by the fault harness's subprocesses.

tests/faults/harness.py puts this directory first on PYTHONPATH and sets SWARMGATE_FAULT; Python then
imports this module at start-up (site.py), before the tool runs. Unset, it does nothing at all (and no
product code knows it exists). It wraps the two write primitives of swarmgate/statefile.py that every
state write goes through (write_text_atomic, which write_json_atomic calls, and append_jsonl):

- ``count``: every write is numbered across all the processes of a run (a counter file under
  SWARMGATE_FAULT_DIR, taken under flock) and its path is noted in ``trace``;
- ``fail:N``: the Nth write fails as a full / read-only / failing / over-quota filesystem would
  (ENOSPC, EROFS, EIO, EDQUOT by N), raised as the primitive itself raises it (StateWriteError);
- ``kill-before:N`` / ``kill-after:N``: the process writing the Nth write is SIGKILLed just before
  it, or just after it is done (CrashMonkey's crash points).
"""
import fcntl
import os
import signal

_SPEC = os.environ.get("SWARMGATE_FAULT", "")
_ERRNOS = (28, 30, 5, 122)  # ENOSPC, EROFS, EIO, EDQUOT


def _next(path) -> int:
    d = os.environ["SWARMGATE_FAULT_DIR"]
    fd = os.open(os.path.join(d, "counter"), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"x")
        n = os.fstat(fd).st_size
        with open(os.path.join(d, "trace"), "a") as f:
            f.write(f"{n}\t{os.getpid()}\t{os.fspath(path)}\n")
        return n
    finally:
        os.close(fd)


def _wrap(statefile, name: str) -> None:
    real = getattr(statefile, name)
    mode, _, at = _SPEC.partition(":")
    target = int(at) if at else 0

    def injected(path, *args, **kwargs):
        n = _next(path)
        if n == target:
            if mode == "fail":
                err = _ERRNOS[(n - 1) % len(_ERRNOS)]
                raise statefile.StateWriteError(os.fspath(path), OSError(err, os.strerror(err)))
            if mode == "kill-before":
                os.kill(os.getpid(), signal.SIGKILL)
        out = real(path, *args, **kwargs)
        if n == target and mode == "kill-after":
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    setattr(statefile, name, injected)


if _SPEC:
    from swarmgate import statefile as _statefile

    _wrap(_statefile, "write_text_atomic")
    _wrap(_statefile, "append_jsonl")
