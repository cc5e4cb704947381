"""swarmgate's own repository is gated by its own gate-staged: .claude/swarmgate.toml runs ruff and
`swarmgate docs --check` on exactly HEAD + the index, and .pre-commit-config.yaml runs the same."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.config import load_config
from swarmgate.hooks.yaml_subset import load as load_yaml

ROOT = Path(__file__).resolve().parents[2]
GATE = Path(sys.executable).parent / "gate-staged"
OWN_FILES = (".claude/swarmgate.toml", ".pre-commit-config.yaml", ".ci/in_tree.py")


def test_pre_commit_hooks_are_the_gate_stages():
    hooks = [h for r in load_yaml((ROOT / ".pre-commit-config.yaml").read_text())["repos"] for h in r["hooks"]]
    stages = load_config(str(ROOT))["gate"]["stages"]
    assert [(h["id"], h["entry"]) for h in hooks] == [(s["name"], s["command"]) for s in stages]
    assert {s["name"] for s in stages} == {"ruff", "docs-current"}


@pytest.fixture
def clone(tmp_path) -> Path:
    """This repository at HEAD, with the working tree's gate files staged and the checkout's .venv linked."""
    if not (ROOT / ".venv" / "bin" / "ruff").exists():
        pytest.skip(".venv/bin/ruff is missing (./install.sh installs it)")
    repo = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(repo)], check=True)
    for rel in OWN_FILES:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, repo / rel)
    # the staged tree's code: every Python file and doc as in this working tree
    for rel in subprocess.run(["git", "ls-files", "-m", "-o", "--exclude-standard", "--", "*.py", "*.md",
                               "pyproject.toml"], cwd=ROOT, capture_output=True, text=True).stdout.split():
        if (ROOT / rel).is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, repo / rel)
    (repo / ".venv").mkdir()
    (repo / ".venv" / "bin").symlink_to(ROOT / ".venv" / "bin")
    (repo / ".venv" / "lib").symlink_to(ROOT / ".venv" / "lib")
    (repo / ".venv" / "pyvenv.cfg").symlink_to(ROOT / ".venv" / "pyvenv.cfg")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return repo


def _gate(repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(GATE), "--repo", str(repo), "--no-cache"], capture_output=True, text=True,
                          timeout=600)


def _verdicts(out: str) -> dict:
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] in ("pass", "FAIL", "fail", "error", "skipped", "not-run"):
            rows[parts[0]] = parts[1]
    return rows


@pytest.mark.slow
def test_the_gate_runs_ruff_and_the_docs_check_on_this_repository(clone):
    cp = _gate(clone)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    v = _verdicts(cp.stdout)
    assert v.get("ruff") == "pass" and v.get("docs-current") == "pass", cp.stdout

    # a lint error, staged: red on ruff only (the worktree copy is clean: the gate sees the index)
    bad = clone / "swarmgate" / "lint_example.py"
    bad.write_text("import os\n")
    subprocess.run(["git", "add", str(bad)], cwd=clone, check=True)
    bad.write_text('"""clean in the worktree"""\n')
    cp = _gate(clone)
    v = _verdicts(cp.stdout)
    assert cp.returncode != 0 and v.get("ruff") != "pass" and v.get("docs-current") == "pass", cp.stdout
    assert "F401" in cp.stdout + cp.stderr
    subprocess.run(["git", "rm", "-q", "-f", "--cached", str(bad)], cwd=clone, check=True)
    bad.unlink()

    # a stale exit-code table, staged: red on docs-current only
    readme = clone / "README.md"
    readme.write_text(readme.read_text().replace("| 250 | hit its own memory cap |", "| 250 | out of memory |"))
    subprocess.run(["git", "add", "README.md"], cwd=clone, check=True)
    cp = _gate(clone)
    v = _verdicts(cp.stdout)
    assert cp.returncode != 0 and v.get("docs-current") != "pass" and v.get("ruff") == "pass", cp.stdout
    assert "README.md is out of date" in cp.stdout + cp.stderr
