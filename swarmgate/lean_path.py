"""os.path (posixpath) for the hook's hot path, on posix alone: posixpath imports os, and `import os`
costs ~1.5 ms of CPU before every tool call (swarmgate/lean_os.py says why).

The functions the hook's modules call, for str paths (and path-like objects, through fspath), with
posixpath's results: adapted from CPython 3.11's Lib/posixpath.py and Lib/genericpath.py (PSF
licence), without the bytes branches. tests/swarmgate/lean_path_test.py holds each to posixpath on
generated paths and on a real tree with symlinks (loops included).
"""
import sys
from posix import _path_normpath, fspath, getcwd, getuid, lstat, readlink, stat

_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFREG = 0o100000
_S_IFLNK = 0o120000


def isabs(s) -> bool:
    return fspath(s).startswith("/")


def join(a, *p) -> str:
    path = fspath(a)
    for b in p:
        b = fspath(b)
        if b.startswith("/"):
            path = b
        elif not path or path.endswith("/"):
            path += b
        else:
            path += "/" + b
    return path


def split(p) -> tuple[str, str]:
    p = fspath(p)
    i = p.rfind("/") + 1
    head, tail = p[:i], p[i:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def basename(p) -> str:
    p = fspath(p)
    return p[p.rfind("/") + 1:]


def dirname(p) -> str:
    p = fspath(p)
    head = p[:p.rfind("/") + 1]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head


def normpath(path) -> str:
    return _path_normpath(fspath(path)) or "."


def abspath(path) -> str:
    path = fspath(path)
    if not path.startswith("/"):
        path = join(getcwd(), path)
    return normpath(path)


def expanduser(path) -> str:
    path = fspath(path)
    if not path.startswith("~"):
        return path
    i = path.find("/", 1)
    if i < 0:
        i = len(path)
    if i == 1:
        home = environ().get("HOME")
        if home is None:
            try:
                import pwd
                home = pwd.getpwuid(getuid()).pw_dir
            except (ImportError, KeyError):
                return path
    else:
        try:
            import pwd
            home = pwd.getpwnam(path[1:i]).pw_dir
        except (ImportError, KeyError):
            return path
    home = home.rstrip("/")
    return (home + path[i:]) or "/"


_started_with = None


def environ():
    """The process's environment as os.environ gives it (lean_os serves it as ``lean_os.environ``;
    it lives here because expanduser reads HOME from it, and this module imports no other of ours).

    os.environ itself once anything in the process has imported os (tests, the CLI, whatever changed
    the environment through it), so the two never disagree; in a hook process that never does, a
    read-only view of the environment the process started with, decoded as os decodes it (a write
    raises instead of changing nothing for the children)."""
    real = sys.modules.get("os")
    if real is not None:
        return real.environ
    global _started_with
    if _started_with is None:
        import posix
        enc = sys.getfilesystemencoding()
        _started_with = type(type.__dict__)({k.decode(enc, "surrogateescape"): v.decode(enc, "surrogateescape")
                                             for k, v in posix.environ.items()})
    return _started_with


def _kind(path, lookup) -> int | None:
    """The file-type bits of ``path`` (``lookup``: stat, or lstat for a link itself), None when
    there is nothing there or the path cannot be asked about (genericpath's tests, in one)."""
    try:
        return lookup(path).st_mode & _S_IFMT
    except (OSError, ValueError):
        return None


def exists(path) -> bool:
    return _kind(path, stat) is not None


def lexists(path) -> bool:
    return _kind(path, lstat) is not None


def isfile(path) -> bool:
    return _kind(path, stat) == _S_IFREG


def isdir(s) -> bool:
    return _kind(s, stat) == _S_IFDIR


def islink(path) -> bool:
    return _kind(path, lstat) == _S_IFLNK


def getsize(filename) -> int:
    return stat(filename).st_size


def relpath(path, start=None) -> str:
    if not path:
        raise ValueError("no path specified")
    path = fspath(path)
    start = "." if start is None else fspath(start)
    start_list = [x for x in abspath(start).split("/") if x]
    path_list = [x for x in abspath(path).split("/") if x]
    i = 0
    for a, b in zip(start_list, path_list):
        if a != b:
            break
        i += 1
    rel_list = [".."] * (len(start_list) - i) + path_list[i:]
    if not rel_list:
        return "."
    return join(*rel_list)


def realpath(filename, *, strict: bool = False) -> str:
    path, _ = _joinrealpath("", fspath(filename), strict, {})
    return abspath(path)


def _joinrealpath(path: str, rest: str, strict: bool, seen: dict) -> tuple[str, bool]:
    if rest.startswith("/"):
        rest = rest[1:]
        path = "/"
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            if path:
                path, name = split(path)
                if name == "..":
                    path = join(path, "..", "..")
            else:
                path = ".."
            continue
        newpath = join(path, name)
        try:
            st = lstat(newpath)
        except OSError:
            if strict:
                raise
            is_link = False
        else:
            is_link = st.st_mode & _S_IFMT == _S_IFLNK
        if not is_link:
            path = newpath
            continue
        if newpath in seen:
            path = seen[newpath]
            if path is not None:
                continue
            if strict:
                stat(newpath)   # raises OSError(ELOOP)
            else:
                return join(newpath, rest), False
        seen[newpath] = None
        path, ok = _joinrealpath(path, readlink(newpath), strict, seen)
        if not ok:
            return join(path, rest), False
        seen[newpath] = path
    return path, True
