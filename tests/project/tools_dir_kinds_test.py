"""The tools' directory on the agents' PATH for each install kind (issue 22): pipx (1.18's
`#!PYTHON -E` scripts), `uv tool`, a wheel pip-installed into a venv (the regular install's layout),
and the plugin running one of them. A wheel of this working tree
is installed by the real pipx and uv into test-owned homes; that install's `swarmgate install`
wires a repository; its SessionStart hook, run as the client runs it with an env file, makes
`<venv>/swarmgate-tools`, and bash reading the env file (as Claude Code does before each command)
finds `run-with-memory-cap` and `remind` there and runs them, and no python or pip of the venv.
The regular and development installs: tests/swarmgate/tools_dir_test.py, tests/e2e/agents_path_e2e_test.py.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.tools_dir import script_names
from tests import builders as build

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow
USER_PATH = "/usr/bin:/bin"   # the PATH the client was started with: no venv in it


def _tool(name: str) -> str:
    return build.venv_tool(name)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    top = tmp_path_factory.mktemp("wheel")
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        if (ROOT / rel).is_file():
            (top / "tree" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, top / "tree" / rel)
    proc = subprocess.run([sys.executable, "-m", "pip", "-q", "wheel", "--no-deps", "--no-build-isolation", "-w",
                           str(top / "out"), str(top / "tree")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = (top / "out").glob("swarmgate-*.whl")
    return whl


def _env(tmp_path: Path) -> dict:
    return build.tool_install_env(tmp_path)


def _session_start_gives_the_tools(venv: Path, tmp_path: Path, env: dict, plugin: bool = False) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    proc = subprocess.run([str(tmp_path / "bin" / "swarmgate"), "install", str(repo)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tools = venv / "swarmgate-tools"
    assert f"tools      {tools}" in proc.stdout, proc.stdout
    shutil.rmtree(tools)   # SessionStart makes it again
    if plugin:   # the plugin's hook: the install on PATH (pipx's bin directory), its interpreter from the shebang
        argv = [str(ROOT / "plugin" / "bin" / "swarmgate-hook"), "SessionStart"]
        hook_path = f"{tmp_path / 'bin'}:{USER_PATH}"
    else:
        settings = json.loads((repo / ".claude" / "settings.json").read_text())
        (group,) = settings["hooks"]["SessionStart"]
        argv, hook_path = [group["hooks"][0]["command"], *group["hooks"][0]["args"]], USER_PATH
    env_file = tmp_path / "session-env" / "sessionstart-hook-0.sh"
    env_file.parent.mkdir()
    payload = {"session_id": "kinds", "transcript_path": "", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}
    hook_env = {"PATH": hook_path, "HOME": env["HOME"], "SWARMGATE_STATE_DIR": env["SWARMGATE_STATE_DIR"],
                "SWARMGATE_HOSTS_CONFIG": env["SWARMGATE_HOSTS_CONFIG"], "CLAUDE_ENV_FILE": str(env_file),
                "CLAUDE_PROJECT_DIR": str(repo), "CLAUDE_PLUGIN_ROOT": str(ROOT / "plugin")}
    if plugin:   # a plugin-only repository: no settings hooks for the plugin to defer to
        (repo / ".claude" / "settings.json").unlink()
    hook = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=repo, env=hook_env,
                          timeout=120)
    assert hook.returncode == 0, hook.stderr
    assert "NOT on this session's PATH" not in hook.stdout, hook.stdout
    script = (f". {env_file}; command -v run-with-memory-cap; command -v pip || echo no-pip; command -v python3; "
              "run-with-memory-cap --help >/dev/null && remind --help >/dev/null && echo both-ran")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=repo,
                         env={"PATH": USER_PATH, "HOME": env["HOME"],
                              "SWARMGATE_STATE_DIR": env["SWARMGATE_STATE_DIR"]}).stdout.splitlines()
    assert out[0] == str(tools / "run-with-memory-cap") and out[-1] == "both-ran", (out, hook.stdout[-500:])
    assert not any(line.startswith(str(venv) + "/bin") for line in out), out   # its pip, python stay off PATH
    assert sorted(os.listdir(tools)) == sorted(script_names())
    assert all((tools / n).is_symlink() for n in script_names())


def test_pipx(wheel, tmp_path):
    env = _env(tmp_path)
    proc = subprocess.run([_tool("pipx"), "install", "--python", os.path.realpath(sys.executable), str(wheel)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _session_start_gives_the_tools(tmp_path / "pipx" / "venvs" / "swarmgate", tmp_path, env)


def test_uv_tool(wheel, tmp_path):
    env = _env(tmp_path)
    proc = subprocess.run([_tool("uv"), "tool", "install", "--python", os.path.realpath(sys.executable), str(wheel)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _session_start_gives_the_tools(tmp_path / "uv-tools" / "swarmgate", tmp_path, env)


def test_the_plugin_on_a_pipx_install(wheel, tmp_path):
    env = _env(tmp_path)
    proc = subprocess.run([_tool("pipx"), "install", "--python", os.path.realpath(sys.executable), str(wheel)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _session_start_gives_the_tools(tmp_path / "pipx" / "venvs" / "swarmgate", tmp_path, env, plugin=True)


def test_a_wheel_pip_installed_into_a_venv(wheel, tmp_path):
    """The wheel kind, and the layout of the regular install (`pip install .` into .venv)."""
    env = _env(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([os.path.realpath(sys.executable), "-m", "venv", str(venv)], check=True, env=env, timeout=300)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "-q", "install", str(wheel)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (tmp_path / "bin").symlink_to(venv / "bin")   # where _session_start_gives_the_tools calls `swarmgate install`
    _session_start_gives_the_tools(venv, tmp_path, env)
