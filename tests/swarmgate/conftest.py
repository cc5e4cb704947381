"""Fixtures for the core tests: a private state dir, temp git repos, the real entry point."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import builders as build

BIN = Path(sys.executable).parent
SWARMGATE = str(BIN / "swarmgate")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo(tmp_path) -> Path:
    return build.git_repo(tmp_path / "repo")


def run_hook(args, stdin: str | bytes, *, cwd=None, env=None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`.venv/bin/swarmgate hook ARGS` as Claude Code runs it: JSON on stdin, a fresh process."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([SWARMGATE, "hook", *args], input=data, capture_output=True, cwd=cwd,
                          env=full_env, timeout=timeout)


def answer_of(proc: subprocess.CompletedProcess) -> dict:
    """The hook's JSON answer, after checking what Claude Code relies on: exit 0, JSON, no traceback."""
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 0, (proc.returncode, err)
    assert "Traceback" not in err, err
    out = proc.stdout.decode()
    assert out.endswith("\n") and out.count("\n") == 1, out
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def payload(repo, tool: str = "Bash", **tool_input) -> str:
    return json.dumps(build.payload("PreToolUse", repo=repo, tool=tool, tool_input=tool_input, session="sess-1"))


@pytest.fixture
def hook():
    return run_hook


@pytest.fixture
def answer():
    return answer_of


@pytest.fixture
def make_payload():
    return payload
