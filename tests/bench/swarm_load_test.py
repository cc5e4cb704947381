"""bench/swarm_load runs, in a tiny configuration (the bench itself is run by hand: no timed assertion
here), and prints every figure it promises; it leaves no slice behind (the session guard checks)."""
import os
import subprocess
import sys

from tests.hosts.cgroups import cgroups_writable, need_real

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench",
                     "swarm_load.py")


def test_swarm_load_runs_in_a_tiny_configuration(tmp_path):
    need_real(cgroups_writable("auto"))
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMGATE_STATE_DIR", "CLAUDE_PROJECT_DIR")}
    cp = subprocess.run([sys.executable, BENCH, "--seconds", "2", "--sessions", "2", "--agents", "2", "--runners", "2",
                         "--single", "2"], capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    for line in ("hook latency, single caller: p50", "hook latency, crowd:", "crowd / single: p50",
                 "lost decisions: 0 of", "max booked / total (ledger):", "max run cgroups' use / total:"):
        assert line in cp.stdout, cp.stdout
