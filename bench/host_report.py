"""Bench: host-resources for this host and a loopback peer, and what R01 adds to a hook call.

One run, side by side:
- `host-resources --json` for this host only and for this host + a real sshd peer on
  loopback (the collector is sent over ssh): median wall time of each;
- `swarmgate hook PreToolUse` on a heavy command (R01 builds the local report) vs the
  same hook on a plain command, interleaved: medians and the ratio.
Bar (issue 7): R01 adds ≤ 1.5x to a hook call for the local host; exit 1 when it adds more.
The load average is printed beside each figure.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from machine_load import load, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)


def timed(argv, **kw) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t0


def main() -> int:
    from tests.hosts.sshd import Sshd

    n = int(os.environ.get("BENCH_N", "30"))
    with tempfile.TemporaryDirectory(prefix="swarmgate-bench-hr-") as tmp:
        repo = os.path.join(tmp, "repo")
        os.makedirs(os.path.join(repo, ".claude"))
        with open(os.path.join(repo, ".claude", "swarmgate.toml"), "w") as f:
            f.write('[scope]\nverify_patterns = ["never-matches"]\n')
        env = dict(os.environ, SWARMGATE_STATE_DIR=os.path.join(tmp, "state"), CLAUDE_PROJECT_DIR=repo,
                   SWARMGATE_HOSTS_CONFIG=os.path.join(tmp, "none.toml"))
        sshd = Sshd(os.path.join(tmp, "sshd"))
        os.makedirs(sshd.root)
        sshd.start()
        try:
            hosts = os.path.join(tmp, "hosts.toml")
            with open(hosts, "w") as f:
                f.write("[across_machines]\nenabled = true\n" + sshd.peer_toml("peer", os.path.join(tmp, "root")))
            hr = [os.path.join(BIN, "host-resources"), "--json"]
            local, both = [], []
            for _ in range(max(n // 3, 5)):
                local.append(timed(hr + ["--host", "here"], env=env))
                both.append(timed(hr + ["--hosts-config", hosts], env=env))
            hr_load = load()
            heavy = json.dumps({"session_id": "b", "cwd": repo, "tool_name": "Bash",
                                "tool_input": {"command": "SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- "
                                                          "cargo test --workspace"}})
            plain = json.dumps({"session_id": "b", "cwd": repo, "tool_name": "Bash",
                                "tool_input": {"command": "git status --short"}})
            hook = [os.path.join(BIN, "swarmgate"), "hook", "PreToolUse"]
            with_r01, without = [], []
            for _ in range(n):
                without.append(timed(hook, input=plain.encode(), env=env))
                with_r01.append(timed(hook, input=heavy.encode(), env=env))
            hook_load = load()
        finally:
            sshd.stop()
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    print(f"host-resources --json, this host:          median {ms(local):7.1f} ms ({len(local)} runs)  {hr_load}")
    print(f"host-resources --json, this host + peer:   median {ms(both):7.1f} ms (peer over ssh, loopback)")
    print(f"hook PreToolUse, plain command:            median {ms(without):7.1f} ms ({n} runs)  {hook_load}")
    print(f"hook PreToolUse, heavy command with R01:   median {ms(with_r01):7.1f} ms")
    ratio = statistics.median(with_r01) / statistics.median(without)
    print(f"R01 ratio (heavy with report / plain):     {ratio:.2f}x  ({verdict(ratio <= 1.5, '<= 1.5x')})  "
          f"{hook_load}")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
