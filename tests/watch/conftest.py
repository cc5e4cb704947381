"""Every watch test gets its own state dir and HOME (the watchdog reads ~/.claude/projects by default)."""
import pytest


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "SWARMGATE_BREAK", "SWARMGATE_SELFTEST_TOKEN",
                "SWARMGATE_SELFTEST_CASE"):
        monkeypatch.delenv(var, raising=False)
