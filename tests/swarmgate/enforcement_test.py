"""Whether swarmgate's hooks are in force in Claude Code (swarmgate.enforcement, `swarmgate doctor`):
the settings sources as the client merges them, the client's version, a round trip per wired event,
liveness read from the client's transcripts and the decision log. The real client's side of the
same facts is tests/e2e/doctor_e2e_test.py."""
from __future__ import annotations

import json
import os
import stat
import time

import pytest

from swarmgate import decision_log, doctor, enforcement, install


@pytest.fixture
def places(tmp_path, monkeypatch):
    """The user's settings (HOME), the managed folder (CLAUDE_CODE_MANAGED_SETTINGS_PATH): test-owned."""
    managed = tmp_path / "managed"
    managed.mkdir()
    monkeypatch.setenv(enforcement.MANAGED_ENV, str(managed))
    (tmp_path / "home" / ".claude").mkdir(parents=True, exist_ok=True)
    return {"user": tmp_path / "home" / ".claude" / "settings.json", "managed": managed / "managed-settings.json",
            "drop_in": managed / "managed-settings.d" / "50-hooks.json"}


def _write(path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _switch(repo, key: str = "disableAllHooks") -> tuple:
    value, where, ignored = enforcement.effective(enforcement.sources(str(repo)), key)
    return value, (os.path.basename(os.path.dirname(where)) + "/" + os.path.basename(where)) if where else None, ignored


def test_disable_all_hooks_is_the_highest_source_that_sets_it(repo, places):
    assert _switch(repo) == (False, None, [])
    _write(places["user"], {"disableAllHooks": True})
    assert _switch(repo) == (True, ".claude/settings.json", [])   # the user's file
    _write(repo / ".claude" / "settings.local.json", {"disableAllHooks": False})
    assert _switch(repo)[0] is False   # local beats user
    _write(repo / ".claude" / "settings.local.json", {"disableAllHooks": True})
    _write(places["managed"], {"disableAllHooks": False})
    assert _switch(repo) == (False, "managed/managed-settings.json", [])   # managed wins
    _write(places["drop_in"], {"disableAllHooks": True})
    assert _switch(repo) == (True, "managed-settings.d/50-hooks.json", [])   # a managed true counts


def test_allow_managed_hooks_only_is_read_from_managed_settings_only(repo, places):
    _write(repo / ".claude" / "settings.json", {"allowManagedHooksOnly": True})
    value, where, ignored = _switch(repo, "allowManagedHooksOnly")
    assert (value, where) == (False, None) and ignored == [str(repo / ".claude" / "settings.json")]
    c = enforcement.check_hook_switches(str(repo))
    assert c.status == doctor.NOTE and "is ignored (Claude Code reads it from managed settings only)" in c.what
    _write(places["managed"], {"allowManagedHooksOnly": True})
    c = enforcement.check_hook_switches(str(repo))
    assert c.status == doctor.FAIL and c.enforcing and c.data["allowManagedHooksOnly"] is True
    assert "runs only the hooks of managed settings" in c.what


def test_the_check_fails_enforcing_and_names_the_file(repo, places):
    assert install.main([str(repo)]) == 0
    c = enforcement.check_hook_switches(str(repo))
    assert c.status == doctor.OK and c.data["disableAllHooks"] is False
    _write(repo / ".claude" / "settings.local.json", {"disableAllHooks": True})
    c = enforcement.check_hook_switches(str(repo))
    assert c.status == doctor.FAIL and c.enforcing
    assert c.data["disableAllHooks"] is True and c.data["disableAllHooks_source"].endswith("settings.local.json")
    assert "settings.local.json sets \"disableAllHooks\": true" in c.what
    # swarmgate wired in managed settings runs under a non-managed disableAllHooks
    _write(places["managed"], {"hooks": json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]})
    assert enforcement.check_hook_switches(str(repo)).status == doctor.OK
    # an unreadable managed file: the client cannot tell whether hooks are allowed
    places["managed"].write_text("{oops")
    c = enforcement.check_hook_switches(str(repo))
    assert c.status == doctor.FAIL and "is not valid JSON" in c.what


def _fake_client(tmp_path, version: str):
    """An executable standing for `claude --version` only (the real binary: tests/e2e)."""
    exe = tmp_path / f"claude-{version}"
    exe.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_the_client_version_against_the_oldest_that_enforces(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_CLAUDE_BIN", _fake_client(tmp_path, "2.1.331"))
    c = enforcement.check_client_version()
    assert c.status == doctor.FAIL and c.enforcing and "older than 2.1.332" in c.what
    assert c.data == {"path": c.data["path"], "version": "2.1.331", "minimum": "2.1.332", "ok": False}
    monkeypatch.setenv("SWARMGATE_CLAUDE_BIN", _fake_client(tmp_path, "2.1.340"))
    assert enforcement.check_client_version().status == doctor.OK
    monkeypatch.setenv("SWARMGATE_CLAUDE_BIN", "")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert enforcement.check_client_version().status == doctor.NOTE


def test_a_round_trip_per_wired_event(repo):
    assert install.main([str(repo)]) == 0
    c = enforcement.check_round_trips(str(repo))
    assert c.status == doctor.OK, c.what
    events = {e for e, _, _ in install.HOOK_GROUPS}
    assert set(c.data) == events and all(r["ok"] for r in c.data.values())
    # one event's hook that does not answer
    p = repo / ".claude" / "settings.json"
    data = json.loads(p.read_text())
    data["hooks"]["Notification"][0]["hooks"][0]["command"] = "/nowhere/.venv/bin/python"   # a moved install
    p.write_text(json.dumps(data))
    c = enforcement.check_round_trips(str(repo))
    assert c.status == doctor.FAIL and c.enforcing and not c.data["Notification"]["ok"]
    assert [e for e, r in c.data.items() if not r["ok"]] == ["Notification"], c.data
    assert not [r for r in decision_log.read(str(repo)) if r.get("session") != enforcement.DOCTOR_SESSION]


def test_liveness_a_session_without_decisions_ran_without_the_hooks(repo, tmp_path):
    assert install.main([str(repo)]) == 0
    folder = tmp_path / "home" / ".claude" / "projects" / enforcement.project_dir_name(os.path.realpath(repo))
    folder.mkdir(parents=True)
    c = enforcement.check_liveness(str(repo))
    assert c.status == doctor.OK and c.data["sessions"] == 0
    (folder / "sess-judged.jsonl").write_text("{}\n")
    decision_log.record(str(repo), session="sess-judged", agent_id=None, agent_type=None, event="PreToolUse",
                        tool="Bash", codes=["B01"], decision="deny", latency_ms=1.0)
    c = enforcement.check_liveness(str(repo))
    assert c.status == doctor.NOTE and c.data["sessions_without_decisions"] == []
    assert "B01" not in c.data["silent_guards"] and "T01" in c.data["silent_guards"]
    (folder / "sess-unjudged.jsonl").write_text("{}\n")
    c = enforcement.check_liveness(str(repo))
    assert c.status == doctor.FAIL and c.enforcing and c.data["sessions_without_decisions"] == ["sess-unjudged"]
    # last active before the settings were written (the install): says nothing about the hooks
    settings = repo / ".claude" / "settings.json"
    os.utime(settings, (time.time() + 5, time.time() + 5))
    assert enforcement.check_liveness(str(repo)).data["sessions_without_decisions"] == []
    os.utime(settings, (time.time() - 60, time.time() - 60))
    # older than [hooks] liveness_days: not counted
    old = time.time() - 3 * 86400
    os.utime(folder / "sess-unjudged.jsonl", (old, old))
    (repo / ".claude" / "swarmgate.toml").write_text("[hooks]\nliveness_days = 2\n")
    assert enforcement.check_liveness(str(repo)).data["sessions_without_decisions"] == []


def test_doctor_json_and_the_exit_code(repo, places, capsys):
    assert install.main([str(repo)]) == 0
    capsys.readouterr()
    rc = doctor.main([str(repo), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["disableAllHooks"] is False and out["exit_code"] == rc and rc != doctor.NOT_IN_FORCE
    assert {"repo", "enforcement_in_force", "exit_code", "disableAllHooks", "allowManagedHooksOnly",
            "checks"} <= set(out)
    keys = [c["key"] for c in out["checks"]]
    assert {"settings", "hook_switches", "client_version", "round_trips", "liveness"} <= set(keys)
    assert len(keys) == len(set(keys)) and all(keys)
    _write(repo / ".claude" / "settings.local.json", {"disableAllHooks": True})
    assert doctor.main([str(repo), "--json"]) == doctor.NOT_IN_FORCE == 78
    out = json.loads(capsys.readouterr().out)
    assert out["disableAllHooks"] is True and out["enforcement_in_force"] is False and out["exit_code"] == 78
    assert doctor.main([str(repo)]) == 78
    assert "swarmgate's hooks are NOT in force (exit 78)" in capsys.readouterr().out
