"""Fixtures for the agents tools: a private state dir, a temp repo with the rules installed."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarmgate.agents import records
from tests.agents.support import install_templates


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


@pytest.fixture
def installed(repo) -> Path:
    install_templates(repo)
    return repo


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def sg(capsys):
    """`swarmgate records --repo REPO ARGS` in this process (the CLI's main), output captured."""
    def run(repo, *args) -> Result:
        capsys.readouterr()
        rc = records.main(["--repo", str(repo), *args])
        out, err = capsys.readouterr()
        return Result(rc, out, err)
    return run
