"""Fixtures for the real-client end-to-end tests (see README.md beside this file)."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client_harness import BinaryMissing, CodexRepo, GeminiRepo, client_binary  # noqa: E402
from harness import ClaudeMissing, ClaudeRepo, claude_binary  # noqa: E402


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned Claude Code binary; skip with the reason when it is missing (fail in CI)."""
    try:
        return claude_binary()
    except ClaudeMissing as e:
        pytest.skip(str(e))


@pytest.fixture
def claude_repo(tmp_path: Path, claude_bin: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClaudeRepo]:
    """A temporary git repository with swarmgate installed, its own HOME, TMPDIR and state dir."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = ClaudeRepo(tmp_path, claude_bin)
    yield repo
    repo.cleanup()


def _client_bin(client: str, tmp_path_factory) -> str:
    try:
        return client_binary(client, tmp_path_factory.mktemp(f"{client}-version"))
    except BinaryMissing as e:
        pytest.skip(str(e))  # a failure under SWARMGATE_REQUIRE_REAL_PARTS=1 (tests/conftest.py)


@pytest.fixture(scope="session")
def codex_bin(tmp_path_factory) -> str:
    """The pinned Codex CLI binary (swarmgate/client_pins.json); skip with the reason when missing."""
    return _client_bin("codex", tmp_path_factory)


@pytest.fixture(scope="session")
def gemini_bin(tmp_path_factory) -> str:
    """The pinned Gemini CLI binary (swarmgate/client_pins.json); skip with the reason when missing."""
    return _client_bin("gemini", tmp_path_factory)


@pytest.fixture
def codex_repo(tmp_path: Path, codex_bin: str, monkeypatch: pytest.MonkeyPatch):
    """A temporary git repository wired by `swarmgate install --client codex`, its own HOME and CODEX_HOME."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = CodexRepo(tmp_path, codex_bin)
    yield repo
    repo.cleanup()


@pytest.fixture
def gemini_repo(tmp_path: Path, gemini_bin: str, monkeypatch: pytest.MonkeyPatch):
    """A temporary git repository wired by `swarmgate install --client gemini`, its own HOME and GEMINI_CLI_HOME."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = GeminiRepo(tmp_path, gemini_bin)
    yield repo
    repo.cleanup()
