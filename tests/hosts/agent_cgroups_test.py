"""Per-agent containment cgroups (hosts/agent_cgroups.py) on real cgroups: v1 here, v2 and systemd as PID 1
inside user-mode Linux (under systemd they live in a scope systemd delegated: hosts/cgroups.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from swarmgate import heavy_grants
from swarmgate.config import load_config
from swarmgate.hosts import agent_cgroups as A
from swarmgate.hosts import ledger, status
from swarmgate.procinfo import identity
from tests.processes import terminate

# flush: the guest of tests/vm has no PYTHONUNBUFFERED, and a buffered "held" arrives only when the process ends
ALLOC = ("import sys; b = bytearray(int(sys.argv[1]) << 20); b[::4096] = b'x' * len(b[::4096]); "
         "print('held', flush=True)")


LIVE = pytest.mark.layout("v1", "v2", "systemd")


def _config(sb, extra: str = ""):
    sb.write_config(extra)
    return load_config(sb.repo)


def _bash_in(agent, script: str, **kw) -> subprocess.Popen:
    """A shell that joins the agent cgroup first, exactly as a contained command does."""
    return subprocess.Popen(["bash", "-c", A.contained_command(script, agent.paths)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def _dead_owner() -> dict:
    p = subprocess.Popen(["true"])
    p.wait()
    return {"pid": p.pid, "start": 1}


def test_sizes_auto_fit_the_dispatch_cap_under_the_total(sandbox):
    cfg = _config(sandbox, "[dispatch]\nmax_concurrent = 5\n")
    cap, cpus = A.sizes(cfg, total=6 << 30, cpus_here=16)
    assert cap == (6 << 30) // 6 and cap * 5 < 6 << 30
    assert cpus == 3.2
    assert A.sizes(cfg, total=6 << 30, cpus_here=2)[1] == 0.5
    cfg = _config(sandbox, '[agents]\nmemory_cap = "100M"\ncpu_max = 1.5\n')
    assert A.sizes(cfg, total=6 << 30, cpus_here=2) == (100 << 20, 1.5)


@LIVE
def test_agent_cgroup_has_its_cap_and_cpu_limit_and_is_booked_against_the_total(sandbox):
    cfg = _config(sandbox, '[agents]\nmemory_cap = "96M"\ncpu_max = 0.5\n')
    owner = identity()
    agent = A.ensure(cfg, owner, "a1b2c3", "implementer", "sess-1")
    backend = sandbox.backend()
    mem = backend.run_path(sandbox.slice, agent.name)
    assert agent.memory_path == mem and os.path.isdir(mem)
    assert backend.counters(mem).limit == 96 << 20
    if backend.name == "cgroup1" and backend.cpu_root():
        cpu = agent.paths[1]
        assert open(os.path.join(cpu, "cpu.cfs_quota_us")).read().strip() == "50000"
        assert agent.cpu_limited
    if backend.name in ("cgroup2", "systemd"):
        assert open(os.path.join(mem, "cpu.max")).read().split() == ["50000", "100000"]
        assert agent.cpu_limited and agent.paths == [mem]
    with ledger.lock():
        b = ledger.load()["bookings"][A.booking_key(agent.name)]
    assert (b["basis"], b["booked"], b["session"], b["agent_id"], b["pid"]) == \
        ("agent", 96 << 20, "sess-1", "a1b2c3", owner["pid"])
    # a second call finds it (no second booking, same paths)
    again = A.ensure(cfg, owner, "a1b2c3", "implementer", "sess-1")
    assert again.paths == agent.paths
    # the runner's admission counts the agent's booking: 256M total - 96M booked leaves < 200M
    r = sandbox.run(["200M", "--wait", "0", "--", "true"])
    assert r.returncode == 252, r.stderr
    assert b"agent implementer a1b2c3" in r.stderr
    notes = A.remove(cfg, owner, "a1b2c3")
    assert notes == []
    assert not any(os.path.exists(p) for p in agent.paths)
    with ledger.lock():
        assert A.booking_key(agent.name) not in ledger.load()["bookings"]
    r = sandbox.run(["200M", "--wait", "0", "--", "true"])
    assert r.returncode == 0, r.stderr


@LIVE
def test_past_its_cap_an_agent_is_oom_killed_inside_its_own_cgroup_and_another_agent_survives(sandbox):
    cfg = _config(sandbox, '[agents]\nmemory_cap = "64M"\n')
    owner = identity()
    a = A.ensure(cfg, owner, "hog", "implementer", "s")
    b = A.ensure(cfg, owner, "calm", "implementer", "s")
    calm = _bash_in(b, f"exec {sys.executable} -c \"{ALLOC}; import time; time.sleep(600)\" 20")
    try:
        assert calm.stdout.readline().strip() == b"held"
        hog = _bash_in(a, f"{sys.executable} -c \"{ALLOC}\" 300; echo exit=$?")
        out, _ = hog.communicate(timeout=60)
        assert b"exit=137" in out
        assert calm.poll() is None, "the other agent's process died"
        view = A.oom_view(cfg, "s", "hog")
        assert view["news"] >= 1 and view["cap"] == 64 << 20
        A.mark_oom_seen("s", "hog", view["kills"])
        assert A.oom_view(cfg, "s", "hog")["news"] == 0     # reported once
        assert A.oom_view(cfg, "s", "calm")["news"] == 0
    finally:
        terminate(calm)
    assert not A.remove(cfg, owner, "hog") and not A.remove(cfg, owner, "calm")


@LIVE
def test_cpu_over_the_limit_is_throttled(sandbox):
    backend = sandbox.backend()
    if backend.name == "cgroup1" and not backend.cpu_root():
        pytest.skip("no cpu controller mounted here")
    cfg = _config(sandbox, "[agents]\ncpu_max = 0.1\n")
    owner = identity()
    agent = A.ensure(cfg, owner, "busy", "implementer", "s")
    p = _bash_in(agent, "end=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do :; done; echo spun")
    out, err = p.communicate(timeout=60)
    assert b"spun" in out, err
    cpu_path = agent.paths[-1]
    assert (backend.cpu_throttled(cpu_path) or 0) > 0
    A.remove(cfg, owner, "busy")


@LIVE
def test_remove_stops_what_the_agent_left_running(sandbox):
    cfg = _config(sandbox)
    owner = identity()
    agent = A.ensure(cfg, owner, "leaver", "implementer", "s")
    p = _bash_in(agent, "sleep 300 & echo $!; wait")
    left = int(p.stdout.readline())
    deadline = time.monotonic() + 120  # a bound: a process start takes seconds in a loaded VM
    while A.cmdline(left)[:1] != ["sleep"]:
        assert time.monotonic() < deadline, f"the agent's background pid {left} never became sleep: {A.cmdline(left)}"
        time.sleep(0.01)
    notes = A.remove(cfg, owner, "leaver")
    assert len(notes) == 1 and "stopped 2 process(es)" in notes[0] and "sleep 300" in notes[0], notes
    assert "cgroup.procs" not in notes[0]  # described by the agent's own command, not the join line
    p.wait(timeout=120)
    deadline = time.monotonic() + 120  # a bound: a loaded VM is slow to reap
    while time.monotonic() < deadline:
        try:
            os.kill(left, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"pid {left} survived the agent's removal")


@LIVE
def test_a_dead_sessions_agent_cgroup_and_booking_go_at_the_next_reconcile(sandbox):
    cfg = _config(sandbox)
    owner = _dead_owner()
    agent = A.ensure(cfg, owner, "orphan", "implementer", "s")
    backend = sandbox.backend()
    with ledger.lock():
        data = ledger.load()
        notes = ledger.reconcile(data, backend, sandbox.slice)
        ledger.save(data)
    assert any("agent cgroup" in n and "orphan" in n for n in notes), notes
    assert A.booking_key(agent.name) not in data["bookings"]
    assert not any(os.path.exists(p) for p in agent.paths)


def test_a_command_that_cannot_join_does_not_run(tmp_path):
    marker = tmp_path / "ran"
    missing = str(tmp_path / "no-such-cgroup")
    p = subprocess.run(["bash", "-c", A.contained_command(f"touch {marker}", [missing])],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 251
    assert "could not join the agent cgroup no-such-cgroup" in p.stderr
    assert not marker.exists()


def test_the_rewrite_keeps_the_original_text_and_is_recognised():
    original = "cd sub && cat <<'EOF'\nline $x\nEOF\necho done"
    rewritten = A.contained_command(original, ["/sys/fs/cgroup/memory/s/agent-1-2-x"])
    assert rewritten.split("\n", 1)[1] == original
    assert A.is_contained(rewritten) and not A.is_contained(original)


@LIVE
def test_probe_says_nothing_where_agents_can_be_contained(sandbox):
    cfg = _config(sandbox)
    assert A.probe(cfg) is None
    backend = sandbox.backend()
    assert backend.agents(sandbox.slice) == []


@pytest.mark.layout("v1", "v2")  # the override names the cgroup mount; systemd's backend takes none
def test_probe_says_why_in_one_line_where_they_cannot(sandbox, monkeypatch):
    cfg = _config(sandbox)
    monkeypatch.setenv("SWARMGATE_CGROUP_ROOT", "/proc")  # not a cgroup mount: the backend says so
    line = A.probe(cfg)
    assert line and line.startswith("subagents are NOT contained") and "\n" not in line
    assert "/proc" in line


@LIVE
def test_status_shows_agent_cgroups_apart_from_runs(sandbox, monkeypatch, capsys):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", sandbox.repo)
    cfg = _config(sandbox, '[agents]\nmemory_cap = "80M"\n')
    owner = identity()
    A.ensure(cfg, owner, "shown", "researcher", "sess-9")
    heavy_grants.record([["cargo", "test", "--workspace"]], session="sess-9", agent=None, source="X01", ttl_s=60)
    assert status.main(["--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["bookings"] == []
    (row,) = rep["agents"]
    assert (row["agent_id"], row["agent_type"], row["session"], row["cap"], row["oom_kills"]) == \
        ("shown", "researcher", "sess-9", 80 << 20, 0)
    (grant,) = rep["grants"]
    assert grant["argv"] == ["cargo", "test", "--workspace"] and 0 < grant["expires_in_s"] <= 60
    assert status.main([]) == 0
    text = capsys.readouterr().out
    assert "subagents (containment cgroups" in text and "authorized once (X01): `cargo test --workspace`" in text
    A.remove(cfg, owner, "shown")
