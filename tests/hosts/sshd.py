"""A real sshd on loopback, started by the test as its child and stopped by pid."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest


def require(reason: str) -> None:
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    def __init__(self, root: str) -> None:
        self.root = root
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.client_key = os.path.join(root, "client_key")

    def start(self) -> Sshd:
        sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
        if not sshd or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
            require("openssh-server/ssh-keygen not installed (apt-get install openssh-server)")
        os.makedirs("/run/sshd", exist_ok=True)
        host_key = os.path.join(self.root, "host_key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host_key], check=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.client_key], check=True)
        auth = os.path.join(self.root, "authorized_keys")
        shutil.copy(self.client_key + ".pub", auth)
        os.chmod(auth, 0o600)
        conf = os.path.join(self.root, "sshd_config")
        with open(conf, "w") as f:
            f.write(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {host_key}
AuthorizedKeysFile {auth}
PidFile {self.root}/sshd.pid
StrictModes no
UsePAM no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowUsers {os.environ.get('USER', 'root') if os.getuid() else 'root'}
AcceptEnv NONE
Subsystem sftp internal-sftp
LogLevel ERROR
""")
        self.proc = subprocess.Popen([sshd, "-D", "-e", "-f", conf], stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.root, "sshd.log"), "w"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        log = open(os.path.join(self.root, "sshd.log")).read()
        self.stop()
        raise RuntimeError(f"sshd did not start: {log[-500:]}")

    def peer_toml(self, name: str, work_root: str, **extra: str) -> str:
        lines = [f"[peers.{name}]", 'host = "127.0.0.1"', f"port = {self.port}", 'user = "root"',
                 f'identity = "{self.client_key}"',
                 'ssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"]',
                 f'work_root = "{work_root}"']
        if "state_dir" not in extra:
            # the peer is this machine: without it the peer's runner and collector would use the
            # default /var/tmp/swarmgate, which tests must never touch
            lines.append(f'state_dir = "{os.path.join(work_root, "peer-state")}"')
        lines += [f"{k} = {v}" for k, v in extra.items()]
        return "\n".join(lines) + "\n"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            assert self.proc.poll() is not None


def serve(tmp_path_factory):
    """The body of a module-scoped ``sshd`` fixture (``yield from serve(tmp_path_factory)``): a
    started Sshd in a fresh temp dir, stopped after the module's tests."""
    server = Sshd(str(tmp_path_factory.mktemp("sshd"))).start()
    try:
        yield server
    finally:
        server.stop()
