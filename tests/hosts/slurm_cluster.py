"""A real single-node Slurm (munged, slurmctld, slurmd) on loopback, started and stopped by the test."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

from tests.hosts.sshd import free_port, require

MUNGE_SOCKET = "/run/munge/munge.socket.2"


def _munge_answers() -> bool:
    """A munged is listening (a socket file alone may be left by one that died)."""
    with socket.socket(socket.AF_UNIX) as s:
        try:
            s.connect(MUNGE_SOCKET)
            return True
        except OSError:
            return False


class SlurmCluster:
    def __init__(self, root: str) -> None:
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(root, "slurm.conf")
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self) -> SlurmCluster:
        for tool in ("slurmctld", "slurmd", "srun", "scontrol", "munged"):
            if not (shutil.which(tool) or os.path.exists(f"/usr/sbin/{tool}")):
                require(f"{tool} not installed (apt-get install slurm-wlm munge)")
        if not os.path.exists("/etc/munge/munge.key"):
            require("munge has no key (/etc/munge/munge.key)")
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        r = self.root
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=swarmgate-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/ctld.log
SlurmdLogFile={r}/log/d.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={r}/log/jobcomp.txt
DefMemPerCPU=100
ReturnToService=2
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory=4000
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
""")
        with open(os.path.join(r, "cgroup.conf"), "w") as f:
            f.write("CgroupPlugin=cgroup/v1\nConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=0\n")
        if not _munge_answers():
            if os.path.exists(MUNGE_SOCKET):
                os.unlink(MUNGE_SOCKET)  # left by a munged that is gone
            os.makedirs("/run/munge", exist_ok=True)
            shutil.chown("/run/munge", "munge", "munge")
            self._spawn(["runuser", "-u", "munge", "--", "/usr/sbin/munged", "-F"], "munged.out")
            deadline = time.monotonic() + 30
            while not _munge_answers():
                if time.monotonic() > deadline or self.procs[-1].poll() is not None:
                    self.stop()
                    raise RuntimeError("munged did not start: "
                                       + open(os.path.join(r, "log", "munged.out")).read()[-400:])
                time.sleep(0.1)
        self._spawn(["slurmctld", "-D", "-i", "-f", self.conf], "ctld.out")
        deadline = time.monotonic() + 60  # polls end as soon as the part answers; 60 s bounds a loaded machine
        while "is UP" not in subprocess.run(["scontrol", "ping"], env=self.env, capture_output=True,
                                            text=True).stdout:
            if time.monotonic() > deadline or self.procs[-1].poll() is not None:
                self.stop()
                raise RuntimeError("slurmctld did not start: "
                                   + open(os.path.join(r, "log", "ctld.out")).read()[-400:])
            time.sleep(0.2)
        self._spawn(["slurmd", "-D", "-f", self.conf], "d.out")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            cp = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if cp.stdout.strip() == "idle":
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("Slurm did not come up: " + open(os.path.join(r, "log", "ctld.out")).read()[-400:])

    def _spawn(self, argv: list[str], log: str) -> None:
        out = open(os.path.join(self.root, "log", log), "w")
        self.procs.append(subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT))

    def stop(self) -> None:
        subprocess.run(["scancel", "--full", "-u", "root"], env=self.env, capture_output=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            cp = subprocess.run(["squeue", "-h"], env=self.env, capture_output=True, text=True)
            if cp.returncode != 0 or not cp.stdout.strip():
                break
            time.sleep(0.2)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # slurmd puts its cgroups at the hierarchy root: remove the (empty) ones it left
        for ctl in os.listdir("/sys/fs/cgroup"):
            top = os.path.join("/sys/fs/cgroup", ctl, f"slurm_{self.node}")
            if os.path.isdir(top) and not os.path.islink(os.path.join("/sys/fs/cgroup", ctl)):
                # children before parents (reverse path order); what stays is reported by the session guard
                for d, _, _ in sorted(os.walk(top), reverse=True):
                    try:
                        os.rmdir(d)
                    except OSError:
                        pass
