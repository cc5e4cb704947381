"""Where state lives: one module, so every tool agrees.

Machine state (the runner's ledger, history peaks, alerts, GPU registrations,
session state, locks) lives under SWARMGATE_STATE_DIR (default
/var/tmp/swarmgate) so that every repository and session on a machine shares
one budget. Repository state (the decision log) lives in the repository under
.swarmgate/.
"""
from __future__ import annotations

from swarmgate import lean_os as os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: pathlib is imported on first use (below)
    from os import PathLike
    from pathlib import Path

DEFAULT_STATE_DIR = "/var/tmp/swarmgate"
STATE_ENV = "SWARMGATE_STATE_DIR"


def _path(*parts: str | PathLike[str]) -> Path:
    """pathlib.Path, imported on first use: hooks import this module on every call and
    pathlib (with urllib, ipaddress, re) costs milliseconds. The first call puts the
    real class in its place."""
    from pathlib import Path as _Path

    globals()["_path"] = _Path
    return _Path(*parts)


def state_dir_text() -> str:
    """The state directory as a str (no pathlib): for the hook's hot path."""
    return os.environ.get(STATE_ENV) or DEFAULT_STATE_DIR


def state_dir() -> Path:
    return _path(state_dir_text())


def machine_config_path() -> Path:
    """~/.config/swarmgate/hosts.toml (never inside a repository)."""
    override = os.environ.get("SWARMGATE_HOSTS_CONFIG")
    if override:
        return _path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return _path(base) / "swarmgate" / "hosts.toml"


# machine-level state
def ledger_path() -> Path:
    return state_dir() / "runner" / "ledger.json"


def ledger_lock_path() -> Path:
    return state_dir() / "runner" / "ledger.lock"


def history_path() -> Path:
    return state_dir() / "runner" / "history.json"


def runs_log_path() -> Path:
    """One JSON line per finished capped run (label, session, booked, peak, exit): `swarmgate report`."""
    return state_dir() / "runner" / "runs.jsonl"


def alerts_dir() -> Path:
    return state_dir() / "alerts"


def sessions_dir() -> Path:
    return state_dir() / "sessions"


def session_dir(session_id: str) -> Path:
    return sessions_dir() / safe_name(session_id)


def locks_dir() -> Path:
    return state_dir() / "locks"


def workspace_locks_dir() -> Path:
    """workspace-lock records (one file per lock name)."""
    return locks_dir() / "workspace"


def records_snapshots_dir() -> Path:
    """Last seen task rows of each scheduling record (a task may not vanish without a verdict)."""
    return state_dir() / "records"


def record_snapshot_path(record_path) -> str:
    """Where the snapshot of the scheduling record ``record_path`` lives (keyed by the real path); its
    verify attempts' log lies beside it (agents/record_verify.py)."""
    import hashlib

    real = os.path.realpath(str(record_path))
    key = hashlib.sha256(real.encode()).hexdigest()[:16]
    return os.path.join(str(records_snapshots_dir()), f"{safe_name(os.path.basename(real))[:60]}-{key}.json")


def gpu_registrations_dir() -> Path:
    return state_dir() / "gpu"


def command_history_path() -> Path:
    return state_dir() / "commands" / "history.jsonl"


def gate_cache_dir() -> Path:
    return state_dir() / "gate-cache"


def gate_trees_dir() -> Path:
    return state_dir() / "gate-trees"


def preflight_dir() -> Path:
    """Per-script preflight state: last-success fingerprints and single-instance locks."""
    return state_dir() / "preflight"


def dispatch_pending_path() -> Path:
    return state_dir() / "dispatch" / "pending.json"


def detached_dir() -> Path:
    return state_dir() / "detached"


def selftest_marker_dir() -> str:
    """Where self-test markers live (swarmgate/break_switch.py): fixed per user and never taken
    from the environment (not even through SWARMGATE_STATE_DIR, which a command can point at a
    directory of its own), on tmpfs when there is one."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp"
    return os.path.join(base, f"swarmgate-selftest-{os.getuid()}")


def bashlex_cache_path(key: str) -> Path:
    """bashlex's LALR tables, cached (hooks/bashlex_fast.py); key = python + bashlex checksum."""
    return state_dir() / "cache" / f"bashlex-tables-{safe_name(key)}.marshal"


def heavy_bodies_cache_path() -> str:
    """The patterns of heavy script bodies per repository and stamp (hooks/heavy_equivalents.py); a str
    (no pathlib): the Bash hook reads it."""
    return state_dir_text().rstrip("/") + "/cache/heavy-bodies.json"


def default_work_root(repo: str | PathLike[str]) -> Path:
    """The work root of a repository whose config leaves `[workdirs] root` empty: one directory per
    repository beside the state directory (`/var/tmp/swarmgate-work/<name>-<hash>`), not inside it
    (G01 guards the state directory) and not inside the repository (git and W01 would see it)."""
    from hashlib import sha1

    real = os.path.realpath(os.fspath(repo))
    key = sha1(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return _path(state_dir_text().rstrip("/") + "-work") / f"{safe_name(os.path.basename(real))}-{key}"


# repository-level state
def repo_state_dir(repo: Path) -> Path:
    return _path(repo) / ".swarmgate"


def decision_log_path(repo: Path) -> Path:
    return repo_state_dir(repo) / "log" / "decisions.jsonl"


def repo_config_path(repo: Path) -> Path:
    return _path(repo) / ".claude" / "swarmgate.toml"


def safe_name(text: str) -> str:
    """A file-name-safe form of an id (no separators, no dot-dot)."""
    out = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    out = out.lstrip(".") or "_"
    return out[:128]
