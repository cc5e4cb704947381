"""The package: `python -m build` makes a wheel and an sdist; pipx and `uv tool` install them (from
the wheel and from a checkout); each install's `swarmgate install` wires a repository with its own
interpreter and hook_start.py, and that hook refuses a subagent's heavy command and lets a benign
one through. The wheel is built once per session, from a copy of this working tree (the build
writes swarmgate.egg-info beside the sources). Every tool is pointed at test-owned places: PIPX_HOME,
PIPX_BIN_DIR, UV_TOOL_DIR, UV_TOOL_BIN_DIR, UV_CACHE_DIR, HOME.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from tests import builders as build

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow


def _tool(name: str) -> str:
    return build.venv_tool(name)


def _copy_tree(dest: Path) -> Path:
    """The working tree as it is (tracked and untracked files git does not ignore), in ``dest``."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> dict:
    """{"wheel": path, "sdist": path, "tree": a copy of the working tree}, built once."""
    top = tmp_path_factory.mktemp("dist")
    tree = _copy_tree(top / "tree")
    out = top / "out"
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(tree)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "No module named build" in proc.stderr:
        _tool("pyproject-build")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (wheel,) = out.glob("swarmgate-*.whl")
    (sdist,) = out.glob("swarmgate-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist, "tree": tree}


def _env(tmp_path: Path) -> dict:
    return build.tool_install_env(tmp_path)


def _base_python() -> str:
    """The interpreter under this venv: what a user's pipx or uv would find."""
    return os.path.realpath(sys.executable)


def _wired_hook(repo: Path) -> list[str]:
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    (group,) = [g for g in settings["hooks"]["PreToolUse"] if g.get("matcher") == "Bash|Monitor"]
    h = group["hooks"][0]
    assert h["onFailure"] == "block"
    return [h["command"], *h["args"]]


def _answer(argv: list[str], repo: Path, env: dict, command: str, subagent: bool, path: str = "/usr/bin:/bin") -> dict:
    payload = {"session_id": "pkg", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command, "description": "t"}}
    if subagent:
        payload.update(agent_id="a1", agent_type="implementer")
    proc = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=repo,
                          env={"PATH": path, "SWARMGATE_STATE_DIR": env["SWARMGATE_STATE_DIR"],
                               "HOME": env["HOME"], "SWARMGATE_HOSTS_CONFIG": env["SWARMGATE_HOSTS_CONFIG"]},
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _plugin_hook_guards(bin_dir: Path, repo: Path, env: dict) -> None:
    """The plugin's launcher (plugin/bin/swarmgate-hook) with this install's console scripts on PATH
    starts the install's hook, whatever shebang its installer wrote (pipx 1.18: `#!PYTHON -E`, once
    exec'd as one path: exit 127): a subagent's heavy command refused (B01), `ls` let through."""
    argv, path = [str(ROOT / "plugin" / "bin" / "swarmgate-hook"), "PreToolUse"], f"{bin_dir}:/usr/bin:/bin"
    heavy = _answer(argv, repo, env, "cargo test --workspace", subagent=True, path=path)
    assert "[B01]" in heavy["hookSpecificOutput"]["permissionDecisionReason"], heavy
    assert "permissionDecision" not in json.dumps(_answer(argv, repo, env, "ls -la", subagent=True, path=path))


def _wires_and_guards(bin_dir: Path, venv: Path, tmp_path: Path, env: dict, kind: str) -> None:
    """The install's own `swarmgate install` wires a repository with the install's interpreter and
    hook_start.py; that hook refuses a subagent's heavy command and passes `ls`."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    proc = subprocess.run([str(bin_dir / "swarmgate"), "install", str(repo)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    argv = _wired_hook(repo)
    assert argv[0] == str(venv / "bin" / "python"), argv      # the absolute interpreter of this install
    assert argv[1:3] == ["-I", "-S"]
    assert argv[3] == str(venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
                          / "swarmgate" / "hook_start.py"), argv
    heavy = _answer(argv, repo, env, "cargo test --workspace", subagent=True)
    assert heavy["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "[B01]" in heavy["hookSpecificOutput"]["permissionDecisionReason"]
    assert "permissionDecision" not in json.dumps(_answer(argv, repo, env, "ls -la", subagent=True))
    got = subprocess.run([str(venv / "bin" / "python"), "-m", "swarmgate.install_kind", "--kind"],
                         capture_output=True, text=True, env=env, cwd=tmp_path).stdout.strip()
    assert got == kind
    _plugin_hook_guards(bin_dir, repo, env)


def _tree(root: Path) -> dict[str, bytes]:
    """{path under root: content} of every file (the symlinks' targets as their content)."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
    return out


def _selftest_green_and_leaves_nothing(swarmgate: Path, env: dict, tmp_path: Path) -> None:
    """`swarmgate selftest` of the install exits 0 (every cell green, every switch turns its cells red:
    the fake NVML of gpu-quiesce-run ships in the package) and leaves the machine's state directory,
    HOME and the temp directory as they were: no reminder, booking, alert or run record of a cell
    remains (issue 22)."""
    tmp = tmp_path / "selftest-tmp"
    tmp.mkdir()
    env = {**env, "TMPDIR": str(tmp), "PATH": f"{swarmgate.parent}{os.pathsep}/usr/bin:/bin"}
    state, home = Path(env["SWARMGATE_STATE_DIR"]), Path(env["HOME"])
    state.mkdir(exist_ok=True)
    before = (_tree(state), _tree(home))
    proc = subprocess.run([str(swarmgate), "selftest", "-q"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " 0 failed" in proc.stdout, proc.stdout[-2000:]
    assert "woke you" not in proc.stdout + proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (_tree(state), _tree(home)) == before
    assert not list(tmp.iterdir()), sorted(p.name for p in tmp.iterdir())


def test_the_wheel_and_the_sdist_carry_the_templates_and_the_hook_start(dist):
    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    for need in ("swarmgate/hook_start.py", "swarmgate/hook_engine.py", "swarmgate/hooks/registry.py",
                 "swarmgate/rules/swarmgate.toml", "swarmgate/rules/main-agent.md",
                 "swarmgate/rules/agent-common.md", "swarmgate/gate/gate_staged.py", "swarmgate/hosts/runner.py",
                 "swarmgate/hosts/selftest_fakes/pynvml.py"):
        assert need in names, need
    for sub in ("rules", "agents"):
        shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith(f"swarmgate/rules/{sub}/")}
        assert shipped == {p.name for p in (ROOT / "rules" / sub).glob("*.md")}, sub
    assert not any(n.startswith(("tests/", "bench/", "hooks/")) for n in names)   # only the package
    members = {m.split("/", 1)[1] for m in tarfile.open(dist["sdist"]).getnames() if "/" in m}
    assert {"pyproject.toml", "README.md", "swarmgate/hook_start.py", "rules/swarmgate.toml"} <= members


def test_pipx_installs_the_wheel_and_its_swarmgate_wires_a_repository(dist, tmp_path):
    env = _env(tmp_path)
    proc = subprocess.run([_tool("pipx"), "install", "--python", _base_python(), str(dist["wheel"])],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _wires_and_guards(tmp_path / "bin", tmp_path / "pipx" / "venvs" / "swarmgate", tmp_path, env, "pipx")
    _selftest_green_and_leaves_nothing(tmp_path / "bin" / "swarmgate", env, tmp_path)


def test_uv_tool_installs_the_checkout_and_its_swarmgate_wires_a_repository(dist, tmp_path):
    env = _env(tmp_path)
    proc = subprocess.run([_tool("uv"), "tool", "install", "--python", _base_python(), str(dist["tree"])],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _wires_and_guards(tmp_path / "bin", tmp_path / "uv-tools" / "swarmgate", tmp_path, env, "uv tool")
    _selftest_green_and_leaves_nothing(tmp_path / "bin" / "swarmgate", env, tmp_path)


def test_uv_tool_installs_the_wheel_too(dist, tmp_path):
    env = _env(tmp_path)
    proc = subprocess.run([_tool("uv"), "tool", "install", "--python", _base_python(), str(dist["wheel"])],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _wires_and_guards(tmp_path / "bin", tmp_path / "uv-tools" / "swarmgate", tmp_path, env, "uv tool")
    _selftest_green_and_leaves_nothing(tmp_path / "bin" / "swarmgate", env, tmp_path)


def test_pip_installs_the_wheel_into_a_plain_venv_and_its_selftest_is_green(dist, tmp_path):
    """The wheel kind: `pip install swarmgate-*.whl` into a virtual environment of the user's."""
    env = _env(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True, env=env, timeout=300)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(dist["wheel"])],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    proc = subprocess.run([str(venv / "bin" / "swarmgate"), "install", str(repo)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _plugin_hook_guards(venv / "bin", repo, env)
    _selftest_green_and_leaves_nothing(venv / "bin" / "swarmgate", env, tmp_path)

def test_the_readme_first_command_gives_a_regular_install_that_wires_a_repository(dist, tmp_path):
    """On a fresh clone (the copy of this tree, with git), `./install.sh --into PATH`: .venv holds a
    regular (non-editable) install, and the repository's hooks run it."""
    clone = tmp_path / "clone"
    shutil.copytree(dist["tree"], clone, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    env = _env(tmp_path)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    proc = subprocess.run(["./install.sh", "--into", str(repo)], cwd=clone, capture_output=True, text=True,
                          env={**env, "PYTHON": _base_python()}, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    venv = clone / ".venv"
    kind = subprocess.run([str(venv / "bin" / "python"), "-m", "swarmgate.install_kind", "--kind"],
                          capture_output=True, text=True, cwd=tmp_path).stdout.strip()
    assert kind == "regular"
    assert not list(venv.glob("lib/python*/site-packages/__editable__*"))
    assert not (clone / "build").exists()
    argv = _wired_hook(repo)
    assert argv[0] == str(venv / "bin" / "python") and "/site-packages/swarmgate/hook_start.py" in argv[3]
    heavy = _answer(argv, repo, env, "cargo test --workspace", subagent=True)
    assert heavy["hookSpecificOutput"]["permissionDecision"] == "deny"
    _plugin_hook_guards(venv / "bin", repo, env)
    _selftest_green_and_leaves_nothing(venv / "bin" / "swarmgate", env, tmp_path)
