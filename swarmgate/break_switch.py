"""Break switches: SWARMGATE_BREAK=name[,name] disables exactly one protection (SPEC §7).

The one way to read them is ``broken(name)``; ``refusal()`` says when one is set outside a
self-test (hooks then deny every call, tools exit 251).

A switch is honoured only inside a real self-test. ``selftest_marker()`` (used by the harness,
swarmgate/selftest.py) writes a marker holding a fresh random token and the identity (pid +
start time) of the self-test process, and exports the token in SWARMGATE_SELFTEST_TOKEN. A tool
or hook honours SWARMGATE_BREAK only when

- the marker for that token exists in the marker directory, a fixed per-user place that no
  environment variable can move (``state_paths.selftest_marker_dir``, protected by G01 like the
  state directory), is a regular file owned by this user, not a symlink, and fresh;
- the self-test process it names is alive (same start time), and it is this process or one of
  its ancestors: a marker written for some other process does not vouch for this one.

A marker may say ``inert``: then the self-test vouches for the switch (nothing refuses to run)
but no switch does anything. That is the mutation test's mechanism (every suite must fail with
its switches inert); it can only make a run stricter, so nothing an agent could reach depends on it.

Agents run as the same user, so none of this is a wall against arbitrary code; it makes a switch
set by hand, by a copied token or through a planted marker inert, and each step an agent would
need (setting SWARMGATE_* variables, writing the marker directory) is refused by G01.
"""
from __future__ import annotations

from swarmgate import lean_os as os

BREAK_ENV = "SWARMGATE_BREAK"
TOKEN_ENV = "SWARMGATE_SELFTEST_TOKEN"
MAX_AGE_S = 6 * 3600
MAX_ANCESTRY = 64

_cache: dict = {}


def requested() -> frozenset:
    raw = os.environ.get(BREAK_ENV, "")
    return frozenset(x.strip() for x in raw.split(",") if x.strip())


def _marker_path(token: str) -> str:
    from swarmgate.state_paths import selftest_marker_dir
    return os.path.join(selftest_marker_dir(), "marker-" + "".join(c for c in token if c.isalnum()))


def _lineage(pid: int) -> set:
    """``pid`` and its ancestors (pids), up to init."""
    from swarmgate.procinfo import parent_pid
    out = set()
    while pid and pid > 1 and pid not in out and len(out) < MAX_ANCESTRY:
        out.add(pid)
        pid = parent_pid(pid) or 0
    return out


def _read_marker(token: str) -> dict | None:
    """The marker's record, when it is a fresh regular file of ours holding this token."""
    import stat as _stat
    import time

    from swarmgate.state_paths import selftest_marker_dir
    directory = selftest_marker_dir()
    try:
        dst = os.lstat(directory)
        if (not _stat.S_ISDIR(dst.st_mode) or dst.st_uid != os.getuid() or dst.st_mode & 0o077):
            return None  # a planted or shared directory vouches for nothing
        fd = os.open(_marker_path(token), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not _stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077
                or time.time() - st.st_mtime >= MAX_AGE_S):
            return None
        words = os.read(fd, 256).decode("ascii", "replace").split()
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(words) not in (3, 4) or words[0] != token or (len(words) == 4 and words[3] != "inert"):
        return None
    try:
        return {"pid": int(words[1]), "start": int(words[2]), "inert": len(words) == 4}
    except ValueError:
        return None


def _vouched() -> str | None:
    """"live" or "inert" when this process runs inside the self-test that SWARMGATE_SELFTEST_TOKEN
    names (its marker says which), else None."""
    token = os.environ.get(TOKEN_ENV, "")
    if len(token) < 32 or not token.isalnum():
        return None
    if token in _cache:
        return _cache[token]
    from swarmgate.procinfo import is_alive
    rec = _read_marker(token)
    ok = bool(rec and is_alive(rec["pid"], rec["start"]) and rec["pid"] in _lineage(os.getpid()))
    _cache[token] = ("inert" if rec["inert"] else "live") if ok else None
    return _cache[token]


def marker_valid() -> bool:
    """Whether this process runs inside the self-test that SWARMGATE_SELFTEST_TOKEN names."""
    return _vouched() is not None


def broken(name: str) -> bool:
    """True when the switch ``name`` is set and a self-test vouches for it (and has not made the
    switches inert)."""
    if BREAK_ENV not in os.environ:
        return False
    return name in requested() and _vouched() == "live"


def refusal() -> str | None:
    """A message when SWARMGATE_BREAK is set outside a self-test, else None."""
    if not os.environ.get(BREAK_ENV, "").strip():
        return None
    if marker_valid():
        return None
    return (f"{BREAK_ENV}={os.environ.get(BREAK_ENV)} is set outside a self-test: break switches "
            f"disable protections and are honoured only under `swarmgate selftest`. "
            f"Unset {BREAK_ENV} and run again.")


class selftest_marker:
    """Context manager for the self-test harness: a fresh marker naming this process; yields the
    environment (the token) to run cells with."""

    def __init__(self, inert: bool = False) -> None:
        self.token = ""
        self.path = ""
        self.inert = inert

    def __enter__(self) -> dict:
        import secrets

        from swarmgate.procinfo import start_time
        from swarmgate.state_paths import selftest_marker_dir
        from swarmgate.statefile import ensure_private_dir

        self.token = secrets.token_hex(16)
        self.path = _marker_path(self.token)
        data = (f"{self.token} {os.getpid()} {start_time(os.getpid())}" + (" inert" if self.inert else "")
                + "\n").encode()
        for attempt in range(3):  # another self-test may remove the empty directory meanwhile
            ensure_private_dir(selftest_marker_dir())
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        _cache.clear()
        return {TOKEN_ENV: self.token}

    def __exit__(self, *exc) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass
        try:  # leave nothing behind when no other self-test is running
            os.rmdir(os.path.dirname(self.path))
        except OSError:
            pass
        _cache.clear()
