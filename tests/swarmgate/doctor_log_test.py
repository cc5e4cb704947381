"""`swarmgate doctor`, `swarmgate log` and `swarmgate report`."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from swarmgate import decision_log, doctor, install, log_summary, log_view
from swarmgate.exit_codes import MEANING


def test_doctor_on_an_unwired_repository_fails_with_the_fix(repo, capsys):
    assert doctor.main([str(repo)]) == doctor.NOT_IN_FORCE   # 78: the hooks are not in force
    out = capsys.readouterr().out
    assert f"FAIL {repo}/.claude/settings.json does not exist" in out
    assert f"fix: swarmgate install {repo}" in out
    assert "ok   entry point" in out and "ok   state directory" in out


def test_doctor_on_a_wired_repository(repo, capsys):
    assert install.main([str(repo)]) == 0
    capsys.readouterr()
    rc = doctor.main([str(repo)])
    out = capsys.readouterr().out
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    if doctor.cgroup_backend()[0] is None:  # a machine without cgroups: that one line may fail
        fails = [f for f in fails if "cgroup" not in f]
    assert not fails, out
    assert rc == (0 if doctor.cgroup_backend()[0] else 1)
    assert f"wires {len(install.HOOK_GROUPS)} hook groups" in out and "is valid" in out
    assert "ok   the Bash hook answers a plain `ls`" in out


def test_doctor_finds_a_dead_entry_point_and_a_bad_config(repo, capsys):
    assert install.main([str(repo)]) == 0
    p = repo / ".claude" / "settings.json"
    command, lead = install.hook_program(install.entry_point())   # the interpreter of this install
    p.write_text(p.read_text().replace(json.dumps(command), json.dumps("/nowhere/.venv/bin/python")))
    (repo / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = -3\n")
    capsys.readouterr()
    assert doctor.main([str(repo)]) == doctor.NOT_IN_FORCE
    out = capsys.readouterr().out
    assert "not an existing absolute executable: /nowhere/.venv/bin/python" in out
    assert "FAIL config:" in out and "heavy_default" in out
    assert f"FAIL the hook `/nowhere/.venv/bin/python {' '.join(lead)} PreToolUse` cannot start" in out


def test_doctor_finds_hooks_that_fail_open_and_missing_deny_rules(repo, capsys):
    assert install.main([str(repo)]) == 0
    p = repo / ".claude" / "settings.json"
    wired = p.read_text()
    p.write_text(wired.replace('"onFailure": "block"', '"onFailure": "continue"'))
    c = doctor.check_settings(str(repo))
    assert c.status == doctor.FAIL and "lack `\"onFailure\": \"block\"`" in c.what and "Bash|Monitor" in c.what
    data = json.loads(wired)
    data["permissions"]["deny"].remove("Edit(/.claude/swarmgate.toml)")
    p.write_text(json.dumps(data))
    c = doctor.check_settings(str(repo))
    assert c.status == doctor.FAIL and "permissions.deny lacks 1" in c.what
    assert c.fix == f"swarmgate install {repo}"


def test_doctor_runs_the_hook_and_reports_a_refusal(repo, capsys):
    assert install.main([str(repo)]) == 0
    (repo / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = 'x'\n")
    c = doctor.check_hook_answers(str(repo))
    assert c.status == doctor.FAIL and "refuses a plain `ls`" in c.what and "heavy_default" in c.what


def test_doctor_state_dir_not_writable(repo, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(blocker / "sub"))
    c = doctor.check_state_dir()
    assert c.status == doctor.FAIL and "SWARMGATE_STATE_DIR" in c.fix


def test_doctor_through_the_entry_point_never_tracebacks(repo, tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "swarmgate")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{oops")
    proc = subprocess.run([exe, "doctor", str(repo)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SWARMGATE_STATE_DIR": str(tmp_path / "st")})
    assert proc.returncode == doctor.NOT_IN_FORCE
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "is not valid JSON" in proc.stdout


def _log(repo, **kw):
    base = {"session": "sess-aaaa", "agent_id": None, "agent_type": None, "event": "PreToolUse", "tool": "Bash",
            "codes": [], "decision": "allow", "latency_ms": 10.0, "input_text": "ls"}
    base.update(kw)
    decision_log.record(str(repo), **base)


def fill(repo):
    _log(repo)
    _log(repo, latency_ms=30.0, input_text="git status")
    _log(repo, codes=["B01"], decision="deny", input_text="cargo test --workspace", agent_id="a1",
         agent_type="implementer", latency_ms=50.0)
    _log(repo, codes=["B01"], decision="deny", input_text="cargo test --workspace", session="sess-bbbb")
    _log(repo, event="Stop", tool=None, decision="allow", latency_ms=5.0, input_text="")


def test_log_filters_and_json(repo, capsys):
    fill(repo)
    assert log_view.main(["--repo", str(repo), "--json", "--code", "B01"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["session"] for r in rows] == ["sess-aaaa", "sess-bbbb"]
    assert log_view.main(["--repo", str(repo), "--json", "--agent", "implementer"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(rows) == 1 and rows[0]["agent_id"] == "a1"
    assert log_view.main(["--repo", str(repo), "--json", "--agent", "main", "--decision", "allow",
                          "--event", "PreToolUse"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert log_view.main(["--repo", str(repo), "--json", "--session", "sess-b"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert log_view.main(["--repo", str(repo), "--json", "--last", "2"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["event"] for r in rows] == ["PreToolUse", "Stop"]


def test_log_table(repo, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    fill(repo)
    assert log_view.main(["--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "implementer (a1)" in out and "cargo test --workspace" in out and "deny" in out


def test_log_at_80_columns_is_two_lines_a_record_that_fit(repo, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    fill(repo)
    long = "cargo build --release --workspace --all-features 2>&1 | tee build.log | tail -50 && echo done"
    _log(repo, input_text=long, agent_id="b2c3d4e5f6a7b8c9", agent_type="a-rather-long-agent-type-name")
    assert log_view.main(["--repo", str(repo)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
    heads = [x for x in lines if x[:2].isdigit() and x[2] == ":"]
    assert len(heads) == 6  # one line a record, every one of them
    denied = next(x for x in heads if "implementer (a1)" in x)
    assert "PreToolUse Bash" in denied and "deny B01" in denied and "50ms" in denied
    assert "sess-bbb" in "".join(heads)  # two sessions in the log: each line names its own
    assert "    cargo test --workspace" in lines
    assert any(x.startswith("    cargo build --release") and x.endswith("…") for x in lines)
    # the decisions start in one column, so they read down as one
    assert len({x.index(d) for x in heads for d in ("allow", "deny") if f"  {d} " in x}) == 1


def test_log_empty(repo, capsys):
    assert log_view.main(["--repo", str(repo)]) == 0
    assert "no decisions logged" in capsys.readouterr().out


def test_report_summary(repo):
    fill(repo)
    s = log_view.summarize(decision_log.read(str(repo)))
    assert s["total"] == 5
    assert s["decisions"] == {"allow": 3, "deny": 2}
    assert s["codes"]["B01"] == {"deny": 2} and s["codes"]["-"] == {"allow": 3}
    assert s["agents"] == {"implementer": {"deny": 1}, "main": {"allow": 3, "deny": 1}}
    assert s["latency"]["PreToolUse"] == {"n": 4, "median_ms": 20.0, "p95_ms": 50.0}
    assert s["top_refused"] == [{"input": "cargo test --workspace", "count": 2}]


def test_report_counts_advisory_codes_apart_from_the_combined_decision(repo):
    """R01 reports on a call that B01 refused: R01 is counted as context, B01 as deny, the call as
    one deny. A record written before the log kept per-code decisions: R01 (advisory) is context."""
    _log(repo, codes=["B01", "R01"], decision="deny", findings={"B01": "deny", "R01": "context"},
         input_text="cargo test --workspace")
    _log(repo, codes=["R01"], decision="context", findings={"R01": "context"}, input_text="make check-full")
    _log(repo, codes=["B01", "R01"], decision="deny", input_text="cargo test --all")  # an older record
    s = log_view.summarize(decision_log.read(str(repo)), advisory={"R01"})
    assert s["codes"]["R01"] == {"context": 3}, s["codes"]
    assert s["codes"]["B01"] == {"deny": 2}
    assert s["decisions"] == {"context": 1, "deny": 2}
    # without knowing R01 is advisory, an old record can only be counted by its combined decision
    assert log_view.summarize(decision_log.read(str(repo)))["codes"]["R01"] == {"context": 2, "deny": 1}
    assert "R01" in log_view.advisory_codes() and "B01" not in log_view.advisory_codes()


def test_report_cli(repo, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    fill(repo)
    assert log_view.report_main(["--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "5 decisions" in out and "B01" in out and "PreToolUse" in out and "cargo test --workspace" in out
    assert log_view.report_main(["--repo", str(repo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 5


def test_percentile():
    assert log_summary.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95) == 10
    assert log_summary.percentile([5], 95) == 5
    assert log_summary.percentile(list(range(1, 101)), 95) == 95


def test_readme_keeps_the_two_commands_and_the_exit_code_table():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    assert "./install.sh --into /path/to/your/repo" in text and "./install.sh --test" in text
    for code, meaning in MEANING.items():
        assert f"| {int(code)} | {meaning} |" in text, f"README's exit code table lacks {int(code)}: regenerate it"
    assert "systemd" in text and "241" in text


def test_log_refuses_a_planted_symlink_in_one_line(repo, tmp_path, capsys):
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"session": "not yours"}\n')
    (repo / ".swarmgate" / "log").mkdir(parents=True)
    os.symlink(secret, repo / ".swarmgate" / "log" / "decisions.jsonl")
    assert log_view.main(["--repo", str(repo)]) == 1
    assert log_view.report_main(["--repo", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "cannot read the decision log" in err and "symlink" in err
