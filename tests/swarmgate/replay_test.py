"""`swarmgate replay` without the real binary: which calls, as whom, judged by which guards, and the
JUnit XML (the real-client transcript is in tests/e2e/replay_e2e_test.py)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from swarmgate import replay
from swarmgate.agents.handover import read_entries


def _write(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def _use(tid, name, inp, cwd, **extra):
    return {"type": "assistant", "cwd": str(cwd), "sessionId": "S1", **extra, "message": {
        "role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}]}}


def _result(tid, text, error=False):
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}]}}


def session(tmp_path, repo):
    main = tmp_path / "projects" / "p" / "S1.jsonl"
    _write(main, [_use("u1", "Bash", {"command": "cargo test --workspace"}, repo), _result("u1", "Exit code 101"),
                  _use("u2", "Bash", {"command": 'echo "<x> & \'y\'"'}, repo), _result("u2", "<x> & 'y'"),
                  _use("u3", "Write", {"file_path": ".claude/settings.json", "content": "{}"}, repo),
                  _result("u3", "PreToolUse:Write hook error: swarmgate refused this:\n[G01] ...", True)])
    sub = main.parent / "S1" / "subagents" / "agent-a7.jsonl"
    _write(sub, [_use("v1", "Bash", {"command": "make check-full"}, repo, agentId="a7", isSidechain=True),
                 _result("v1", "ok")])
    (sub.parent / "agent-a7.meta.json").write_text(json.dumps({"agentType": "implementer", "toolUseId": "x"}))
    return main, sub


def test_calls_identity_and_expansion(tmp_path):
    main, sub = session(tmp_path, tmp_path / "repo")
    assert replay.expand([str(main)]) == [str(main), str(sub)]
    assert replay.expand([str(sub), str(main)]) == [str(sub), str(main)]  # each once
    entries = read_entries(str(sub))[0]
    assert replay.identity(str(sub), entries) == {"session": "S1", "agent_id": "a7", "agent_type": "implementer"}
    assert replay.identity(str(main), read_entries(str(main))[0])["agent_id"] is None
    calls = replay.calls_of(read_entries(str(main))[0])
    assert [(c["tool"], c["refused_then"]) for c in calls] == [("Bash", False), ("Bash", False), ("Write", True)]


def test_the_guard_set_leaves_out_live_state_and_advisory_guards():
    codes = {g.code for g in replay.replay_guards()}
    assert {"B01", "B02", "B10", "B30", "G01", "W01", "D01", "D30"} <= codes
    assert not codes & {"D07", "D16", "M01", "R01", "C01", "H02"}


def test_junit_and_exit_codes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    main, _ = session(tmp_path, repo)
    out = tmp_path / "j.xml"
    assert replay.main([str(main), "--junit", str(out), "--repo", str(repo)]) == 1
    text = capsys.readouterr().out
    assert "3 refused by the current guards and config" in text, text
    root = ET.parse(out).getroot()
    assert (root.get("tests"), root.get("failures")) == ("4", "3")
    names = [c.get("name") for c in root.iter("testcase")]
    assert names[1] == "002 Bash: echo \"<x> & 'y'\"", names  # escaped in the file, read back whole
    assert [c.find("failure") is not None for c in root.iter("testcase")] == [True, False, True, True]
    # nothing refused: exit 0; a transcript that is not there: one line, 251
    (repo / ".claude" / "swarmgate.toml").write_text('[guards]\nB01 = "off"\nB02 = "off"\nB10 = "off"\nG01 = "off"\n'
                                                     'W01 = "off"\n')
    assert replay.main([str(main), "--repo", str(repo)]) == 0
    capsys.readouterr()
    assert replay.main([str(tmp_path / "nope.jsonl"), "--repo", str(repo)]) == 251
    err = capsys.readouterr().err
    assert err.startswith("swarmgate replay:") and "no such transcript" in err and len(err.splitlines()) == 1
