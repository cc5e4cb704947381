"""Fixtures for the real-client end-to-end tests (see README.md beside this file)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ClaudeMissing, ClaudeRepo, claude_binary  # noqa: E402


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned Claude Code binary; skip with the reason when it is missing (fail in CI)."""
    try:
        return claude_binary()
    except ClaudeMissing as e:
        if os.environ.get("SWARMGATE_REQUIRE_REAL_PARTS") == "1":
            pytest.fail(f"SWARMGATE_REQUIRE_REAL_PARTS=1 but {e}")
        pytest.skip(str(e))


@pytest.fixture
def claude_repo(tmp_path: Path, claude_bin: str, monkeypatch: pytest.MonkeyPatch) -> ClaudeRepo:
    """A temporary git repository with swarmgate installed, its own HOME, TMPDIR and state dir."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    return ClaudeRepo(tmp_path, claude_bin)
