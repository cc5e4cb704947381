"""Helpers for the Bash guard tests: a temp repository, a config, one judgement."""
from __future__ import annotations

import pytest

from swarmgate.hook_engine import evaluate
from swarmgate.hooks import registry
from tests import builders as build


class Judge:
    """Run the shell rules (registry.refusing_guards("PreToolUse", "Bash"): B01 B02 B10 B30 B31
    G01 T01 W01 today, and any rule added later) on one command in ``repo``."""

    def __init__(self, repo: str, config_text: str = "") -> None:
        self.repo = repo
        self.config_text = config_text
        self._config = None

    def write(self, files: dict) -> None:
        build.write_files(self.repo, files)

    @property
    def config(self):
        if self._config is None:
            self._config = build.config(self.repo, self.config_text)
        return self._config

    def guards(self):
        return registry.refusing_guards("PreToolUse", "Bash")

    def event(self, command: str | None = None, *, subagent: bool = False, agent_type: str = "implementer",
              tool: str = "Bash", tool_input: dict | None = None, cwd: str | None = None):
        ti = dict(tool_input or {})
        if command is not None:
            ti["command"] = command
        payload = build.payload("PreToolUse", repo=self.repo, cwd=cwd, tool=tool, tool_input=ti,
                                agent_type=agent_type if subagent else None)
        return build.event(payload, self.repo)

    def findings(self, command: str | None = None, **kw):
        return evaluate(self.event(command, **kw), self.config, self.guards())

    def codes(self, command: str | None = None, **kw) -> set:
        return {f.code for f in self.findings(command, **kw)}


@pytest.fixture
def judge(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    return Judge(str(repo))
