"""`swarmgate doctor` against the real client: its red is what Claude Code really does.

With the repository's own `.claude/settings.local.json` setting `"disableAllHooks": true`, doctor's
JSON flags `disableAllHooks: true` and exits 78, and the pinned client really runs a command
swarmgate refuses (B01) with no hook consulted; afterwards doctor's liveness check names that
session as one that ran without a decision. The same command, the same way, is refused while the
switch is off, and doctor says the hooks are in force.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from messages_api import Conversation, bash, done

pytestmark = pytest.mark.e2e

REFUSED = "echo ran > {marker}; make check-full"   # B01: a heavy test without SWARMGATE_HEAVY


def _doctor(claude_repo) -> tuple[int, dict]:
    env = claude_repo.env(extra={"SWARMGATE_CLAUDE_BIN": claude_repo.claude_bin})
    p = subprocess.run([claude_repo.tool_path("swarmgate"), "doctor", "--json", str(claude_repo.repo)],
                       cwd=claude_repo.repo, env=env, capture_output=True, text=True, timeout=240)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


def _check(report: dict, key: str) -> dict:
    (c,) = [c for c in report["checks"] if c["key"] == key]
    return c


def test_doctor_flags_disable_all_hooks_and_the_client_really_runs_a_refused_command(claude_repo):
    # switch off: refused, and doctor says the hooks are in force
    run = claude_repo.run("script:on", [Conversation("script:on", [bash(REFUSED.format(marker="on.txt")),
                                                                   done("refused")])])
    why = run.describe()
    (res,) = run.results_of("Bash", "script:on")
    assert res.is_error and "[B01]" in res.text, why
    assert not (claude_repo.repo / "on.txt").exists(), why
    code, report = _doctor(claude_repo)
    assert report["disableAllHooks"] is False and code != 78, report
    assert _check(report, "hook_switches")["status"] == "ok"
    assert _check(report, "client_version")["status"] == "ok", report
    assert _check(report, "round_trips")["status"] == "ok", report
    live = _check(report, "liveness")
    assert live["data"]["sessions"] >= 1 and live["data"]["sessions_without_decisions"] == [], live

    # switch on, in the repository's local settings: doctor is red, and so is reality
    local = claude_repo.repo / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}))
    code, report = _doctor(claude_repo)
    assert code == 78 and report["exit_code"] == 78 and report["enforcement_in_force"] is False, report
    assert report["disableAllHooks"] is True, report
    switches = _check(report, "hook_switches")
    assert switches["status"] == "FAIL" and switches["data"]["disableAllHooks_source"] == str(local), switches

    run = claude_repo.run("script:off", [Conversation("script:off", [bash(REFUSED.format(marker="off.txt")),
                                                                     done("it ran")])])
    why = run.describe()
    (res,) = run.results_of("Bash", "script:off")
    assert "[B01]" not in res.text, why
    assert (claude_repo.repo / "off.txt").read_text() == "ran\n", why   # the refused command really ran
    assert not [d for d in run.decisions() if d.get("session") == run.session_id], why   # no hook was asked
    code, report = _doctor(claude_repo)
    live = _check(report, "liveness")
    assert code == 78 and live["status"] == "FAIL", report
    assert live["data"]["sessions_without_decisions"] == [run.session_id], live
