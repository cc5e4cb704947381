"""`swarmgate install PATH`: merge, idempotence, backups, templates, exact uninstall."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from swarmgate import install as I
from swarmgate.install_plan import BACKUP_MARK

USER_SETTINGS = """{
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/my-check.sh"}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
    }
}
"""


def settings(repo) -> dict:
    return json.loads((repo / ".claude" / "settings.json").read_text())


def backups(repo) -> list:
    return sorted(p.name for p in (repo / ".claude").iterdir() if BACKUP_MARK in p.name)


def our(groups) -> list:
    return [g for g in groups if I.is_our_group(g)]


def snapshot(root) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def test_fresh_repository(repo, capsys):
    assert I.main([str(repo)]) == 0
    s = settings(repo)
    entry = I.entry_point()
    assert os.path.isabs(entry) and os.access(entry, os.X_OK)
    command, lead = I.hook_program(entry)
    # this install runs in a virtual environment: its interpreter, -I -S, on swarmgate/hook_start.py
    assert command == sys.executable and lead[:2] == ["-I", "-S"] and lead[2].endswith("/swarmgate/hook_start.py")
    wanted = {(e, m) for e, m, _ in I.HOOK_GROUPS}
    got = set()
    for event, groups in s["hooks"].items():
        for g in groups:
            assert I.is_our_group(g)
            got.add((event, g.get("matcher")))
            (h,) = g["hooks"]
            if h.get("asyncRewake"):   # the wake waiter: a second Stop group, in the background
                assert (event, h["args"][-1]) == ("Stop", "Wake") and h["timeout"] > 6 * 3600, h
                assert "onFailure" not in h
                continue
            # the exec form (no shell); every group where a refusing guard runs blocks when the hook fails
            refusing = event in ("PreToolUse", "PreSkillShellCommand", "Stop", "SubagentStop")
            assert h == {"type": "command", "command": command, "args": [*lead, event], "timeout": 30,
                         **({"onFailure": "block"} if refusing else {})}, (event, g.get("matcher"))
    assert got == wanted
    assert s["permissions"] == {"deny": list(I.PERMISSION_DENY)}
    for m in ("Agent|Task", "Bash|Monitor", "Write|Edit|MultiEdit|NotebookEdit", "SendMessage",
              "CronCreate|ScheduleWakeup", "AskUserQuestion|ExitPlanMode", "PowerShell", "mcp__.*"):
        assert ("PreToolUse", m) in got
    assert ("PreSkillShellCommand", None) in got and ("Notification", None) in got
    assert (repo / ".claude" / "swarmgate.toml").read_bytes() == open(
        os.path.join(I.templates_dir(), "swarmgate.toml"), "rb").read()
    assert (repo / ".swarmgate" / ".gitignore").read_text().endswith("*\n")
    manifest = json.loads((repo / I.MANIFEST).read_text())
    assert ".claude/swarmgate.toml" in manifest["files"]
    assert backups(repo) == []  # nothing to back up
    out = capsys.readouterr().out
    assert "wired" in out and "wrote      .claude/swarmgate.toml" in out


def test_every_shipped_template_is_copied(repo):
    assert I.main([str(repo)]) == 0
    for src, rel in I.templates():
        assert (repo / rel).read_bytes() == open(src, "rb").read(), rel


def test_merge_keeps_the_users_settings_and_groups(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(USER_SETTINGS)
    assert I.main([str(repo)]) == 0
    s = settings(repo)
    before = json.loads(USER_SETTINGS)
    assert s["env"] == before["env"]
    # the user's rules first, untouched; ours appended
    assert s["permissions"] == {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)", *I.PERMISSION_DENY]}
    # the user's Notification group first, untouched; ours (N01) after it
    assert s["hooks"]["Notification"][0] == before["hooks"]["Notification"][0]
    assert len(s["hooks"]["Notification"]) == 2 and len(our(s["hooks"]["Notification"])) == 1
    pre = s["hooks"]["PreToolUse"]
    assert pre[0] == before["hooks"]["PreToolUse"][0]  # the user's group first, untouched
    n = sum(1 for e, _, _ in I.HOOK_GROUPS if e == "PreToolUse")
    assert len(our(pre)) == n and len(pre) == n + 1
    (b,) = backups(repo)
    assert (repo / ".claude" / b).read_text() == USER_SETTINGS


def test_second_run_is_byte_identical_and_makes_no_backup(repo, capsys):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(USER_SETTINGS)
    assert I.main([str(repo)]) == 0
    first = snapshot(repo)
    capsys.readouterr()
    assert I.main([str(repo)]) == 0
    assert snapshot(repo) == first
    assert len(backups(repo)) == 1
    assert "unchanged" in capsys.readouterr().out


def test_timeouts_come_from_the_config(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text("[hooks]\ntimeout = 7\nreport_timeout = 45\n")
    assert I.main([str(repo)]) == 0
    s = settings(repo)
    bash = [g for g in s["hooks"]["PreToolUse"] if g["matcher"] == "Bash|Monitor"][0]
    assert bash["hooks"][0]["timeout"] == 45
    assert s["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 7
    # the user's config was theirs: not overwritten, reported as skipped
    assert (repo / ".claude" / "swarmgate.toml").read_text().startswith("[hooks]")
    # a later change of the config is picked up by the next install, with a backup
    (repo / ".claude" / "swarmgate.toml").write_text("[hooks]\ntimeout = 9\nreport_timeout = 45\n")
    assert I.main([str(repo)]) == 0
    assert settings(repo)["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 9
    assert len(settings(repo)["hooks"]["Stop"]) == 2  # replaced, not added twice (the judge and the wake waiter)
    assert len(backups(repo)) == 1


def test_uninstall_restores_the_users_file_byte_for_byte(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(USER_SETTINGS)
    (repo / "keep.txt").write_text("user file")
    before = snapshot(repo)
    assert I.main([str(repo)]) == 0
    assert I.main([str(repo), "--uninstall"]) == 0
    after = snapshot(repo)
    # the backups stay (they are the user's old files); everything else is as before
    assert {k: v for k, v in after.items() if BACKUP_MARK not in k} == before


def test_uninstall_of_a_fresh_install_leaves_nothing(repo):
    before = snapshot(repo)
    assert I.main([str(repo)]) == 0
    assert I.main([str(repo), "--uninstall"]) == 0
    assert snapshot(repo) == before
    assert not (repo / ".claude").exists()


def test_uninstall_keeps_later_user_changes(repo):
    assert I.main([str(repo)]) == 0
    s = settings(repo)
    s["permissions"] = {"allow": ["Bash(make:*)"]}
    s["hooks"]["PreToolUse"].append({"matcher": "Read", "hooks": [{"type": "command", "command": "mine"}]})
    (repo / ".claude" / "settings.json").write_text(json.dumps(s, indent=2))
    (repo / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = 8\n")  # the user edits the config
    assert I.main([str(repo), "--uninstall"]) == 0
    s = settings(repo)
    assert s["permissions"] == {"allow": ["Bash(make:*)"]}
    assert s["hooks"] == {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "mine"}]}]}
    assert (repo / ".claude" / "swarmgate.toml").read_text() == "[threads]\nheavy_default = 8\n"
    assert not (repo / I.MANIFEST).exists()


def test_user_changed_templates_are_not_overwritten(repo, capsys):
    assert I.main([str(repo)]) == 0
    cfg = repo / ".claude" / "swarmgate.toml"
    cfg.write_text("# mine\n")
    capsys.readouterr()
    assert I.main([str(repo)]) == 0
    assert cfg.read_text() == "# mine\n"
    assert "skipped    .claude/swarmgate.toml (changed by you" in capsys.readouterr().out


def test_unchanged_template_is_updated_when_the_shipped_one_changes(repo, tmp_path, monkeypatch):
    src = tmp_path / "rules"
    (src / "rules").mkdir(parents=True)
    (src / "rules" / "style.md").write_text("v1\n")
    (src / "swarmgate.toml").write_text("")
    monkeypatch.setattr(I, "templates_dir", lambda: str(src))
    assert I.main([str(repo)]) == 0
    assert (repo / ".claude" / "rules" / "style.md").read_text() == "v1\n"
    (src / "rules" / "style.md").write_text("v2\n")
    assert I.main([str(repo)]) == 0
    assert (repo / ".claude" / "rules" / "style.md").read_text() == "v2\n"
    assert I.main([str(repo), "--uninstall"]) == 0
    assert not (repo / ".claude" / "rules").exists()


@pytest.mark.parametrize("content, expect", [
    ("{broken", "not valid JSON"),
    ("[]", "expected a JSON object"),
    ('{"hooks": []}', "`hooks` is a list"),
    ('{"hooks": {"PreToolUse": {}}}', "`hooks.PreToolUse` is a dict"),
])
def test_malformed_settings_writes_nothing(repo, capsys, content, expect):
    (repo / ".claude").mkdir()
    path = repo / ".claude" / "settings.json"
    path.write_text(content)
    before = snapshot(repo)
    assert I.main([str(repo)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and expect in err
    assert snapshot(repo) == before


def test_invalid_config_writes_nothing(repo, capsys):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text("[hooks]\ntimeout = 'long'\n")
    before = snapshot(repo)
    assert I.main([str(repo)]) == 1
    assert "timeout" in capsys.readouterr().err
    assert snapshot(repo) == before


def test_dry_run_writes_nothing(repo, capsys):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(USER_SETTINGS)
    before = snapshot(repo)
    assert I.main([str(repo), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dry run" in out and "wired" in out
    assert snapshot(repo) == before


def test_not_a_directory(tmp_path, capsys):
    assert I.main([str(tmp_path / "nope")]) == 1
    assert "not a directory" in capsys.readouterr().err


def test_git_hook_option(repo, capsys):
    rc = I.main([str(repo), "--git-hook"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert (repo / ".git" / "hooks" / "pre-commit").exists()
    assert I.main([str(repo), "--uninstall", "--git-hook"]) == 0
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_the_installed_hook_command_really_refuses(repo, tmp_path):
    """Run the command exactly as written into settings.json, in the exec form (no shell), as Claude Code does."""
    assert I.main([str(repo)]) == 0
    s = settings(repo)
    h = [g for g in s["hooks"]["PreToolUse"] if g["matcher"].startswith("Write")][0]["hooks"][0]
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse",
                          "tool_name": "Edit", "tool_input": {"file_path": ".claude/settings.json"}})
    proc = subprocess.run([h["command"], *h["args"]], input=payload, capture_output=True, text=True, cwd=repo,
                          env={"PATH": "/usr/bin:/bin", "SWARMGATE_STATE_DIR": str(tmp_path / "st")}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    ans = json.loads(proc.stdout)
    assert ans["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "[G01]" in ans["hookSpecificOutput"]["permissionDecisionReason"]


def test_our_groups_are_recognised_in_both_forms_and_nothing_else_is(tmp_path):
    entry = "/a b/.venv/bin/swarmgate"  # the exec form needs no quoting: no shell reads it
    h = I.hook_entry(entry, "Stop", 3, refusing=True)
    assert h == {"type": "command", "command": entry, "args": ["hook", "Stop"], "timeout": 3, "onFailure": "block"}
    assert I.is_our_group({"hooks": [h]})
    # the shell form older installs wrote is still ours (replaced in place, removed by uninstall)
    cmd = I.hook_command(entry, "Stop")
    assert cmd == "'/a b/.venv/bin/swarmgate' hook Stop"
    assert I.is_our_group({"hooks": [{"type": "command", "command": cmd, "timeout": 3}]})
    assert not I.is_our_group({"hooks": [{"type": "command", "command": "swarmgate-ish hook Stop; rm -rf /"}]})
    assert not I.is_our_group({"matcher": "Bash", "hooks": [{"type": "command", "command": cmd},
                                                           {"type": "command", "command": "mine"}]})
    for foreign in ({**h, "args": ["hook", "Stop", "--extra"]}, {**h, "command": "swarmgate"},
                    {**h, "command": "/x/not-swarmgate"}, {**h, "args": "hook Stop"}, {**h, "async": True}):
        assert not I.is_our_group({"hooks": [foreign]}), foreign


def test_the_interpreter_form_is_ours_and_near_misses_are_not():
    h = I.hook_entry(I.entry_point(), "PreToolUse", 30, refusing=True)
    assert h["command"] == sys.executable and h["args"][-1] == "PreToolUse"
    assert I.is_our_group({"matcher": "Bash", "hooks": [h]})
    start = h["args"][2]
    for foreign in ({**h, "args": ["-I", "-S", start, "PreToolUse", "x"]},   # an extra argument
                    {**h, "args": ["-I", "-S", "/tmp/evil.py", "PreToolUse"]},   # another script
                    {**h, "args": ["-S", start, "PreToolUse"]},                  # not isolated
                    {**h, "command": "/usr/bin/node"},                           # not an interpreter of ours
                    {**h, "command": "python3"}):                                # not absolute
        assert not I.is_our_group({"hooks": [foreign]}), foreign
    # a hook in another install's form: a different entry point keeps the console-script form
    assert I.hook_entry("/opt/other/bin/swarmgate", "Stop", 3, refusing=True)["args"] == ["hook", "Stop"]


def test_refusing_groups_come_from_the_registry():
    assert I.refusing_group("PreToolUse", "Bash|Monitor")
    assert I.refusing_group("PreToolUse", "SendMessage")
    assert I.refusing_group("SubagentStop", None)  # H01
    assert not I.refusing_group("SessionStart", None)
    assert not I.refusing_group("PostToolUse", "Bash|Monitor")  # P01 is advisory


def test_deny_rules_the_user_already_had_stay_theirs(repo):
    (repo / ".claude").mkdir()
    mine = {"permissions": {"deny": ["Edit(/.claude/swarmgate.toml)", "Bash(rm -rf *)"]}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(mine))
    assert I.main([str(repo)]) == 0
    deny = settings(repo)["permissions"]["deny"]
    assert deny[:2] == mine["permissions"]["deny"] and sorted(deny) == sorted(set(deny))
    assert set(I.PERMISSION_DENY) <= set(deny)
    # the user drops one of ours and adds one after install: uninstall removes only what install added
    s = settings(repo)
    s["permissions"]["deny"] = [r for r in s["permissions"]["deny"] if r != "Bash(git commit -n *)"] + ["Read(x)"]
    (repo / ".claude" / "settings.json").write_text(json.dumps(s))
    assert I.main([str(repo), "--uninstall"]) == 0
    assert settings(repo) == {"permissions": {"deny": ["Edit(/.claude/swarmgate.toml)", "Bash(rm -rf *)",
                                                       "Read(x)"]}}


def test_malformed_permissions_writes_nothing(repo, capsys):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"permissions": {"deny": "Bash"}}')
    before = snapshot(repo)
    assert I.main([str(repo)]) == 1
    assert "`permissions.deny` is a str" in capsys.readouterr().err
    assert snapshot(repo) == before


def test_an_install_from_before_the_deny_rules_upgrades_and_still_uninstalls_exactly(repo, monkeypatch):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(USER_SETTINGS)
    before = snapshot(repo)
    full = I.PERMISSION_DENY
    monkeypatch.setattr(I, "PERMISSION_DENY", ())  # an older swarmgate
    assert I.main([str(repo)]) == 0
    assert settings(repo)["permissions"]["deny"] == ["Read(./.env)"]
    monkeypatch.setattr(I, "PERMISSION_DENY", full)
    assert I.main([str(repo)]) == 0
    assert settings(repo)["permissions"]["deny"] == ["Read(./.env)", *I.PERMISSION_DENY]
    assert I.main([str(repo), "--uninstall"]) == 0
    after = snapshot(repo)
    assert {k: v for k, v in after.items() if BACKUP_MARK not in k} == before


def test_indentation_of_the_users_file_is_kept(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{\n    "env": {\n        "A": "1"\n    }\n}\n')
    assert I.main([str(repo)]) == 0
    assert '\n    "env": {\n        "A": "1"' in (repo / ".claude" / "settings.json").read_text()


def test_uninstall_after_hooks_ran_leaves_only_the_log(repo, hook, make_payload):
    assert I.main([str(repo)]) == 0
    hook(["PreToolUse"], make_payload(repo, command="ls"), cwd=repo)
    assert (repo / ".swarmgate" / "log" / "decisions.jsonl").exists()
    # caches an older swarmgate kept there are removed too (nothing reads them now)
    (repo / ".swarmgate" / "cache").mkdir()
    (repo / ".swarmgate" / "cache" / "config.json").write_text("{}")
    assert I.main([str(repo), "--uninstall"]) == 0
    assert not (repo / ".claude").exists()
    assert sorted(os.listdir(repo / ".swarmgate")) == ["log"]  # the decision log is the user's record


def test_symlinked_settings_is_written_through(repo, tmp_path):
    shared = tmp_path / "shared-settings.json"
    shared.write_text('{"env": {"A": "1"}}\n')
    (repo / ".claude").mkdir()
    os.symlink(shared, repo / ".claude" / "settings.json")
    assert I.main([str(repo)]) == 0
    assert (repo / ".claude" / "settings.json").is_symlink()
    assert "hooks" in json.loads(shared.read_text())
    assert I.main([str(repo), "--uninstall"]) == 0
    assert shared.read_text() == '{"env": {"A": "1"}}\n'


def test_groups_from_an_older_checkout_are_replaced_in_place(repo):
    old = {"hooks": {"PreToolUse": [
        {"matcher": "Read", "hooks": [{"type": "command", "command": "mine"}]},
        {"matcher": "Agent|Task", "hooks": [{"type": "command", "command": "/old/.venv/bin/swarmgate hook PreToolUse",
                                             "timeout": 5}]},
        {"matcher": "Glob", "hooks": [{"type": "command", "command": "mine too"}]}]}}
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(old))
    assert I.main([str(repo)]) == 0
    text = (repo / ".claude" / "settings.json").read_text()
    assert "/old/" not in text
    pre = settings(repo)["hooks"]["PreToolUse"]
    assert pre[0]["matcher"] == "Read" and pre[-1]["matcher"] == "Glob"  # ours where the old ones stood
    assert [g["matcher"] for g in pre[1:-1]] == [m for e, m, _ in I.HOOK_GROUPS if e == "PreToolUse"]


def test_claude_is_a_file(repo, capsys):
    (repo / ".claude").write_text("not a dir")
    assert I.main([str(repo)]) == 1
    assert "is not a directory" in capsys.readouterr().err
    assert (repo / ".claude").read_text() == "not a dir"


def test_a_newer_version_wiring_a_new_event_still_uninstalls_exactly(repo, monkeypatch):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(USER_SETTINGS)
    before = snapshot(repo)
    full = I.HOOK_GROUPS
    monkeypatch.setattr(I, "HOOK_GROUPS", tuple(g for g in full if g[0] != "Stop"))  # an older swarmgate
    monkeypatch.setattr(I, "WAKE_GROUP", ("SubagentStop", "Wake", 60))
    assert I.main([str(repo)]) == 0
    assert "Stop" not in settings(repo)["hooks"]
    monkeypatch.setattr(I, "HOOK_GROUPS", full)
    monkeypatch.undo()
    assert I.main([str(repo)]) == 0  # the newer one adds it
    assert "Stop" in settings(repo)["hooks"]
    assert I.main([str(repo), "--uninstall"]) == 0
    after = snapshot(repo)
    assert {k: v for k, v in after.items() if BACKUP_MARK not in k} == before
