"""A repository where only swarmgate's Claude Code plugin is enabled (no `swarmgate install` ran there:
no .claude/ at all): the plugin's agents (`swarmgate:implementer`, ...) can do their work. `dispatch-prompt`
finds them by their full and their bare name, SubagentStart gives them the plugin's agent-common.md and
their rules, and W01 lets them write by the shipped rows (issue 22)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import builders as build
from tests.agents.support import tool
from tests.hooks.conftest import context, denied, hook

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"


@pytest.fixture
def plugin_only(tmp_path, monkeypatch) -> Path:
    """A git repository with no .claude/, and a Claude Code config dir where swarmgate's plugin (this
    checkout's plugin/) is installed and enabled, as `claude plugin install swarmgate@swarmgate` leaves it."""
    config = tmp_path / "claude-config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "swarmgate@swarmgate": [{"scope": "user", "installPath": str(PLUGIN), "version": "0.1.0"}]}}))
    (config / "settings.json").write_text(json.dumps({"enabledPlugins": {"swarmgate@swarmgate": True}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    repo = build.git_repo(tmp_path / "repo")
    assert not (repo / ".claude").exists()
    return repo


def _dispatch_prompt(repo: Path, agent_type: str) -> subprocess.CompletedProcess:
    return subprocess.run([tool("dispatch-prompt"), agent_type], capture_output=True, text=True, cwd=repo,
                          env=dict(os.environ), timeout=60)


@pytest.mark.parametrize("agent_type", ["swarmgate:implementer", "implementer", "Implementer"])
def test_dispatch_prompt_finds_the_plugins_agents(plugin_only, agent_type):
    p = _dispatch_prompt(plugin_only, agent_type)
    assert p.returncode == 0, p.stderr
    assert "heavy test: do not run" in p.stdout and "<task fill in>" in p.stdout
    if agent_type == "swarmgate:implementer":
        assert p.stderr == ""
    else:   # the client wants the full name: say it
        assert 'dispatch it with subagent_type "swarmgate:implementer"' in p.stderr


def test_dispatch_prompt_of_an_unknown_type_lists_the_plugins(plugin_only):
    p = _dispatch_prompt(plugin_only, "nobody")
    assert p.returncode == 251
    assert "swarmgate:implementer" in p.stderr and "swarmgate:clerk" in p.stderr


def test_a_plugin_agent_gets_the_plugins_rules_at_its_start(plugin_only):
    ans = hook("SubagentStart", {"agent_id": "a1", "agent_type": "swarmgate:implementer"}, plugin_only)
    text = context(ans)
    common = (PLUGIN / "agent-common.md").read_text().strip().splitlines()[0]
    rule = (PLUGIN / "rules" / "implementing.md").read_text().strip().splitlines()[0]
    assert common in text and rule in text, text
    assert "is missing (" not in text, text


def _write(repo: Path, agent_type: str, rel: str) -> dict:
    return hook("PreToolUse", {"tool_name": "Write", "agent_id": "a1", "agent_type": agent_type,
                               "tool_input": {"file_path": str(repo / rel), "content": "x\n"}}, repo)


def test_the_plugins_agents_write_by_the_shipped_rows(plugin_only):
    assert denied(_write(plugin_only, "swarmgate:implementer", "src/a.py")) == ""
    assert denied(_write(plugin_only, "swarmgate:implementer", "tests/a_test.py")) == ""
    outside = denied(_write(plugin_only, "swarmgate:implementer", "docs/a.md"))
    assert "[W01]" in outside and "outside what agent type `swarmgate:implementer` may write" in outside
    assert denied(_write(plugin_only, "swarmgate:write-back", "docs/a.md")) == ""


def test_the_missing_row_way_out_names_a_file_that_exists(plugin_only):
    """swarmgate:rescanner has no row (it changes nothing): the way-out cannot point at a
    .claude/swarmgate.toml the repository does not have; it names the shipped config to copy, and the
    lines it gives work once pasted there."""
    reason = denied(_write(plugin_only, "swarmgate:rescanner", "src/a.py"))
    assert "[W01]" in reason and "has no .claude/swarmgate.toml" in reason, reason
    cp = reason.split("`mkdir -p .claude && cp ", 1)[1].split("`", 1)[0]
    shipped = cp.split(" ", 1)[0]
    assert os.path.isfile(shipped), reason
    subprocess.run(["sh", "-c", f"mkdir -p .claude && cp {cp}"], cwd=plugin_only, check=True)
    row = reason.split("add under [write] `", 1)[1].split("`", 1)[0]
    cfg = plugin_only / ".claude" / "swarmgate.toml"
    cfg.write_text(cfg.read_text().replace("[write]\n", f"[write]\n{row}\n", 1))
    assert denied(_write(plugin_only, "swarmgate:rescanner", "src/a.py")) == ""
    assert denied(_write(plugin_only, "swarmgate:implementer", "src/a.py")) == ""   # the copy kept its rows


def test_the_shipped_rows_apply_only_without_a_config_file(plugin_only):
    cfg = plugin_only / ".claude" / "swarmgate.toml"
    cfg.parent.mkdir()
    cfg.write_text('[write]\nmain = ["**"]\n')
    reason = denied(_write(plugin_only, "swarmgate:implementer", "src/a.py"))
    assert "[W01]" in reason and "add its row to .claude/swarmgate.toml" in reason
    assert "`implementer = [" in reason   # the bare key, which swarmgate:implementer is judged by


def test_d12s_way_out_names_the_plugins_clerk_and_dispatch_prompt_finds_it(plugin_only):
    """general-purpose is refused (D12); its way-out names the one-off type that exists here, and the
    `dispatch-prompt TYPE` it gives prints that type's skeleton."""
    ans = hook("PreToolUse", {"tool_name": "Agent", "tool_input": {
        "subagent_type": "general-purpose", "description": "d", "prompt": "x\nheavy test: do not run"}}, plugin_only)
    reason = denied(ans)
    assert "[D12]" in reason and "one-off work goes to `swarmgate:clerk`" in reason, reason
    assert "swarmgate:implementer" in reason, reason
    assert _dispatch_prompt(plugin_only, "swarmgate:clerk").returncode == 0
