"""The fault harness (tests/faults/harness.py) over every tool that writes state, and what it fixed.

Each tool's row: every state write of an ordinary run fails once (ENOSPC, EROFS, EIO, EDQUOT), then is a
SIGKILL point before and after; the tool's next ordinary call finds every invariant whole. Real processes,
real cgroups (the runner), real git repositories; nothing is left behind.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests import builders as build
from tests.faults import harness
from tests.hosts.cgroups import cgroups_writable, need_real


@pytest.mark.parametrize("tool", list(harness.SCENARIOS))
def test_no_failed_or_killed_state_write_breaks_an_invariant(tool):
    if tool == "runner":
        need_real(cgroups_writable("cgroup1"))
    rows = harness.run([tool])
    (row,) = rows
    assert row["writes"] > 0 and row["points"] == 3 * row["writes"]
    assert row["violations"] == [], "\n".join(row["violations"])


def test_the_injector_is_inert_unless_the_harness_sets_it(tmp_path):
    """Unset, the sitecustomize loads nothing (the hot path pays nothing); set, it counts every write."""
    env = {**os.environ, "PYTHONPATH": harness.INJECT + os.pathsep + harness.ROOT}
    env.pop("SWARMGATE_FAULT", None)
    code = "import sys; print('swarmgate.statefile' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout == "False\n"
    fault = tmp_path / "f"
    fault.mkdir()
    env.update(SWARMGATE_FAULT="fail:2", SWARMGATE_FAULT_DIR=str(fault))
    code = ("from swarmgate import statefile as s\n"
            f"s.write_json_atomic({str(tmp_path / 'a.json')!r}, 1)\n"
            f"try: s.append_jsonl({str(tmp_path / 'b.jsonl')!r}, {{}})\n"
            "except s.StateWriteError as e: print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip().endswith("Read-only file system (EROFS)"), out
    assert harness.count(str(fault)) == 2


def test_a_hook_that_cannot_write_its_log_answers_and_says_so(tmp_path):
    """The decision log on a full filesystem: the call is judged as ever, and its context says the log
    could not be written (it was silently skipped)."""
    repo = build.git_repo(tmp_path / "repo")
    with build.full_filesystem(tmp_path / "full") as full:
        os.makedirs(repo / ".swarmgate")
        os.symlink(full, repo / ".swarmgate" / "log")   # the log directory on the full filesystem
        p = build.payload("PreToolUse", repo=repo, tool="Bash", tool_input={"command": "ls"})
        env = {**os.environ, "SWARMGATE_STATE_DIR": str(tmp_path / "state"), "CLAUDE_PROJECT_DIR": str(repo)}
        cp = subprocess.run([str(harness.BIN / "swarmgate"), "hook", "PreToolUse"], input=json.dumps(p),
                            capture_output=True, text=True, env=env, cwd=repo)
    assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp.stderr
    ctx = json.loads(cp.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "swarmgate could not write the decision log: cannot write" in ctx and "(ENOSPC)" in ctx, ctx
    assert "permissionDecision" not in json.loads(cp.stdout)["hookSpecificOutput"]   # ls needs no state: allowed
