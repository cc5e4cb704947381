"""The plugin folder (plugin/, .claude-plugin/marketplace.json) is what swarmgate/plugin_files.py
generates, and a plugin-started hook defers exactly when the project's settings wire swarmgate in a
file the client loaded (older than the client process)."""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate import hook_wiring, install, plugin_files

ROOT = Path(__file__).resolve().parents[2]


def test_the_plugin_folder_is_up_to_date():
    assert plugin_files.differences(str(ROOT)) == []


def test_a_stale_plugin_file_is_found(tmp_path):
    plugin_files.write(str(tmp_path))
    assert plugin_files.differences(str(tmp_path)) == []
    (tmp_path / "plugin" / "agents" / "gone.md").write_text("old\n")
    hooks = tmp_path / "plugin" / "hooks" / "hooks.json"
    hooks.write_text(hooks.read_text().replace('"onFailure": "block"', '"onFailure": "continue"'))
    assert sorted(plugin_files.differences(str(tmp_path))) == [
        "plugin/agents/gone.md: not generated (left from an older template?)", "plugin/hooks/hooks.json: differs"]


def test_the_plugin_wires_the_groups_install_wires():
    groups = plugin_files.hooks_json()["hooks"]
    got = {(ev, g.get("matcher"), "onFailure" in g["hooks"][0]) for ev, gs in groups.items() for g in gs
           if not g["hooks"][0].get("asyncRewake")}
    assert got == {(ev, m, install.refusing_group(ev, m)) for ev, m, _ in install.HOOK_GROUPS}
    # and the wake waiter, in the background, as install writes it
    (wake,) = [g["hooks"][0] for gs in groups.values() for g in gs if g["hooks"][0].get("asyncRewake")]
    event, arg, timeout = install.WAKE_GROUP
    assert wake["args"] == [arg] and wake["timeout"] == timeout and "onFailure" not in wake
    assert wake in [g["hooks"][0] for g in groups[event]]


def test_the_hook_defers_only_to_settings_that_wire_this_event_and_tool(tmp_path):
    assert install.main([str(tmp_path)]) == 0
    assert hook_wiring.settings_wire(str(tmp_path), "PreToolUse", "Bash") == ".claude/settings.json"
    assert hook_wiring.settings_wire(str(tmp_path), "Stop", None) == ".claude/settings.json"
    assert hook_wiring.settings_wire(str(tmp_path), "PreToolUse", "WebFetch") is None   # no group of ours
    # a regular-expression matcher (install's `mcp__.*` group) covers the MCP tools it matches
    assert hook_wiring.settings_wire(str(tmp_path), "PreToolUse", "mcp__lab__write") == ".claude/settings.json"
    settings = tmp_path / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["PreToolUse"] = [g for g in data["hooks"]["PreToolUse"] if g.get("matcher") != "Bash|Monitor"]
    settings.write_text(json.dumps(data))
    assert hook_wiring.settings_wire(str(tmp_path), "PreToolUse", "Bash") is None
    # a hook of someone else's that merely mentions swarmgate is not a wiring
    data["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [{"type": "command", "command": "echo swarmgate"}]})
    settings.write_text(json.dumps(data))
    assert hook_wiring.settings_wire(str(tmp_path), "PreToolUse", "Bash") is None
    settings.write_text("{not json")
    assert hook_wiring.settings_wire(str(tmp_path), "PreToolUse", "Bash") is None


@pytest.mark.parametrize("matcher, tool, covered", [
    ("Bash|Monitor", "Bash", True), ("Bash|Monitor", "BashOutput", False), ("Write, Edit", "Edit", True),
    ("mcp__.*", "mcp__lab__run", True), ("mcp__.*", "Bash", False), ("^Note", "NotebookEdit", True),
    ("(", "Bash", False), ("*", "Anything", True), ("", "Anything", True),
])
def test_a_matcher_covers_a_tool_as_claude_code_reads_it(matcher, tool, covered):
    assert hook_wiring._covers({"matcher": matcher}, tool) is covered


def test_a_plugin_started_hook_answers_nothing_when_settings_wire_swarmgate(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    payload = json.dumps({"session_id": "p", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "agent_id": "a1", "agent_type": "implementer",
                          "tool_input": {"command": "cargo test --workspace"}})
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    start = str(ROOT / "swarmgate" / "hook_start.py")

    def plugin_hook() -> dict:
        p = subprocess.run([sys.executable, "-I", "-S", start, "--plugin", "PreToolUse"], input=payload,
                           capture_output=True, text=True, env=env, timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    assert install.main([str(repo), "--dry-run"]) == 0
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_bytes((ROOT / "rules" / "swarmgate.toml").read_bytes())
    refused = plugin_hook()                        # no settings wiring: the plugin judges
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert install.main([str(repo)]) == 0
    # wired after the client (here: this process, the hook's parent) started: the client did not load
    # them, so the plugin still judges
    assert plugin_hook()["hookSpecificOutput"]["permissionDecision"] == "deny"
    settings = repo / ".claude" / "settings.json"
    before = hook_wiring.process_start(os.getpid()) - 1
    os.utime(settings, (before, before))           # wired before the client started: loaded by it
    assert plugin_hook() == {}                     # the settings' hook judges: the plugin's defers
    log = (repo / ".swarmgate" / "log" / "decisions.jsonl").read_text().splitlines()
    assert len(log) == 2                           # only the two undeferred calls were logged


def test_settings_count_as_loaded_only_when_older_than_the_client(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}")
    started = hook_wiring.process_start(os.getppid())
    assert started is not None and abs(started - _ps_start(os.getppid())) < 2
    os.utime(settings, (started - 1, started - 1))
    assert hook_wiring.loaded_by_client(str(tmp_path), ".claude/settings.json")
    os.utime(settings, (started + 1, started + 1))
    assert not hook_wiring.loaded_by_client(str(tmp_path), ".claude/settings.json")
    assert not hook_wiring.loaded_by_client(str(tmp_path), ".claude/settings.local.json")   # no such file


def _ps_start(pid: int) -> float:
    """The start of ``pid`` as ps(1) tells it (seconds since the epoch), to check the tick arithmetic."""
    out = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True,
                         env={**os.environ, "LC_ALL": "C", "TZ": "UTC"}, check=True).stdout.strip()
    return datetime.datetime.strptime(out, "%a %b %d %H:%M:%S %Y").replace(tzinfo=datetime.UTC).timestamp()


# --- bin/swarmgate-hook: the interpreter of the install on PATH, from each shebang an installer writes ---

RECORDER = '#!/bin/sh\nprintf "%s\\n" "$0" "$@" > "$RECORD"\necho "{}"\n'   # a python that says how it was run


def _prefix(root: Path, with_swarmgate: bool = True) -> Path:
    """A prefix whose bin/python and bin/python3 record their argv (and, with ``with_swarmgate``, whose
    site-packages holds swarmgate/hook_start.py), so a test sees what the launcher executes."""
    for name in ("python", "python3"):
        p = root / "bin" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(RECORDER)
        p.chmod(0o755)
    if with_swarmgate:
        start = root / "lib" / "python3.11" / "site-packages" / "swarmgate" / "hook_start.py"
        start.parent.mkdir(parents=True)
        start.write_text("")
    return root


def _launch(tmp_path: Path, console_script: str, path_dirs: list[Path]) -> list[str]:
    """Run plugin/bin/swarmgate-hook with a `swarmgate` console script of this text first on PATH;
    the argv the interpreter it chose was started with."""
    user_bin = tmp_path / "user-bin"
    user_bin.mkdir(exist_ok=True)
    sg = user_bin / "swarmgate"
    sg.write_text(console_script + "import sys\n")
    sg.chmod(0o755)
    record = tmp_path / "argv"
    record.unlink(missing_ok=True)
    p = subprocess.run([str(ROOT / "plugin" / "bin" / "swarmgate-hook"), "PreToolUse"], input="{}",
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": os.pathsep.join(map(str, [user_bin, *path_dirs, "/usr/bin", "/bin"])),
                            "HOME": str(tmp_path), "RECORD": str(record)})
    assert p.returncode == 0 and p.stdout == "{}\n", (p.returncode, p.stdout, p.stderr)
    return record.read_text().splitlines()


@pytest.mark.parametrize("form", ["plain", "pipx -E", "env", "env -S", "sh exec"])
def test_the_plugin_hook_runs_the_installs_interpreter_whatever_its_shebang(tmp_path, form):
    """pip and uv write `#!PYTHON`, pipx 1.18 `#!PYTHON -E`, a path over 127 bytes (or with a space)
    gets pip's and uv's /bin/sh form; a script can also find python through env. Each starts the
    install's interpreter with -I -S on its hook_start.py (before: pipx's whole line was exec'd as one
    path, exit 127, and `onFailure: block` refused every tool call)."""
    venv = _prefix(tmp_path / "tools with space" / "swarmgate" if form == "sh exec" else tmp_path / "venv")
    py = venv / "bin" / ("python3" if form.startswith("env") else "python")
    shebang = {"plain": f"#!{py}\n", "pipx -E": f"#!{py} -E\n", "env": "#!/usr/bin/env python3\n",
               "env -S": "#!/usr/bin/env -S python3 -E\n",
               "sh exec": f"#!/bin/sh\n'''exec' '{py}' \"$0\" \"$@\"\n' '''\n"}[form]
    argv = _launch(tmp_path, shebang, [venv / "bin"])
    start = str(py.parent / ".." / "lib" / "python3.11" / "site-packages" / "swarmgate" / "hook_start.py")
    assert argv == [str(py), "-I", "-S", start, "--plugin", "PreToolUse"]


def test_the_plugin_hook_runs_the_console_script_when_its_interpreter_holds_no_swarmgate(tmp_path):
    """A system python (`#!/usr/bin/env python3` finding one whose prefix has no swarmgate, as with
    `pip install --user`): the console script itself runs, as its shebang says."""
    bare = _prefix(tmp_path / "system", with_swarmgate=False)
    argv = _launch(tmp_path, "#!/usr/bin/env python3\n", [bare / "bin"])
    assert argv == [str(bare / "bin" / "python3"), str(tmp_path / "user-bin" / "swarmgate"), "hook", "--plugin",
                    "PreToolUse"]


def test_the_plugins_texts_name_what_the_plugin_brings():
    """The templates name what `swarmgate install` puts in .claude/; the plugin's copies name the
    plugin's `swarmgate:TYPE` agents and its own agent-common.md and rules (a plugin-only repository has
    no .claude/). Each rewording still finds its text in the templates (else it is stale: fix it)."""
    files = plugin_files.expected()
    for prefix, what, _instead in plugin_files.PLUGIN_WORDING:
        sources = [src for src, dest in install.templates() if dest.removeprefix(".claude/").startswith(prefix)]
        assert any(what in Path(src).read_text() for src in sources), (prefix, what)
    main = files["plugin/main-agent.md"].decode()
    assert "`swarmgate:clerk`" in main and "`clerk`" not in main
    for rel, data in files.items():
        if rel.startswith("plugin/agents/"):
            assert b".claude/agent-common.md" not in data and b".claude/rules/" not in data, rel
