"""Session guard: what a test run leaves behind is a failure, not a surprise for the next run.

At session start every process this run starts is marked (SWARMGATE_TEST_SESSION in the environment,
inherited by subprocesses) and the swarmgate/slurm cgroups that already exist are noted. At session end
the guard lists

- live processes carrying this run's mark, or naming this run's temp dir on their command line
  (covers commands started over the loopback sshd, which do not inherit our environment);
- swarmgate*/slurm_* cgroups (two levels under each cgroup v1 controller) that were not there before;
- files created or modified during the run under /var/tmp/swarmgate (the real state dir; tests must
  point SWARMGATE_STATE_DIR at a temp dir), ~/.claude, ~/.config/swarmgate and this checkout's .swarmgate/
  (compared with a listing taken at the start).

Processes are attributed exactly (the mark), so they always fail the run (and are then killed by pid,
so nothing stays on the machine). Cgroups and files are only
attributed by time and name, which other test runs on the same machine can share: they fail the run
when SWARMGATE_REQUIRE_REAL_PARTS=1 (CI: a clean machine, nothing else running) and are printed as
a warning section otherwise. SWARMGATE_LEFTOVERS=fail|warn overrides both.

It costs one scan of /proc and a listing of those few directories at each end of the session.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time

import pytest

from swarmgate import break_switch

# the `layout` marker (v1 here; v2 and systemd inside user-mode Linux): tests/vm/plugin.py
pytest_plugins = ("tests.vm.plugin",)

MARK = "SWARMGATE_TEST_SESSION"
CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_PREFIXES = ("swarmgate", "slurm_")
GRACE_S = 10.0  # a process killed by its test's teardown may still be exiting


def _home() -> str:
    return os.path.expanduser("~")


CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _watched_dirs() -> list[str]:
    # the checkout's own .swarmgate/: a hook run with cwd at the checkout logs there instead of a temp repo
    return ["/var/tmp/swarmgate", os.path.join(_home(), ".claude"), os.path.join(_home(), ".config", "swarmgate"),
            os.path.join(CHECKOUT, ".swarmgate")]


def _cgroups() -> set[str]:
    found = set()
    try:
        controllers = list(os.scandir(CGROUP_ROOT))
    except OSError:
        return found
    for ctl in controllers:
        if not ctl.is_dir(follow_symlinks=False):
            continue
        try:
            level1 = [e for e in os.scandir(ctl.path) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for e in level1:
            if e.name.startswith(CGROUP_PREFIXES):
                found.add(e.path)
            try:
                found.update(s.path for s in os.scandir(e.path)
                             if s.is_dir(follow_symlinks=False) and s.name.startswith(CGROUP_PREFIXES))
            except OSError:
                pass
    return found


def _ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1:
        out.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def _our_processes(token: str, basetemp: str | None) -> list[tuple[int, str]]:
    """Live (non-zombie) processes marked with ``token`` or naming ``basetemp``, except pytest itself."""
    mine = _ancestors()
    needle = f"{MARK}={token}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in mine:
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").strip()
            hit = basetemp is not None and (basetemp.rstrip("/") + "/").encode() in cmd  # not pytest-50 for -5
            if not hit:
                with open(f"/proc/{name}/environ", "rb") as f:
                    hit = needle in f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if hit:
            out.append((int(name), cmd.decode(errors="replace")[:200]))
    return out


def _files() -> dict[str, int]:
    """{path: mtime_ns} of everything under the watched dirs (install.sh itself warms a cache in
    /var/tmp/swarmgate just before pytest starts: compare with the start, not with a time)."""
    out = {}
    for root in _watched_dirs():
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            for n in filenames + dirnames:
                p = os.path.join(dirpath, n)
                try:
                    out[p] = os.lstat(p).st_mtime_ns
                except OSError:
                    pass
            if len(out) > 20000:
                return out
    return out


def _written_since(before: dict[str, int]) -> list[str]:
    return sorted(p for p, m in _files().items() if before.get(p) != m)[:50]


# ---------------------------------------------------------------- the one isolation fixture

# what a test must never inherit from the shell that started pytest (a real session's ids, switches,
# a Claude Code project, the caller's git or config dirs)
UNSET = ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "CLAUDE_PID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_ENV_FILE",
         "SWARMGATE_BREAK", "SWARMGATE_SELFTEST_TOKEN", "SWARMGATE_SELFTEST_CASE", "SWARMGATE_SESSION_ID",
         "SWARMGATE_HEAVY", "SWARMGATE_SHIM_HOPS", "XDG_CONFIG_HOME", "CARGO_HOME")
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "swarmgate test", "GIT_AUTHOR_EMAIL": "test@swarmgate.invalid",
                "GIT_COMMITTER_NAME": "swarmgate test", "GIT_COMMITTER_EMAIL": "test@swarmgate.invalid",
                "GIT_CONFIG_NOSYSTEM": "1"}
REFUSED_STATE = "state-dir-REFUSED-each-test-sets-SWARMGATE_STATE_DIR"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Every test: its own HOME (so ~/.claude and ~/.config/swarmgate are its own), its own state dir
    and hosts config, a git identity and no global or system git config, none of the caller's
    session variables or break switches. A test that needs something else sets it after this."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for k in list(os.environ):
        if k.startswith("GIT_") or k in UNSET:
            monkeypatch.delenv(k, raising=False)
    for k, v in GIT_IDENTITY.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", str(tmp_path / "no-hosts.toml"))
    break_switch._cache.clear()
    yield
    break_switch._cache.clear()


def _refuse_the_real_state_dir(config) -> None:
    """Between tests (session fixtures, collection) SWARMGATE_STATE_DIR points below a regular file:
    whatever uses it fails at once (ENOTDIR, root included) instead of writing to the machine's
    /var/tmp/swarmgate. Each test gets a directory of its own from ``_isolated``."""
    blocker = tempfile.NamedTemporaryFile(prefix="swarmgate-test-", suffix=".refused", delete=False)
    blocker.write(b"SWARMGATE_STATE_DIR must be set by the test (tests/conftest.py, _isolated)\n")
    blocker.close()
    config._swarmgate_blocker = blocker.name
    os.environ["SWARMGATE_STATE_DIR"] = os.path.join(blocker.name, REFUSED_STATE)


# Module-level caches filled from os.environ on first use. Tests monkeypatch HOME and friends, so a
# cache filled during one test would leak that test's values into every later one (order-dependent
# failures). A hook process is fresh per call, so in production the cache never sees a change.
ENV_CACHES = (("swarmgate.hooks.bash_tree", "_env_vars"),)


@pytest.fixture(autouse=True)
def _reset_env_caches():
    yield
    for module, attr in ENV_CACHES:
        mod = sys.modules.get(module)
        if mod is not None and getattr(mod, attr, None) is not None:
            setattr(mod, attr, None)


def _mode() -> str:
    forced = os.environ.get("SWARMGATE_LEFTOVERS")
    if forced in ("fail", "warn"):
        return forced
    return "fail" if os.environ.get("SWARMGATE_REQUIRE_REAL_PARTS") == "1" else "warn"


def pytest_configure(config):
    _refuse_the_real_state_dir(config)
    if hasattr(config, "workerinput"):
        return  # an xdist worker: the controller guards the run
    token = f"{os.getpid()}-{time.time_ns()}"
    os.environ[MARK] = token
    config._swarmgate_leftovers = {"token": token, "files": _files(), "cgroups": _cgroups(), "found": None}


def _basetemp(config) -> str | None:
    factory = getattr(config, "_tmp_path_factory", None)
    base = getattr(factory, "_basetemp", None) if factory else None
    return str(base) if base else None


def pytest_unconfigure(config):
    blocker = getattr(config, "_swarmgate_blocker", None)
    if blocker:
        with contextlib.suppress(OSError):
            os.unlink(blocker)


def pytest_sessionfinish(session, exitstatus):
    state = getattr(session.config, "_swarmgate_leftovers", None)
    if not state:
        return
    base = _basetemp(session.config)
    deadline = time.monotonic() + GRACE_S
    procs = _our_processes(state["token"], base)
    while procs and time.monotonic() < deadline:
        time.sleep(0.2)
        procs = _our_processes(state["token"], base)
    for pid, _ in procs:  # reported below and failed; do not leave them running on the machine either
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    cgroups = sorted(_cgroups() - state["cgroups"])
    files = _written_since(state["files"])
    state["found"] = (procs, cgroups, files)
    forced = os.environ.get("SWARMGATE_LEFTOVERS")
    if forced == "warn":
        hard = False
    else:
        hard = bool(procs) or (_mode() == "fail" and bool(cgroups or files))
    state["hard"] = hard
    if hard and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = getattr(config, "_swarmgate_leftovers", None)
    if not state or not state["found"]:
        return
    procs, cgroups, files = state["found"]
    if not (procs or cgroups or files):
        return
    mode = _mode()
    tr = terminalreporter
    tr.section("swarmgate: left behind by this test run", sep="=", red=True, bold=True)
    if procs:
        tr.line(f"processes still running {GRACE_S:.0f} s after the last test (started by this run, now "
                "killed; stop them by pid in the test that started them):", red=True)
        for pid, cmd in procs:
            tr.line(f"  pid {pid}: {cmd}")
    if cgroups:
        tr.line("cgroups created during the run and not removed (rmdir children first):", red=mode == "fail")
        for c in cgroups:
            tr.line(f"  {c}")
    if files:
        tr.line("files written outside the tests' temp dirs (set SWARMGATE_STATE_DIR / HOME with monkeypatch):",
                red=mode == "fail")
        for f in files:
            tr.line(f"  {f}")
    if (cgroups or files) and mode == "warn":
        tr.line("cgroups and files are attributed by name and time only, so other runs on this machine may "
                "have made them: a warning here, a failure under SWARMGATE_REQUIRE_REAL_PARTS=1 (CI) or "
                "SWARMGATE_LEFTOVERS=fail.")
    if state.get("hard"):
        tr.line("the run is marked failed because of the above.", red=True)


# --- SWARMGATE_REQUIRE_REAL_PARTS=1 (CI): a skip is a failure ------------------------------------
# A test that cannot find a real part here (cgroups, sshd, the Claude Code binary, user-mode Linux,
# ruff ...) skips with the reason. Where the real parts must be present, that skip would hide a
# missing part behind a green run: this one rule turns every skip, wherever it was raised (a test,
# a fixture, collection), into a failure naming the reason. Call sites only ever skip.

def require_real_parts() -> bool:
    return os.environ.get("SWARMGATE_REQUIRE_REAL_PARTS") == "1"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_the_skip(report) -> None:
    if report.skipped and require_real_parts() and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = (f"SWARMGATE_REQUIRE_REAL_PARTS=1: this test was skipped ({_skip_reason(report)}); "
                           "here every real part must be present, so a skip fails")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ARG001
    outcome = yield
    _fail_the_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):  # noqa: ARG001
    outcome = yield
    _fail_the_skip(outcome.get_result())
