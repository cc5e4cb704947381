"""Helpers shared by the agents tests (imported as tests.agents.support)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
BIN = Path(sys.executable).parent


def install_templates(repo: Path) -> None:
    """What `swarmgate install` copies from rules/ into .claude/ (the agents part of it)."""
    claude = repo / ".claude"
    (claude / "agents").mkdir(parents=True, exist_ok=True)
    (claude / "rules").mkdir(parents=True, exist_ok=True)
    for f in (RULES / "agents").glob("*.md"):
        shutil.copy(f, claude / "agents" / f.name)
    for f in (RULES / "rules").glob("*.md"):
        shutil.copy(f, claude / "rules" / f.name)
    for name in ("main-agent.md", "agent-common.md"):
        shutil.copy(RULES / name, claude / name)


def tool(name: str) -> str:
    return str(BIN / name)
