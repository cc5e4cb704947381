"""Fixtures for the agents tools: a private state dir, a temp repo with the rules installed."""
from __future__ import annotations

from pathlib import Path

import pytest

from swarmgate.agents import records
from tests import builders as build
from tests.agents.support import install_templates


@pytest.fixture
def repo(tmp_path) -> Path:
    return build.git_repo(tmp_path / "repo")


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
