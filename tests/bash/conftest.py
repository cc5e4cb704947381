"""Helpers for the Bash guard tests: a temp repository, a config, one judgement."""
from __future__ import annotations

import os

import pytest

from swarmgate.config import Config, parse_toml, validate
from swarmgate.hook_engine import evaluate
from swarmgate.hook_protocol import HookEvent
from swarmgate.hooks import registry


@pytest.fixture(autouse=True)
def _state_dir(tmp_path, monkeypatch):
    """Never touch /var/tmp/swarmgate; no break switch leaks in from the caller's environment."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("SWARMGATE_BREAK", raising=False)
    monkeypatch.delenv("SWARMGATE_SELFTEST_TOKEN", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


class Judge:
    """Run the shell rules (registry.refusing_guards("PreToolUse", "Bash"): B01 B02 B10 B30 B31
    G01 T01 W01 today, and any rule added later) on one command in ``repo``."""

    def __init__(self, repo: str, config_text: str = "") -> None:
        self.repo = repo
        self.config_text = config_text
        self._config = None

    def write(self, files: dict) -> None:
        for rel, content in files.items():
            path = os.path.join(self.repo, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)
            if rel.endswith(".sh"):
                os.chmod(path, 0o755)

    @property
    def config(self):
        if self._config is None:
            raw, path = {}, None
            if self.config_text:
                path = os.path.join(self.repo, ".claude", "swarmgate.toml")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(self.config_text)
                raw = parse_toml(path)
            self._config = Config(validate(raw, path), path, self.repo, raw)
        return self._config

    def guards(self):
        return registry.refusing_guards("PreToolUse", "Bash")

    def event(self, command: str | None = None, *, subagent: bool = False, agent_type: str = "implementer",
              tool: str = "Bash", tool_input: dict | None = None, cwd: str | None = None):
        ti = dict(tool_input or {})
        if command is not None:
            ti["command"] = command
        payload = {"session_id": "s1", "transcript_path": "", "cwd": cwd or self.repo,
                   "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": ti}
        if subagent:
            payload["agent_id"] = "agent-1"
            payload["agent_type"] = agent_type
        return HookEvent("PreToolUse", payload, self.repo)

    def findings(self, command: str | None = None, **kw):
        return evaluate(self.event(command, **kw), self.config, self.guards())

    def codes(self, command: str | None = None, **kw) -> set:
        return {f.code for f in self.findings(command, **kw)}


@pytest.fixture
def judge(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    return Judge(str(repo))
