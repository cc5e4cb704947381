"""`swarmgate install PATH --client codex|gemini`: merge, idempotence, backups, exact uninstall, and
the fallback that refuses when the hook itself cannot run (neither client has onFailure)."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from swarmgate import client_install as CI
from swarmgate import install as I
from swarmgate.install_plan import BACKUP_MARK

GEMINI_USER = """{
    "theme": "GitHub",
    "hooks": {
        "enabled": true,
        "disabled": ["someone-elses"],
        "BeforeTool": [
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "./my-check.sh", "timeout": 5000}]}
        ]
    },
    "tools": {"sandbox": false}
}
"""
CODEX_USER = """{
  "description": "team hooks",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 .codex/mine.py"}]}]
  }
}
"""


def install(repo, *args) -> int:
    return I.main([str(repo), *args])


def settings(repo, client) -> dict:
    return json.loads((repo / CI.SETTINGS[client]).read_text())


def ours(repo, client) -> dict:
    is_ours = CI.our_group_test(client)
    return {ev: [g for g in groups if is_ours(g)] for ev, groups in settings(repo, client)["hooks"].items()
            if isinstance(groups, list)}


@pytest.mark.parametrize("client, user", [("codex", CODEX_USER), ("gemini", GEMINI_USER)])
def test_merge_is_idempotent_and_uninstall_is_byte_exact(repo, client, user):
    path = repo / CI.SETTINGS[client]
    path.parent.mkdir()
    path.write_text(user)
    assert install(repo, "--client", client) == 0
    data = settings(repo, client)
    for key, value in json.loads(user).items():  # every key of the user's stays
        if key != "hooks":
            assert data[key] == value
    for ev, groups in json.loads(user)["hooks"].items():
        assert data["hooks"][ev][:len(groups) if isinstance(groups, list) else None] == groups \
            if isinstance(groups, list) else data["hooks"][ev] == groups
    assert sum(len(g) for g in ours(repo, client).values()) == len(CI.HOOK_GROUPS[client])
    first = path.read_bytes()
    backups = sorted(p.name for p in path.parent.iterdir() if BACKUP_MARK in p.name)
    assert len(backups) == 1 and (path.parent / backups[0]).read_text() == user
    assert install(repo, "--client", client) == 0  # a second run changes nothing, makes no backup
    assert path.read_bytes() == first
    assert len([p for p in path.parent.iterdir() if BACKUP_MARK in p.name]) == 1
    assert install(repo, "--uninstall", "--client", client) == 0
    assert path.read_text() == user


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_a_fresh_install_uninstalls_to_nothing(repo, client):
    before = sorted(os.listdir(repo))
    assert install(repo, "--client", client) == 0
    assert (repo / CI.SETTINGS[client]).exists() and not (repo / ".claude" / "settings.json").exists()
    assert install(repo, "--uninstall") == 0
    assert sorted(os.listdir(repo)) == before


def test_several_clients_and_a_partial_uninstall(repo, capsys):
    assert install(repo, "--client", "claude,codex", "--client", "gemini") == 0
    assert I.wired_clients(str(repo)) == ["claude", "codex", "gemini"]
    out = capsys.readouterr().out
    assert "once, by you: Codex loads .codex/hooks.json only for a trusted project" in out
    assert "once, by you: Gemini runs the hooks of .gemini/settings.json only in a trusted workspace" in out
    assert install(repo, "--uninstall", "--client", "gemini") == 0
    assert not (repo / ".gemini").exists()
    assert (repo / ".claude" / "swarmgate.toml").exists()  # claude and codex still need the config
    assert I.wired_clients(str(repo)) == ["claude", "codex"]
    assert install(repo, "--uninstall") == 0
    assert not (repo / ".claude").exists() and not (repo / ".codex").exists()


def test_gemini_timeouts_are_milliseconds_codex_seconds(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text("[hooks]\ntimeout = 20\nreport_timeout = 40\n")
    assert install(repo, "--client", "codex,gemini") == 0
    codex, gemini = ours(repo, "codex"), ours(repo, "gemini")
    assert codex["PreToolUse"][0]["hooks"][0]["timeout"] == 40 and codex["Stop"][0]["hooks"][0]["timeout"] == 20
    assert gemini["BeforeTool"][0]["hooks"][0]["timeout"] == 40000
    assert gemini["AfterAgent"][0]["hooks"][0]["timeout"] == 20000


def test_uninstall_keeps_later_user_changes(repo):
    assert install(repo, "--client", "gemini") == 0
    data = settings(repo, "gemini")
    data["ui"] = {"theme": "mine"}
    (repo / ".gemini" / "settings.json").write_text(json.dumps(data))
    assert install(repo, "--uninstall", "--client", "gemini") == 0
    assert settings(repo, "gemini") == {"ui": {"theme": "mine"}}


@pytest.mark.parametrize("content, expect", [("{not json", "not valid JSON"),
                                             ('{"hooks": {"BeforeTool": {}}}', "`hooks.BeforeTool` is a dict")])
def test_malformed_settings_write_nothing(repo, capsys, content, expect):
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text(content)
    assert install(repo, "--client", "gemini") == 1
    assert expect in capsys.readouterr().err
    assert not (repo / ".claude").exists()


def test_unknown_client_is_a_usage_error(repo, capsys):
    assert install(repo, "--client", "copilot") == 251
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--client 'copilot': choose from claude, codex, gemini" in err
    assert not (repo / ".claude").exists()


@pytest.mark.parametrize("client, event", [("codex", "PreToolUse"), ("gemini", "BeforeTool")])
def test_the_fallback_refuses_when_the_hook_cannot_run(tmp_path, client, event):
    """What the client runs when the entry point is gone (a deleted virtualenv): exit 2, the reason on
    stderr, nothing on stdout - a refusal in both clients without any JSON."""
    cmd = CI.hook_command(str(tmp_path / "gone" / "swarmgate"), client, event, refuses=True)
    proc = subprocess.run(["/bin/sh", "-c", cmd], input="{}", capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "the hook failed (exit 127)" in proc.stderr and "fail closed" in proc.stderr


@pytest.mark.parametrize("client, event, code", [("gemini", "AfterAgent", 1), ("gemini", "AfterTool", 1),
                                                 ("codex", "Stop", 127)])
def test_other_hooks_that_cannot_run_never_refuse(tmp_path, client, event, code):
    """Gemini takes every exit code but 0 and 1 as a refusal, and a refused AfterAgent makes the agent
    retry: without its entry point the hook exits 1 (a warning there) instead of 127."""
    cmd = CI.hook_command(str(tmp_path / "gone" / "swarmgate"), client, event, refuses=False)
    proc = subprocess.run(["/bin/sh", "-c", cmd], input="{}", capture_output=True, text=True, timeout=30)
    assert proc.returncode == code and proc.stdout == ""


@pytest.mark.parametrize("client, event", [("codex", "PreToolUse"), ("gemini", "BeforeTool")])
def test_the_installed_command_really_refuses(repo, client, event):
    assert install(repo, "--client", client) == 0
    cmd = ours(repo, client)[event][0]["hooks"][0]["command"]
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": event,
                          "tool_name": "Bash" if client == "codex" else "run_shell_command",
                          "tool_input": {"command": "echo x > .claude/settings.json"}})
    proc = subprocess.run(["/bin/sh", "-c", cmd], input=payload, capture_output=True, text=True, cwd=repo,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    ans = json.loads(proc.stdout)
    reason = ans["reason"] if client == "gemini" else ans["hookSpecificOutput"]["permissionDecisionReason"]
    assert "[G01]" in reason


def test_path_with_spaces_is_quoted_and_still_recognised(tmp_path):
    cmd = CI.hook_command("/opt/my tools/.venv/bin/swarmgate", "codex", "PreToolUse", refuses=True)
    assert cmd.startswith("'/opt/my tools/.venv/bin/swarmgate' hook --client codex PreToolUse || {")
    group = {"hooks": [{"type": "command", "command": cmd, "timeout": 30}]}
    assert CI.our_group_test("codex")(group) and not CI.our_group_test("gemini")(group)
    group["hooks"][0]["statusMessage"] = "mine now"  # a handler the user changed is theirs
    assert not CI.our_group_test("codex")(group)
