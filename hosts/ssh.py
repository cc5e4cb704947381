"""Talking to a peer over ssh: command lines, bounded runs, and redaction of its private names."""
from __future__ import annotations

import re
import shlex
import subprocess


class PeerError(Exception):
    """The peer could not be reached or answered nonsense."""


def ssh_argv(peer: dict, remote: str | None = None, *, batch: bool = True) -> list[str]:
    argv = ["ssh", "-o", "BatchMode=yes" if batch else "BatchMode=no",
            "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15",
            "-p", str(peer.get("port") or 22)]
    if peer.get("identity"):
        argv += ["-i", str(peer["identity"]), "-o", "IdentitiesOnly=yes"]
    for opt in peer.get("ssh_options") or []:
        argv += ["-o", opt]
    target = f"{peer['user']}@{peer['host']}" if peer.get("user") else str(peer["host"])
    argv.append(target)
    if remote is not None:
        argv.append(remote)
    return argv


def run(peer: dict, remote: str, *, timeout: float = 60.0, input_bytes: bytes | None = None,
        check: bool = False) -> subprocess.CompletedProcess:
    """Run a remote shell command; PeerError when ssh itself fails (exit 255) or times out."""
    argv = ssh_argv(peer, remote)
    env = None
    if peer.get("transport") == "local":
        import os

        from swarmgate.break_switch import BREAK_ENV, TOKEN_ENV
        argv = ["bash", "-c", remote]
        # the environment a real peer's ssh session would not have: this machine's break switches
        # (they are the local side's; the peer side runs detached, where none would be honoured)
        env = {k: v for k, v in os.environ.items() if k not in (BREAK_ENV, TOKEN_ENV)}
        env["SWARMGATE_ON_PEER"] = "1"
    try:
        cp = subprocess.run(argv, env=env, input=input_bytes, capture_output=True,
                            timeout=timeout, stdin=None if input_bytes is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise PeerError(f"peer {peer.get('name', peer['host'])} did not answer within {timeout:.0f}s") from None
    except FileNotFoundError:
        raise PeerError("ssh is not installed on this machine") from None
    if cp.returncode == 255:
        err = cp.stderr.decode(errors="replace").strip().splitlines()
        raise PeerError(f"cannot reach peer {peer.get('name', peer['host'])}: {err[-1] if err else 'ssh exit 255'}")
    if check and cp.returncode != 0:
        raise PeerError(f"on peer: `{remote[:120]}` exited {cp.returncode}: "
                        f"{cp.stderr.decode(errors='replace').strip()[-300:]}")
    return cp


def quote(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


class Redactor:
    """Replaces the peer's private host names and addresses with <peer>."""

    def __init__(self, secrets: list[str], replacement: str = "<peer>") -> None:
        uniq = sorted({s for s in secrets if s and len(s) >= 2}, key=len, reverse=True)
        self.replacement = replacement
        # whole names only: a short host name ("vm") must not eat parts of other words
        self._re = (re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(s) for s in uniq) + r")(?![\w-])")
                    if uniq else None)

    def __call__(self, text: str) -> str:
        from swarmgate.break_switch import broken

        if self._re is None or broken("no-redact"):
            return text
        return self._re.sub(self.replacement, text)
