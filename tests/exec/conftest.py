"""Fixtures for the exec-time layers (shims, grants, containment): a private state dir, a repo with
a config, a shim directory written by swarmgate, and stand-in programs behind it on PATH."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.config import load_config
from swarmgate.hooks import exec_shims
from swarmgate.hooks.heavy_equivalents import workload_patterns

STANDIN = """#!/bin/sh
# stand-in for the real {name}: says how it was called, and leaves a line in the log
printf '%s\\n' "REAL {name} $*"
[ -z "$STANDIN_SHOW_HOPS" ] || printf 'hops=%s\\n' "${{SWARMGATE_SHIM_HOPS%%|*}}"
printf '%s\\n' "{name} $*" >> {log}
exit ${{STANDIN_EXIT:-0}}
"""


class Shimmed:
    """A repo, its config, swarmgate's shim directory for it, and stand-ins of the real programs."""

    def __init__(self, root: Path, config: str | None = "", repo: Path | None = None,
                 state: Path | None = None) -> None:
        self.root = root
        self.repo = Path(repo or root / "repo")
        self.state = Path(state or root / "state")
        self.standin = root / "standin"
        self.log = root / "standin.log"
        self.shims = self.state / "sessions" / "sess-1" / "shims"
        (self.repo / ".claude").mkdir(parents=True, exist_ok=True)
        if not (self.repo / "package.json").exists():
            (self.repo / "package.json").write_text('{"scripts": {"test:e2e": "node e2e.js", "lint": "eslint ."}}\n')
        self.standin.mkdir(exist_ok=True)
        for name in ("cargo", "make", "npm", "pytest", "rustup", "tox"):
            self.add_standin(name)
        if config is None:
            self.write_shims()      # the repository's config as it is
        else:
            self.configure(config)

    def add_standin(self, name: str, directory: Path | None = None) -> Path:
        d = directory or self.standin
        d.mkdir(parents=True, exist_ok=True)
        p = d / name
        p.write_text(STANDIN.format(name=name, log=self.log))
        p.chmod(0o755)
        return p

    def configure(self, text: str) -> None:
        cfg = self.repo / ".claude" / "swarmgate.toml"
        if text:
            cfg.write_text(text)
        elif cfg.exists():
            cfg.unlink()
        self.write_shims()

    def write_shims(self) -> dict:
        config = load_config(str(self.repo))
        return exec_shims.write_dir(str(self.shims), config, repo=str(self.repo), session="sess-1",
                                    patterns=workload_patterns(config, str(self.repo)))

    def path(self, *front: str) -> str:
        base = [str(self.shims), str(self.standin)] if not front else list(front)
        return os.pathsep.join(base + [os.path.dirname(sys.executable), "/usr/bin", "/bin"])

    def env(self, path: str | None = None, **extra: str) -> dict:
        env = dict(os.environ)
        env["PATH"] = path or self.path()
        env.update(extra)
        return env

    def run(self, command: str, *, path: str | None = None, cwd: Path | None = None,
            **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=str(cwd or self.repo), env=self.env(path, **extra),
                              capture_output=True, text=True, timeout=120)

    def ran(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def decisions(self) -> list[dict]:
        path = self.repo / ".swarmgate" / "log" / "decisions.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def alerts(self) -> list[dict]:
        path = self.state / "alerts" / "alerts.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def shimmed(tmp_path) -> Shimmed:
    return Shimmed(tmp_path)
