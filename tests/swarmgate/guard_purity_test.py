"""The judge phase is pure (swarmgate/guard.py): every registered guard's check, on every one of
its cases, writes no file (state directory or repository), takes no lock and starts no process.

Each case runs as the self-test runs it (its files and config in a fresh repository whose
state directory is inside it); the facts the guard needs are derived first (the derive phase
may start processes: `git status`, the kernel log), then the files are listed and the check runs
under an audit hook that notes every process start and every flock.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swarmgate.config import Config, parse_toml, validate
from swarmgate.hook_engine import _active, derive, judge
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks import registry
from swarmgate.selftest import CASE_CLAUDE_DIR, CASE_STATE_DIR
from swarmgate.statefile import locked

CASES = [(g, c) for g in registry.guards() for c in g.cases]

# audit events of starting a process or taking a file lock
_WATCHED = ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn",
            "pty.spawn", "fcntl.flock", "fcntl.lockf")
_seen: list | None = None


def _audit(event: str, args: tuple) -> None:
    if _seen is not None and event in _WATCHED:
        _seen.append((event, repr(args)[:200]))


sys.addaudithook(_audit)


def _listing(root: str) -> dict:
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def _prepared(tmp_path, monkeypatch, case):
    repo = tmp_path / "repo"
    repo.mkdir()
    for rel, content in case.files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    cfg_path, raw = None, {}
    if case.config:
        cfg_path = str(repo / ".claude" / "swarmgate.toml")
        os.makedirs(os.path.dirname(cfg_path), exist_ok=True)
        with open(cfg_path, "w") as f:
            f.write(case.config)
        raw = parse_toml(cfg_path)
    config = Config(validate(raw, cfg_path), cfg_path, str(repo), raw)
    state = repo / CASE_STATE_DIR
    state.mkdir(exist_ok=True)
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(state))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(repo / CASE_CLAUDE_DIR))
    payload = {"session_id": "selftest-session", "transcript_path": "", "cwd": str(repo),
               "hook_event_name": case.event}
    payload.update(case.payload)
    payload["cwd"] = os.path.join(str(repo), payload["cwd"])   # a case's cwd is relative to its repository
    return str(repo), config, HookEvent(case.event, payload, str(repo))


@pytest.mark.parametrize("g, case", CASES, ids=[f"{g.code}-{c.name}" for g, c in CASES])
def test_check_writes_nothing_locks_nothing_starts_nothing(g, case, tmp_path, monkeypatch):
    global _seen

    repo, config, event = _prepared(tmp_path, monkeypatch, case)
    active = [(x, m) for x, m in _active(event, config, [g])]
    derive(event, config, active, None)
    before = _listing(repo)
    _seen = []
    try:
        findings = judge(event, config, active, None)
    finally:
        seen, _seen = _seen, None
    after = _listing(repo)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, f"{g.code} case {case.name}: its check changed {changed}"
    assert not seen, f"{g.code} case {case.name}: its check started a process or took a lock: {seen}"
    crashed = [f for f in findings if "crashed" in f.message or "did not finish" in f.message]
    assert not crashed, crashed   # a check that crashed proves nothing about purity


def test_the_purity_test_sees_a_write_a_lock_and_a_process(tmp_path, monkeypatch):
    """The watch above can fail: an impure check is caught on each count."""
    global _seen


    def impure(root):
        (root / "x").write_text("x")
        with locked(str(root / "l.lock"), timeout=1):
            pass
        subprocess.run(["true"], check=True)

    before = _listing(str(tmp_path))
    _seen = []
    try:
        impure(tmp_path)
    finally:
        seen, _seen = _seen, None
    assert set(_listing(str(tmp_path))) - set(before) >= {"x", "l.lock"}
    events = {e for e, _ in seen}
    assert "subprocess.Popen" in events and ({"fcntl.flock", "fcntl.lockf"} & events), seen
