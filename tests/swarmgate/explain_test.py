"""`swarmgate explain`: the hook's own path (parse, config, registry, evaluate), printed."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from swarmgate import explain as ex
from swarmgate.hook_engine import answer

CONFIG = """\
[heavy]
patterns = ["cargo test --workspace", "make check-full"]
[guards]
R01 = "off"
[write]
main = ["**"]
implementer = ["src/**", "tests/**"]
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = tmp_path / "repo"
    (r / ".claude").mkdir(parents=True)
    (r / ".claude" / "swarmgate.toml").write_text(CONFIG)
    (r / "package.json").write_text('{"scripts": {"test": "cargo test --workspace", "lint": "eslint ."}}')
    monkeypatch.chdir(r)
    return r


def run(capsys, *argv):
    rc = ex.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_text_names_every_command_and_each_guard(repo, capsys):
    rc, out, _ = run(capsys, "--agent", "implementer", "--", "npm", "test")
    assert rc == 0
    assert "cargo test --workspace" in out and "reached: npm script:test" in out
    assert "B01  deny" in out and "W01  pass" in out and "R01  off" not in out.split("guards:")[0]
    assert out.rstrip().endswith("decision: deny")


def test_json_for_the_main_agent(repo, capsys):
    rc, out, _ = run(capsys, "--json", "--", "npm run lint")
    x = json.loads(out)
    assert rc == 0 and x["actor"] == "main" and x["decision"] == "allow"
    assert [c["words"] for c in x["commands"]] == [["npm", "run", "lint"], ["eslint", "."]]
    assert x["files_read"] == [str(repo / "package.json")]
    assert {g["code"]: g["verdict"] for g in x["guards"]}["R01"] == "off"


@pytest.mark.parametrize("command", [
    "npm test", "cargo test --workspace", "SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- make check-full",
    "python3 -c 'import os; os.system(\"cargo test --workspace\")'", "ls -la", "echo 'cargo test --workspace'",
    "while true; do sleep 5; done", "echo x > .claude/settings.json",
])
@pytest.mark.parametrize("agent", [None, "implementer"])
def test_same_decision_as_the_hook(repo, capsys, command, agent):
    payload = {"session_id": "s", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command}}
    if agent:
        payload.update(agent_id="a1", agent_type=agent)
    text, _ = answer("PreToolUse", json.dumps(payload))
    hook = json.loads(text).get("hookSpecificOutput", {}).get("permissionDecision", "allow")
    x = ex.explain("PreToolUse", payload)
    assert x["decision"] == hook, (command, x["decision"], hook)


def test_event_file(repo, capsys, tmp_path):
    payload = {"session_id": "s", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": "make check-full"},
               "agent_id": "a", "agent_type": "implementer"}
    f = tmp_path / "event.json"
    f.write_text(json.dumps(payload))
    rc, out, _ = run(capsys, "--event", str(f), "--json")
    assert rc == 0 and json.loads(out)["actor"] == "implementer" and json.loads(out)["decision"] == "deny"


def test_explain_records_nothing(repo, capsys):
    run(capsys, "--agent", "implementer", "--", "cargo test --workspace")
    assert not os.path.exists(repo / ".swarmgate" / "log" / "decisions.jsonl")


@pytest.mark.parametrize("argv, says", [
    ([], "give the command"),
    (["--event", "/no/such/dir/swarmgate-explain-test.json"], "cannot be read"),
    (["--cwd", "/no/such/dir/swarmgate-explain-test", "--", "ls"], "no such directory"),
    (["--bogus", "--", "ls"], "unrecognized arguments"),
])
def test_usage_errors_are_one_line_and_251(repo, capsys, argv, says):
    rc, _, err = run(capsys, *argv)
    assert rc == 251 and says in err and len(err.strip().splitlines()) == 1, err


def test_bad_config_is_251(repo, capsys):
    (repo / ".claude" / "swarmgate.toml").write_text("[bash]\nwrappers = 3\n")
    rc, _, err = run(capsys, "--", "ls")
    assert rc == 251 and "[bash] wrappers" in err


def test_umbrella_verb(repo):
    p = subprocess.run([sys.executable, "-m", "swarmgate", "explain", "--agent", "implementer", "--",
                        "npm", "test"], capture_output=True, text=True, cwd=repo, timeout=60)
    assert p.returncode == 0 and "B01  deny" in p.stdout, p.stderr
