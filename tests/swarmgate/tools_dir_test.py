"""swarmgate/tools_dir.py: the directory holding only swarmgate's console scripts, put on the agents'
PATH at SessionStart after the exec-time shims, and given to the user's shell by `swarmgate install`.

A venv is laid out for real where a test needs one of its own (pyvenv.cfg, bin/ with executables);
the SessionStart test runs the real hook of a real install, and bash reads the env file it wrote."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from swarmgate import doctor, install, tools_dir
from swarmgate.tool_table import TOOLS

BIN = Path(sys.executable).parent
NAMES = ("swarmgate", *(t.name for t in TOOLS if t.script))


def _venv(root: Path, names=NAMES) -> Path:
    """A virtual environment's layout: pyvenv.cfg, and bin/ with the scripts and python, pip."""
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for name in (*names, "python", "pip"):
        p = root / "bin" / name
        p.write_text(f"#!/bin/sh\necho {name} \"$@\"\n")
        p.chmod(0o755)
    return root / "bin"


def test_the_names_are_the_console_scripts_of_pyproject():
    scripts = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(tools_dir.script_names()) == set(scripts)


def test_ensure_links_exactly_the_console_scripts_into_the_venv(tmp_path):
    scripts = _venv(tmp_path / "venv")
    d = tools_dir.ensure(str(scripts))
    assert d == str(tmp_path / "venv" / "swarmgate-tools")
    assert sorted(os.listdir(d)) == sorted(NAMES)            # not python, not pip
    for n in NAMES:
        assert os.readlink(os.path.join(d, n)) == str(scripts / n)
    out = subprocess.run([os.path.join(d, "remind"), "list"], capture_output=True, text=True)
    assert out.stdout == "remind list\n"
    assert tools_dir.ensure(str(scripts)) == d                # again: the same, nothing added
    assert sorted(os.listdir(d)) == sorted(NAMES)


def test_ensure_drops_a_script_the_install_no_longer_has_and_repoints_a_moved_one(tmp_path):
    scripts = _venv(tmp_path / "venv")
    d = Path(tools_dir.ensure(str(scripts)))
    (scripts / "core-usage").unlink()
    os.unlink(d / "remind")
    os.symlink("/nonexistent/remind", d / "remind")
    (d / "old-tool").symlink_to(scripts / "swarmgate")        # a script an older release had
    tools_dir.ensure(str(scripts))
    assert not os.path.lexists(d / "core-usage") and not os.path.lexists(d / "old-tool")
    assert os.readlink(d / "remind") == str(scripts / "remind")


def test_outside_a_venv_the_directory_is_in_the_state_dir(tmp_path):
    scripts = tmp_path / "usr" / "bin"
    scripts.mkdir(parents=True)
    for n in NAMES:
        (scripts / n).write_text("#!/bin/sh\n")
        (scripts / n).chmod(0o755)
    d = tools_dir.ensure(str(scripts))
    assert d.startswith(str(tmp_path / "state" / "tools") + os.sep), d
    assert sorted(os.listdir(d)) == sorted(NAMES)


def test_no_swarmgate_script_is_a_one_line_error(tmp_path):
    (tmp_path / "empty").mkdir()
    try:
        tools_dir.ensure(str(tmp_path / "empty"))
    except OSError as e:
        assert "no `swarmgate` console script" in str(e)
    else:
        raise AssertionError("ensure made a directory without scripts")


def test_the_env_file_line_goes_on_top_so_the_shims_come_first(tmp_path):
    env_file = tmp_path / "env.sh"
    shims, tools = tmp_path / "shims", tmp_path / "tools"
    for d in (shims, tools):
        d.mkdir()
    env_file.write_text(f"export PATH={shims}:\"$PATH\"\n")     # X01's line, written first here
    assert tools_dir.add_to_env_file(str(env_file), str(tools))
    assert tools_dir.add_to_env_file(str(env_file), str(tools))  # once only
    assert env_file.read_text().count(str(tools)) == 1
    got = subprocess.run(["bash", "-c", f". {env_file}; echo \"$PATH\""], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout.strip()
    assert got == f"{shims}:{tools}:/usr/bin:/bin"
    assert sorted(os.listdir(tmp_path)) == ["env.sh", "home", "shims", "tools"]   # no temporary file left


def test_an_env_file_behind_a_symlink_is_not_written(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("x\n")
    (tmp_path / "env.sh").symlink_to(target)
    assert not tools_dir.add_to_env_file(str(tmp_path / "env.sh"), str(tmp_path))
    assert target.read_text() == "x\n"


def test_session_start_of_a_real_install_puts_the_tools_after_the_shims(repo, tmp_path):
    assert install.main([str(repo)]) == 0
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    (group,) = settings["hooks"]["SessionStart"]
    h = group["hooks"][0]
    env_file = tmp_path / "session-env" / "sessionstart-hook-0.sh"
    env_file.parent.mkdir()
    payload = {"session_id": "tools-dir", "transcript_path": "", "cwd": str(repo),
               "hook_event_name": "SessionStart", "source": "startup"}
    env = {**os.environ, "CLAUDE_ENV_FILE": str(env_file), "CLAUDE_PROJECT_DIR": str(repo)}
    proc = subprocess.run([h["command"], *h["args"]], input=json.dumps(payload), capture_output=True, text=True,
                          cwd=repo, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "NOT on this session's PATH" not in proc.stdout, proc.stdout
    user_path = "/usr/bin:/bin"     # the client's PATH: no venv in it
    script = (f". {env_file}; echo \"$PATH\"; command -v run-with-memory-cap; command -v python3 || true; "
              "remind --help >/dev/null && echo remind-ran")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={"PATH": user_path,
                         "HOME": os.environ["HOME"]}).stdout.splitlines()
    entries = out[0].split(":")
    tools = str(BIN.parent / "swarmgate-tools")
    assert entries[1] == tools and entries[0].endswith("/shims") and entries[2:] == user_path.split(":"), out
    assert out[1] == os.path.join(tools, "run-with-memory-cap"), out
    assert not (len(out) > 2 and out[2].startswith(tools)), out    # the venv's python is not on PATH
    assert out[-1] == "remind-ran", out


def test_the_shell_gets_links_in_local_bin_when_it_is_on_path(tmp_path):
    d = tools_dir.ensure(str(_venv(tmp_path / "venv")))
    home = tmp_path / "home"
    path = f"{home}/.local/bin:/usr/bin:/bin"
    lines, cmd = tools_dir.for_the_shell(d, path=path, home=str(home))
    assert cmd == "swarmgate" and "linked" in lines[0], lines
    assert sorted(os.listdir(home / ".local" / "bin")) == sorted(NAMES)
    out = subprocess.run(["bash", "-c", "swarmgate doctor x"], capture_output=True, text=True, env={"PATH": path})
    assert out.stdout == "swarmgate doctor x\n"
    assert tools_dir.for_the_shell(d, path=path, home=str(home)) == ([], "swarmgate")   # already there


def test_the_shell_gets_the_line_to_add_when_local_bin_is_not_on_path_or_not_ours(tmp_path):
    d = tools_dir.ensure(str(_venv(tmp_path / "venv")))
    home = tmp_path / "home"
    lines, cmd = tools_dir.for_the_shell(d, path="/usr/bin:/bin", home=str(home))
    assert lines[-1].strip() == f"export PATH={d}:\"$PATH\"" and cmd == os.path.join(d, "swarmgate"), lines
    assert not (home / ".local" / "bin").exists()
    # another install's swarmgate in ~/.local/bin: left alone, the line instead
    other = _venv(tmp_path / "other")
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "swarmgate").symlink_to(other / "swarmgate")
    lines, cmd = tools_dir.for_the_shell(d, path=f"/usr/bin:{home}/.local/bin", home=str(home))
    assert "another install" in lines[0] and cmd == os.path.join(d, "swarmgate"), lines
    assert os.listdir(home / ".local" / "bin") == ["swarmgate"]
    # pasted, the printed line gives the shell the tools
    out = subprocess.run(["bash", "-c", f"{lines[-1].strip()}; command -v gate-staged"], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin"}).stdout.strip()
    assert out == os.path.join(d, "gate-staged")


def test_install_prints_a_last_line_that_works_as_printed(repo, tmp_path):
    env = {"PATH": "/usr/bin:/bin", **{k: os.environ[k] for k in ("HOME", "SWARMGATE_STATE_DIR",
                                                                  "SWARMGATE_HOSTS_CONFIG")}}
    proc = subprocess.run([str(BIN / "swarmgate"), "install", str(repo)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.splitlines()[-1].strip()
    assert last.startswith("check it with: ") and last.endswith(f" doctor {repo}"), last
    ran = subprocess.run(["bash", "-c", last.removeprefix("check it with: ")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert ran.returncode != 127 and ran.stdout.startswith(f"swarmgate doctor: {repo}"), (ran.returncode, ran.stderr)
    assert "programs resolve on the agents' PATH" in ran.stdout, ran.stdout


def test_doctor_in_a_live_session_names_a_program_that_does_not_resolve(repo):
    assert install.main([str(repo)]) == 0
    d = tools_dir.ensure(str(BIN))
    live = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "s"}
    ok = doctor.check_agents_path(str(repo), {**live, "PATH": f"/shims:{d}:/usr/bin:/bin"})
    assert ok.status == "ok", ok.line()
    bad = doctor.check_agents_path(str(repo), {**live, "PATH": "/usr/bin:/bin"})
    assert bad.status == "FAIL" and "`run-with-memory-cap`" in bad.what and "exit 127" in bad.what, bad.line()
    assert "\n" not in bad.line()
    # outside a session: the PATH a session start gives (the tools' directory, then this PATH)
    assert doctor.check_agents_path(str(repo), {"PATH": "/usr/bin:/bin"}).status == "ok"
