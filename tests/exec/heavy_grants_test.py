"""Authorizations (swarmgate/heavy_grants.py): a grant is consumed by the runner started for exactly
its command, which marks its cgroup; the shim lets heavy programs run only inside a marked run.
Real runner, real cgroups, real shims, stand-in programs."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from swarmgate import heavy_grants
from swarmgate.config import load_config
from swarmgate.hosts import agent_cgroups as A
from swarmgate.hosts.runner_selftest import Sandbox
from swarmgate.procinfo import identity
from tests.exec.conftest import Shimmed
from tests.hosts.cgroups import cgroups_writable, need_real

CONFIG_EXTRA = '[heavy]\npatterns = ["cargo test --workspace", "make check-full"]\n'


@pytest.fixture
def capped(tmp_path, monkeypatch):
    """A runner sandbox (own slice, 256M total, own state) with shims written for its repo."""
    need_real(cgroups_writable())

    sb = Sandbox(prefix="sgexec")
    sb.write_config(CONFIG_EXTRA)
    monkeypatch.setenv("SWARMGATE_STATE_DIR", sb.state)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", sb.repo)
    sb.shimmed = Shimmed(tmp_path, config=None, repo=sb.repo, state=sb.state)
    try:
        yield sb
    finally:
        sb.cleanup()


def _run(sb, args, **extra):
    return sb.run(args, PATH=sb.shimmed.path(), **extra)


def test_a_grant_lets_exactly_its_command_run_once_inside_the_run(capped):
    heavy_grants.record([["cargo", "test", "--workspace"]], session="s", agent=None, source="test", ttl_s=60)
    r = _run(capped, ["64M", "--", "cargo", "test", "--workspace"])
    assert r.returncode == 0, r.stderr
    assert capped.shimmed.ran() == ["cargo test --workspace"]
    assert heavy_grants.outstanding() == []
    assert os.listdir(heavy_grants.marks_dir()) == []        # the mark goes with the run
    r = _run(capped, ["64M", "--", "cargo", "test", "--workspace"])   # single use
    assert r.returncode == 249 and b"[X01]" in r.stderr
    assert capped.shimmed.ran() == ["cargo test --workspace"]


def test_a_grant_for_another_command_or_an_expired_one_authorizes_nothing(capped):
    heavy_grants.record([["cargo", "test", "--workspace", "--release"]], session="s", agent=None,
                        source="test", ttl_s=60)
    heavy_grants.record([["cargo", "test", "--workspace"]], session="s", agent=None, source="test", ttl_s=60,
                        now=time.time() - 120)
    r = _run(capped, ["64M", "--", "cargo", "test", "--workspace"])
    assert r.returncode == 249, r.stderr
    assert [g["argv"] for g in heavy_grants.outstanding()] == [["cargo", "test", "--workspace", "--release"]]


def test_heavy_programs_inside_the_marked_run_and_its_nested_runs_are_authorized(capped):
    script = "make check-full && run-with-memory-cap 32M -- cargo test --workspace"
    heavy_grants.record([["sh", "-c", script]], session="s", agent=None, source="test", ttl_s=60)
    venv = os.path.dirname(sys.executable)
    r = _run(capped, ["96M", "--", "sh", "-c", script])
    assert r.returncode == 0, r.stderr
    assert capped.shimmed.ran() == ["make check-full", "cargo test --workspace"]
    assert os.path.exists(os.path.join(venv, "run-with-memory-cap"))


def test_outside_any_run_or_in_an_unmarked_run_it_is_refused(capped):
    r = subprocess.run(["cargo", "test", "--workspace"], env=capped.env(PATH=capped.shimmed.path()),
                       cwd=capped.repo, capture_output=True, timeout=60)
    assert r.returncode == 249
    r = _run(capped, ["64M", "--", "make", "check-full"])
    assert r.returncode == 249
    assert capped.shimmed.ran() == []


def test_a_runner_inside_a_subagents_cgroup_never_takes_a_grant(capped):
    cfg = load_config(capped.repo)
    owner = identity()
    agent = A.ensure(cfg, owner, "thief", "implementer", "s")
    heavy_grants.record([["cargo", "test", "--workspace"]], session="s", agent=None, source="test", ttl_s=60)
    runner = " ".join(capped.argv(["64M", "--", "cargo", "test", "--workspace"]))
    p = subprocess.run(["bash", "-c", A.contained_command(runner, agent.paths)], cwd=capped.repo,
                       env=capped.env(PATH=capped.shimmed.path()), capture_output=True, timeout=60)
    assert p.returncode == 249, p.stderr
    assert b"inside subagent containment cgroup" in p.stderr
    assert len(heavy_grants.outstanding()) == 1          # still there for the main agent
    assert capped.shimmed.ran() == []
    A.remove(cfg, owner, "thief")


def test_a_mark_whose_runner_is_dead_covers_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    p = subprocess.Popen(["true"])
    p.wait()
    heavy_grants.mark("/sys/fs/cgroup/memory/s/run-1-2", {"pid": p.pid, "start": 5}, {"id": "g"})
    assert heavy_grants.mark_of("/sys/fs/cgroup/memory/s/run-1-2/nested-3-4") is None
    heavy_grants.mark("/sys/fs/cgroup/memory/s/run-1-2", identity(), {"id": "g"})
    assert heavy_grants.mark_of("/sys/fs/cgroup/memory/s/run-1-2/nested-3-4")["grant"] == "g"
    assert heavy_grants.mark_of("/sys/fs/cgroup/memory/s/run-1-22") is None
    assert heavy_grants.mark_of("/sys/fs/cgroup/memory/s") is None
