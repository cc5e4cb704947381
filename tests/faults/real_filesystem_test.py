"""Each console tool with its state on a real full filesystem and on a real read-only one (issue 26).

The injection harness (harness.py) fails each write as the write layer would; here the kernel does it: a
small tmpfs mounted for the test, filled to ENOSPC, or remounted read-only (EROFS). Every tool answers
with its documented code and one line naming the path and the errno, never a traceback; a hook keeps
judging and says the log could not be written. (EIO and EDQUOT need a failing device or quotas: the
harness injects them.)
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from swarmgate.hosts.runner_selftest import Sandbox
from tests import builders as build
from tests.agents.support import install_templates
from tests.faults.harness import BIN, GOOD_SCRATCH_PROMPT
from tests.hosts.cgroups import cgroups_writable, need_real

ERRNO = {"full": "(ENOSPC)", "read-only": "(EROFS)"}


@contextlib.contextmanager
def broken_fs(top: Path, kind: str):
    """``top/state`` on a tmpfs that is full, or read-only (mounted, made, then remounted ro)."""
    with build.full_filesystem(top) as state:
        if kind == "read-only":
            os.unlink(top / "filler")
            subprocess.run(["mount", "-o", "remount,ro", str(top)], check=True, timeout=30)
        yield state


@pytest.fixture(params=["full", "read-only"])
def fs(request, tmp_path):
    with broken_fs(tmp_path / "fs", request.param) as state:
        yield request.param, state


def _one_line(cp: subprocess.CompletedProcess, code: int, kind: str, path: Path) -> str:
    err = cp.stderr
    assert "Traceback" not in err, err
    assert cp.returncode == code, (cp.returncode, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and ERRNO[kind] in lines[0], err
    return lines[0]


def _run(argv: list[str], state: Path, cwd, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "SWARMGATE_STATE_DIR": str(state), "SWARMGATE_DETACHED_BACKEND": "process", **env}
    full_env.pop("CLAUDE_PROJECT_DIR", None)
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=full_env, timeout=120)


CALLS = {   # tool: (argv after the program, given the repository; the code)
    "detached-run": (lambda repo: ["detached-run", "start", "--label", "j", "--", "true"], 251),
    "records": (lambda repo: ["swarmgate", "records", "--repo", str(repo), "new", "r1", "--goal", "g", "--exit", "e",
                              "--session", "s"], 251),
    "remind": (lambda repo: ["remind", "10m", "check", "--session", "s1"], 251),
    "workspace-lock": (lambda repo: ["workspace-lock", "run", "--name", "m", "--timeout", "2", "--", "true"], 251),
}


@pytest.mark.parametrize("tool", list(CALLS))
def test_a_tool_whose_state_cannot_be_written_answers_in_one_line(tool, fs, tmp_path):
    kind, state = fs
    argv, code = CALLS[tool]
    repo = build.git_repo(tmp_path / "repo")
    prog, *args = argv(repo)
    _one_line(_run([str(BIN / prog), *args], state, repo), code, kind, state)


def test_work_dir_owner_whose_work_root_cannot_be_written_answers_in_one_line(fs, tmp_path):
    kind, state = fs
    cp = _run([str(BIN / "work-dir-owner"), "claim", "w1", "--root", str(state), "--purpose", "p"], state, tmp_path,
              SWARMGATE_SESSION_ID="s1")
    _one_line(cp, 251, kind, state)


def test_the_runner_refuses_in_one_line_and_runs_nothing(fs, tmp_path):
    kind, state = fs
    need_real(cgroups_writable("auto"))
    sb = Sandbox(prefix="sgtest")
    try:
        ran = tmp_path / "ran"
        r = sb.run(["32M", "--", "sh", "-c", f"touch {ran}"], SWARMGATE_STATE_DIR=str(state))
        err = r.stderr.decode(errors="replace")
        assert r.returncode == 251 and "Traceback" not in err and str(state) in err and ERRNO[kind] in err, err
        assert not ran.exists()
    finally:
        sb.cleanup()


def test_gate_staged_answers_in_one_line_and_touches_nothing(fs, tmp_path):
    kind, state = fs
    repo = build.git_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("staged\n")
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    index = (repo / ".git" / "index").read_bytes()
    cp = _run([str(BIN / "gate-staged"), "--repo", str(repo)], state, repo)
    assert cp.returncode == 251 and "Traceback" not in cp.stderr and ERRNO[kind] in cp.stderr, cp.stderr
    assert len(cp.stderr.strip().splitlines()) == 1 and str(state) in cp.stderr, cp.stderr
    assert (repo / ".git" / "index").read_bytes() == index and (repo / "a.txt").read_text() == "staged\n"


def test_preflight_single_instance_is_an_unmet_run_condition(fs, tmp_path):
    kind, state = fs
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\n# run-condition: single-instance\ntouch ran\n")
    script.chmod(0o755)
    cp = _run([str(BIN / "swarmgate"), "preflight", str(script)], state, tmp_path)
    assert cp.returncode == 78 and "Traceback" not in cp.stderr, cp.stderr
    assert "run-condition: single-instance" in cp.stderr and ERRNO[kind] in cp.stderr, cp.stderr
    assert not (tmp_path / "ran").exists()


def test_a_hook_keeps_judging_refuses_what_needs_state_and_says_the_log_was_not_written(fs, tmp_path):
    kind, state = fs
    repo = build.git_repo(tmp_path / "repo")
    install_templates(repo)
    (repo / ".swarmgate").mkdir()
    os.symlink(state, repo / ".swarmgate" / "log")   # the decision log on the broken filesystem too

    def hook(p: dict) -> dict:
        env = {**os.environ, "SWARMGATE_STATE_DIR": str(state), "CLAUDE_PROJECT_DIR": str(repo)}
        cp = subprocess.run([str(BIN / "swarmgate"), "hook", p["hook_event_name"]], input=json.dumps(p),
                            capture_output=True, text=True, cwd=repo, env=env, timeout=120)
        assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp.stderr
        return json.loads(cp.stdout)["hookSpecificOutput"]

    ls = hook(build.payload("PreToolUse", repo=repo, tool="Bash", tool_input={"command": "ls"}))
    assert "permissionDecision" not in ls, ls   # needs no state: allowed
    assert "could not write the decision log" in ls["additionalContext"] and ERRNO[kind] in ls["additionalContext"]
    prompt = GOOD_SCRATCH_PROMPT.format(scratch=tmp_path / "scratch")
    d = hook(build.payload("PreToolUse", repo=repo, tool="Agent", tool_input=build.dispatch(prompt)["tool_input"]))
    assert d["permissionDecision"] == "deny" and ERRNO[kind] in d["permissionDecisionReason"], d
