"""os for the hook's hot path, without importing os: the modules a hook call loads on every tool
call write ``from swarmgate import lean_os as os`` and call what they always called.

`import os` costs ~1.5 ms of CPU here (os.py builds its environ on collections.abc, whose two dozen
ABCs are a sixth of a bare interpreter's start again; bench/hook_latency.py), and everything the hook
calls of it is posix's own: os re-exports it. What os adds in Python is here in a few lines
(makedirs, fdopen, the path functions in swarmgate/lean_path.py); execvp, which no judgement needs,
loads os itself.

``environ`` is os.environ itself once anything in the process has imported os, else a read-only
view of the environment the process started with (lean_path.environ, which expanduser reads too).
"""
from posix import (
    O_APPEND,
    O_CLOEXEC,
    O_CREAT,
    O_DIRECTORY,
    O_EXCL,
    O_NOFOLLOW,
    O_NONBLOCK,
    O_RDONLY,
    O_RDWR,
    O_TRUNC,
    O_WRONLY,
    R_OK,
    W_OK,
    X_OK,
    access,
    chmod,
    close,
    fspath,
    fstat,
    fsync,
    getcwd,
    getpid,
    getppid,
    getuid,
    listdir,
    lseek,
    lstat,
    mkdir,
    open,
    read,
    readlink,
    remove,
    rename,
    replace,
    rmdir,
    set_blocking,
    stat,
    stat_result,
    unlink,
    urandom,
    write,
)

from swarmgate import lean_path as path

# (environ is served by __getattr__, below)
__all__ = ["O_APPEND", "O_CLOEXEC", "O_CREAT", "O_DIRECTORY", "O_EXCL", "O_NOFOLLOW", "O_NONBLOCK", "O_RDONLY",
           "O_RDWR", "O_TRUNC", "O_WRONLY", "R_OK", "W_OK", "X_OK", "access", "chmod", "close",
           "execvp", "fdopen", "fspath", "fstat", "fsync", "getcwd", "getpid", "getppid", "getuid", "listdir",
           "lseek", "lstat", "makedirs", "mkdir", "open", "path", "read", "readlink", "remove", "rename",
           "replace", "rmdir", "set_blocking", "stat", "stat_result", "unlink", "urandom", "write"]

sep = "/"


def __getattr__(name: str):
    if name == "environ":
        return path.environ()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def makedirs(name, mode: int = 0o777, exist_ok: bool = False) -> None:
    """os.makedirs."""
    head, tail = path.split(name)
    if not tail:
        head, tail = path.split(head)
    if head and tail and not path.exists(head):
        try:
            makedirs(head, exist_ok=exist_ok)
        except FileExistsError:
            pass
        if tail == ".":
            return
    try:
        mkdir(name, mode)
    except OSError:
        if not exist_ok or not path.isdir(name):
            raise


def fdopen(fd: int, mode: str = "r", buffering: int = -1, encoding: str | None = None, *args, **kwargs):
    """os.fdopen."""
    if not isinstance(fd, int):
        raise TypeError(f"invalid fd type ({type(fd)}, expected integer)")
    import io
    return io.open(fd, mode, buffering, encoding, *args, **kwargs)  # noqa: UP020 - open here is posix.open


def execvp(file: str, args) -> None:
    """os.execvp (it searches PATH in Python: os's own)."""
    import os
    os.execvp(file, args)
