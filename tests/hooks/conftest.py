"""Fixtures for the hooks tests: a temp git repo with agent definitions, the real `swarmgate hook
EVENT` entry point and its in-process twin (the lifecycle hooks), and one judgement of the shell
rules on a command (the Bash guards)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.hook_engine import answer as engine_answer
from swarmgate.hook_engine import evaluate
from swarmgate.hooks import registry
from tests import builders as build

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
RULES = Path(__file__).resolve().parents[2] / "rules"


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repo with swarmgate's agent-common.md, agent definitions and rules installed."""
    r = tmp_path / "repo"
    (r / ".claude" / "agents").mkdir(parents=True)
    (r / ".claude" / "rules").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / ".claude" / "agent-common.md").write_text((RULES / "agent-common.md").read_text())
    for p in (RULES / "agents").glob("*.md"):
        (r / ".claude" / "agents" / p.name).write_text(p.read_text())
    for p in (RULES / "rules").glob("*.md"):
        (r / ".claude" / "rules" / p.name).write_text(p.read_text())
    return r


@pytest.fixture
def committed(repo) -> Path:
    """``repo`` with everything committed (a clean worktree)."""
    (repo / "README.md").write_text("sample\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def hook(event: str, payload: dict, repo: Path, session: str = "s1", via_parent: bool = False) -> dict:
    """Run the real `swarmgate hook EVENT` with ``payload``; returns its JSON answer.

    via_parent=True runs it under a short-lived python process that exits afterwards:
    that process is then the hook's "session process", dead once this returns.
    """
    full = build.payload(event, repo=repo, session=session, **payload)
    argv = [sys.executable, "-m", "swarmgate", "hook", event]
    env = dict(os.environ)
    if via_parent:
        argv = [sys.executable, "-c",
                ("import subprocess,sys; p=subprocess.run(sys.argv[1:], input=sys.stdin.read(), "
                 "capture_output=True, text=True); sys.stdout.write(p.stdout); sys.stderr.write(p.stderr)"),
                *argv]
    p = subprocess.run(argv, input=json.dumps(full), capture_output=True, text=True, env=env,
                       cwd=str(repo), timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def denied(answer: dict) -> str:
    """The deny reason of a PreToolUse answer ('' when allowed)."""
    hso = answer.get("hookSpecificOutput") or {}
    return hso.get("permissionDecisionReason", "") if hso.get("permissionDecision") == "deny" else ""


def context(answer: dict) -> str:
    return (answer.get("hookSpecificOutput") or {}).get("additionalContext", "")


GOOD = build.GOOD_PROMPT
dispatch = build.dispatch


def answer(event: str, payload: dict, repo: Path, session: str = "s1") -> dict:
    """The hook's answer computed in this process (hook_engine.answer): fast, same code path
    after stdin. The session process is then this test process's parent, which lives."""
    full = build.payload(event, repo=repo, session=session, **payload)
    out, code = engine_answer(event, json.dumps(full))
    assert code == 0
    return json.loads(out)



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
