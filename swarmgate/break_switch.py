"""Break switches: SWARMGATE_BREAK=name[,name] disables exactly one protection.

A switch is honoured only inside a self-test: the self-test writes a marker
file holding a fresh token under the state dir and exports the token in
SWARMGATE_SELFTEST_TOKEN; a tool honours SWARMGATE_BREAK only when that marker
exists, is a regular file we own (not a symlink), holds the token and is
fresh. A switch set anywhere else makes the tool refuse to run (251 for
runners, deny for hooks): see ``refusal()``.
"""
from __future__ import annotations

import os

BREAK_ENV = "SWARMGATE_BREAK"
TOKEN_ENV = "SWARMGATE_SELFTEST_TOKEN"
MAX_AGE_S = 6 * 3600

_cache: dict = {}


def requested() -> frozenset:
    raw = os.environ.get(BREAK_ENV, "")
    return frozenset(x.strip() for x in raw.split(",") if x.strip())


MARKER_DIR_ENV = "SWARMGATE_SELFTEST_MARKER_DIR"


def _marker_path(token: str, directory: str | None = None) -> str:
    if directory is None:
        # a self-test cell may run a tool with its own SWARMGATE_STATE_DIR: the marker
        # stays where the self-test wrote it, named by this variable
        directory = os.environ.get(MARKER_DIR_ENV)
    if not directory:
        from swarmgate.state_paths import selftest_dir
        directory = str(selftest_dir())
    return os.path.join(directory, "marker-" + "".join(c for c in token if c.isalnum()))


def marker_valid() -> bool:
    token = os.environ.get(TOKEN_ENV, "")
    if len(token) < 16:
        return False
    key = (token, os.environ.get("SWARMGATE_STATE_DIR", ""), os.environ.get(MARKER_DIR_ENV, ""))
    if key in _cache:
        return _cache[key]
    ok = False
    path = _marker_path(token)
    try:
        import stat as _stat
        import time
        st = os.lstat(path)
        if (_stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()
                and time.time() - st.st_mtime < MAX_AGE_S):
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                ok = os.read(fd, 256).decode(errors="replace").strip() == token
            finally:
                os.close(fd)
    except OSError:
        ok = False
    _cache[key] = ok
    return ok


def broken(name: str) -> bool:
    """True when the switch ``name`` is set and a self-test marker vouches for it."""
    if BREAK_ENV not in os.environ:
        return False
    return name in requested() and marker_valid()


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
    """Context manager: create a fresh marker + token; yields the env to pass to tools."""

    def __init__(self) -> None:
        self.token = ""
        self.path = ""

    def __enter__(self) -> dict:
        import secrets

        from swarmgate.state_paths import selftest_dir
        from swarmgate.statefile import ensure_dir, write_text_atomic

        self.token = secrets.token_hex(16)
        directory = str(ensure_dir(selftest_dir()))
        self.path = _marker_path(self.token, directory)
        write_text_atomic(self.path, self.token + "\n", mode=0o600)
        _cache.clear()
        return {TOKEN_ENV: self.token, MARKER_DIR_ENV: directory}

    def __exit__(self, *exc) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass
        _cache.clear()


def tool_start(suite: str, selftest: bool, prog: str) -> int | None:
    """What every tool does first: `--selftest` runs its self-test suite; a break switch set
    outside a self-test refuses with 251 (SPEC §7). Returns the exit code to stop with, or
    None to go on."""
    import sys

    if selftest:
        from swarmgate.selftest import main as selftest_main
        return selftest_main([suite])
    why = refusal()
    if why:
        from swarmgate.exit_codes import Exit
        print(f"{prog}: {why}", file=sys.stderr)
        return int(Exit.USAGE)
    return None
