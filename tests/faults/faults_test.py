"""The fault harness (tests/faults/harness.py) over every tool that writes state, and what it fixed.

Each tool's row: every state write of an ordinary run fails once (ENOSPC, EROFS, EIO, EDQUOT), then is a
SIGKILL point before and after; the tool's next ordinary call finds every invariant whole. Real processes,
real cgroups (the runner), real git repositories; nothing is left behind.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
