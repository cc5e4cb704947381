"""Inside the VM: run the job's pytest cases and leave the results on the share.

Started by tests/vm/init.sh (layout v2) or by swarmgate-vm.service (layout systemd) with the host's
venv python. Reads /run/sgvm/share/job.json (written by tests/vm/machine.py on the host), writes
``started`` next to it (the VM booted: the host tells a VM that never came up from failing tests),
runs pytest from the read-only checkout (no bytecode, no cache), and writes results.jsonl (one
record per test phase, by tests/vm/plugin.py), pytest.log, and exit (pytest's status, written last).
Standard library only; every file is fsynced before the guest powers off.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

SHARE = "/run/sgvm/share"
HOME = "/tmp/home"


def write_synced(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main() -> int:
    with open(os.path.join(SHARE, "job.json")) as f:
        job = json.load(f)
    python, checkout = job["python"], job["checkout"]
    os.makedirs(HOME, exist_ok=True)
    env = {
        "PATH": f"{os.path.dirname(python)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": HOME, "LANG": "C.UTF-8", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1",
        "SWARMGATE_VM_LAYOUT": job["layout"], "SWARMGATE_VM_RESULTS": os.path.join(SHARE, "results.jsonl"),
        "SWARMGATE_VM_GUEST_BACKEND": job.get("backend", ""),
    }
    env.update(job.get("env") or {})
    if job.get("shell"):
        argv = ["/bin/sh", "-c", job["shell"]]
    else:
        argv = [python, "-B", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs",
                *job.get("pytest_args", []), *job["nodeids"]]
    print(f"sgvm-guest: {job['layout']}: {len(job['nodeids'])} case(s)", flush=True)
    write_synced(os.path.join(SHARE, "started"), "")  # the VM booted: what fails from here is the tests'
    with open(os.path.join(SHARE, "pytest.log"), "wb") as log:
        try:
            rc = subprocess.call(argv, cwd=checkout, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT)
        except OSError as e:
            log.write(f"sgvm-guest: cannot start {argv[0]}: {e}\n".encode())
            rc = 127
        log.flush()
        os.fsync(log.fileno())
    write_synced(os.path.join(SHARE, "exit"), str(rc))
    print(f"sgvm-guest: pytest exited {rc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
