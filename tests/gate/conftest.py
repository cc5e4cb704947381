"""Fixtures for the gate: real temporary git repositories, a private state dir, HOME in tmp."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.gate.gate_staged import Gate, render


def _gate_cli() -> list[str]:
    beside = Path(sys.executable).parent / "gate-staged"
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, "-m", "swarmgate", "gate-staged"]


class Repo:
    """A temporary git repository and the helpers the tests share."""

    def __init__(self, path: Path, state: Path) -> None:
        self.path = path
        self.state = state

    # git and files
    def git(self, *args: str, input: bytes | None = None, check: bool = True, env: dict | None = None) -> str:
        cp = subprocess.run(["git", *args], cwd=self.path, input=input, capture_output=True,
                            env=env)
        if check and cp.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {cp.stderr.decode()}")
        return cp.stdout.decode()

    def write(self, rel: str, content: str | bytes, mode: int | None = None) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        p.write_bytes(content)
        if mode is not None:
            os.chmod(p, mode)
        return p

    def stage_blob(self, rel: str, content: bytes, mode: str = "100644") -> str:
        """Stage ``content`` at ``rel`` without touching the worktree (what `git add -p` does)."""
        oid = self.git("hash-object", "-w", "--stdin", input=content).strip()
        self.git("update-index", "--add", "--cacheinfo", f"{mode},{oid},{rel}")
        return oid

    def config(self, text: str, stage: bool = True) -> None:
        self.write(".claude/swarmgate.toml", text)
        if stage:
            self.git("add", ".claude/swarmgate.toml")

    def commit(self, msg: str = "c") -> None:
        self.git("commit", "-q", "--no-verify", "-m", msg)

    def index_bytes(self) -> bytes:
        return (self.path / ".git" / "index").read_bytes()

    def snapshot(self) -> dict:
        """Everything the gate must never change: worktree bytes and modes, index, stash, worktrees."""
        files = {}
        for dirpath, dirnames, filenames in os.walk(self.path):
            if ".git" in dirnames:
                dirnames.remove(".git")
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                p = Path(dirpath) / name
                st = os.lstat(p)
                if os.path.islink(p):
                    files[str(p.relative_to(self.path))] = ("link", os.readlink(p))
                else:
                    files[str(p.relative_to(self.path))] = (st.st_mode, p.read_bytes())
        return {"files": files, "index": self.index_bytes(), "stash": self.git("stash", "list"),
                "worktrees": self.git("worktree", "list", "--porcelain"),
                "refs": self.git("for-each-ref")}

    # the gate
    def gate(self, *, use_cache: bool = True, only: list[str] | None = None, env: dict | None = None):
        out = io.StringIO()
        result = Gate(self.path, use_cache=use_cache, only=only, out=out, env=env).run()
        render(result, out)
        result.text = out.getvalue()
        return result

    def cli_argv(self) -> list[str]:
        return [*_gate_cli(), "--repo", str(self.path)]

    def cli(self, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*_gate_cli(), "--repo", str(self.path), *args], capture_output=True, text=True,
                              env=env, timeout=timeout)

    def trees(self) -> list[Path]:
        d = self.state / "gate-trees"
        return sorted(d.iterdir()) if d.exists() else []


@pytest.fixture
def gate_env(tmp_path):
    """The test's state dir (HOME, git identity and config are the suite's isolation: tests/conftest.py)."""
    return tmp_path / "state"


@pytest.fixture
def repo(tmp_path, gate_env) -> Repo:
    path = tmp_path / "repo"
    path.mkdir()
    r = Repo(path, gate_env)
    r.git("init", "-q", "-b", "main")
    return r


BAD_CHECK = """[[gate.stages]]
name = "no-bad"
command = "! grep -rq BAD data"
inputs = ["data/**"]
"""


@pytest.fixture
def bad_repo(repo) -> Repo:
    """A repository with one stage that is red when any file under data/ holds BAD."""
    repo.config(BAD_CHECK)
    repo.write("data/a.txt", "good\n")
    repo.git("add", ".")
    repo.commit("base")
    return repo
