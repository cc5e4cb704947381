"""The events and configs the tests build, in one place: a hook payload as Claude Code sends it
(main agent or subagent), a dispatch, a validated repository config, files in a temporary tree."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.config import Config, parse_toml, validate
from swarmgate.host_defaults import auto_threads, machine_cores
from swarmgate.hook_protocol import HookEvent

SESSION = "s1"
AGENT_ID = "agent-1"


def payload(event: str = "PreToolUse", *, repo, tool: str | None = None, tool_input: dict | None = None,
            session: str = SESSION, agent_type: str | None = None, agent_id: str = AGENT_ID,
            cwd=None, **extra) -> dict:
    """A hook payload: the fields every event carries, a tool call when ``tool`` is given, and the
    subagent's identity when ``agent_type`` is (the main agent's calls carry none)."""
    out = {"session_id": session, "transcript_path": "", "cwd": str(cwd or repo), "hook_event_name": event}
    if tool is not None:
        out["tool_name"] = tool
    if tool is not None or tool_input is not None:
        out["tool_input"] = dict(tool_input or {})
    if agent_type is not None:
        out["agent_id"] = agent_id
        out["agent_type"] = agent_type
    out.update(extra)
    return out


def bash(command: str, *, repo, tool: str = "Bash", tool_input: dict | None = None, **kw) -> dict:
    """A Bash (or Monitor) call running ``command``."""
    ti = dict(tool_input or {})
    ti["command"] = command
    return payload("PreToolUse", repo=repo, tool=tool, tool_input=ti, **kw)


# the registered thread default with the default config ([threads] heavy_default = "auto"): this machine's
# cores less one, as D15 and dispatch-prompt read it
THREADS = auto_threads(machine_cores())
GOOD_PROMPT = ("task: add the header parser\nexit criterion: tests pass\nheavy test: do not run\n"
               f"thread cap: {THREADS}\n")


def dispatch(prompt: str = GOOD_PROMPT, agent_type: str = "implementer", tool_use_id: str = "toolu_1",
             **tool_input) -> dict:
    """The tool part of an Agent call (merge it into a payload, or give it to the hook helpers)."""
    ti = {"description": "implement", "prompt": prompt, "subagent_type": agent_type}
    ti.update(tool_input)
    return {"tool_name": "Agent", "tool_use_id": tool_use_id, "tool_input": ti}


def event(p: dict, repo) -> HookEvent:
    """The engine's view of a payload."""
    return HookEvent(p["hook_event_name"], p, str(repo))


def write_files(root, files: dict) -> None:
    """Files under ``root`` (str or bytes content); `*.sh` are made executable."""
    for rel, content in files.items():
        path = os.path.join(str(root), rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
        if rel.endswith(".sh"):
            os.chmod(path, 0o755)


def config(repo, text: str = "") -> Config:
    """The repository's validated config: ``text`` written to .claude/swarmgate.toml first (none: defaults)."""
    repo = str(repo)
    raw, path = {}, None
    if text:
        path = os.path.join(repo, ".claude", "swarmgate.toml")
        write_files(repo, {".claude/swarmgate.toml": text})
        raw = parse_toml(path)
    return Config(validate(raw, path), path, repo, raw)


def git_repo(path) -> Path:
    """An empty git repository at ``path`` (identity and config: the suite's isolation fixture)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def fill(path: Path) -> None:
    """Write ``path`` until its filesystem has no space left (unbuffered: the last write fails, not close)."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 4096)
        except OSError:
            pass


@contextlib.contextmanager
def full_filesystem(top: Path, size: str = "256k"):
    """A directory ``top/state`` on a real, full filesystem: a small tmpfs mounted at ``top`` (root) and
    filled to ENOSPC by ``top/filler``; unmounted afterwards (remove the filler to make room)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    top = Path(top)
    top.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(top)], check=True, timeout=30)
    try:
        (top / "state").mkdir()
        fill(top / "filler")
        yield top / "state"
    finally:
        subprocess.run(["umount", str(top)], check=True, timeout=30)
    assert not os.path.ismount(top)


def tool_install_env(tmp_path: Path) -> dict:
    """The environment of a pipx / uv tool install into ``tmp_path`` (its own HOME, tool dirs, cache and
    state; no PIPX_/UV_/VIRTUAL_ENV/CLAUDE* variable of the caller's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "UV_", "VIRTUAL_ENV", "CLAUDE"))}
    env.update(HOME=str(tmp_path / "home"), PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
               PIPX_MAN_DIR=str(tmp_path / "man"), UV_TOOL_DIR=str(tmp_path / "uv-tools"),
               UV_TOOL_BIN_DIR=str(tmp_path / "bin"), UV_CACHE_DIR=str(tmp_path / "uv-cache"),
               UV_PYTHON_DOWNLOADS="never", SWARMGATE_STATE_DIR=str(tmp_path / "state"),
               SWARMGATE_HOSTS_CONFIG=str(tmp_path / "no-hosts.toml"))
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def venv_tool(name: str) -> str:
    """A program of the test extras beside this interpreter (pipx, uv, pyproject-build), else a skip with the
    way to get it (a failure under SWARMGATE_REQUIRE_REAL_PARTS=1: tests/conftest.py turns every skip into one)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in {path.parent} (the test extras: ./install.sh --dev)")
    return str(path)
