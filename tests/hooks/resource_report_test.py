"""R01 through the real hook entry point."""
import json
import os
import subprocess
import sys

import pytest

from tests.hosts.sshd import serve

SWARMGATE = os.path.join(os.path.dirname(sys.executable), "swarmgate")


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """A loopback ssh peer (tests/hosts/sshd.py)."""
    yield from serve(tmp_path_factory)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = tmp_path / "repo"
    (r / ".claude").mkdir(parents=True)
    # no verify patterns, so only R01 speaks for these commands
    (r / ".claude" / "swarmgate.toml").write_text('[scope]\nverify_patterns = ["never-matches-anything"]\n')
    return r


def _hook(repo, command, hosts=None, agent=None, tmp=None):
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}}
    if agent:
        payload.update(agent_id="a1", agent_type=agent)
    env = dict(os.environ, SWARMGATE_STATE_DIR=str(repo.parent / "state"), CLAUDE_PROJECT_DIR=str(repo))
    if hosts:
        env["SWARMGATE_HOSTS_CONFIG"] = str(hosts)
    cp = subprocess.run([SWARMGATE, "hook", "PreToolUse"], input=json.dumps(payload), capture_output=True,
                        text=True, env=env, timeout=60)
    assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp.stderr
    return json.loads(cp.stdout)


def _context(out):
    return out.get("hookSpecificOutput", {}).get("additionalContext", "")


def test_heavy_command_gets_the_report_before_it_runs(repo):
    out = _hook(repo, "SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace")
    ctx = _context(out)
    assert "[R01] host resources" in ctx and "verdict here:" in ctx and "available" in ctx
    assert "[R01]" not in out["hookSpecificOutput"].get("permissionDecisionReason", "")


def test_gpu_command_gets_the_report_with_gpu_line(repo):
    ctx = _context(_hook(repo, "CUDA_VISIBLE_DEVICES=0 python3 train.py", agent="experiment-runner"))
    assert "GPU (cuda)" in ctx and "no GPU" in ctx


def test_plain_and_data_commands_get_nothing(repo):
    for cmd in ("ls -la", "git status", "echo 'cargo test --workspace on cuda'",
                "grep -r 'nvidia-smi' docs/"):
        assert "[R01]" not in _context(_hook(repo, cmd)), cmd


def test_peer_included_and_unreadable_peer_never_refuses(repo, tmp_path, sshd):
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("[across_machines]\nenabled = true\n[report]\nhost_budget_s = 3.0\ntotal_budget_s = 5.0\n"
                     + sshd.peer_toml("p1", str(tmp_path / "root"))
                     + sshd.peer_toml("dead", str(tmp_path / "root")).replace(f"port = {sshd.port}", "port = 1"))
    out = _hook(repo, "SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace", hosts=hosts)
    ctx = _context(out)
    assert "host p1:" in ctx and "verdict p1:" in ctx
    assert "host dead: could not be read" in ctx
    assert out["hookSpecificOutput"].get("permissionDecision") != "deny"
