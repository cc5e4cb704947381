"""agent-handover on hand-written transcripts in the format Claude Code 2.1.332 writes
(assistant entries hold tool_use in message.content, user entries hold tool_result)."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from swarmgate.agents import handover as H
from tests.agents.support import tool

SESSION = "c37af908-831d-4afc-9e40-bf6b6c496215"
AGENT = "a312abff3e81cf34f"


def entry(kind: str, content, cwd: str, **extra) -> dict:
    e = {"parentUuid": None, "isSidechain": True, "agentId": AGENT, "type": kind, "uuid": "u",
         "timestamp": "2026-11-29T12:13:21.495Z", "cwd": cwd, "sessionId": SESSION, "version": "2.1.332",
         "message": {"role": kind, "content": content}}
    e.update(extra)
    return e


def use(tid: str, name: str, **inp) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def result(tid: str, content, is_error: bool = False) -> dict:
    r = {"tool_use_id": tid, "type": "tool_result", "content": content}
    if is_error:
        r["is_error"] = True
    return r


def transcript_lines(cwd: str) -> list[str]:
    long_output = "\n".join(str(i) for i in range(1, 301))
    entries = [
        entry("user", "task: fix the parser\ninputs: src/p.py\nheavy test: do not run\nthread cap: 31", cwd,
              promptId="p1"),
        {"type": "attachment", "agentId": AGENT, "sessionId": SESSION, "attachment": {"type": "date"}},
        {"type": "api-request", "sessionId": SESSION, "agentId": AGENT, "params": {}},
        entry("assistant", [{"type": "text", "text": "Looking first."},
                            use("t1", "Bash", command="echo hi > out.txt && seq 1 300; echo 'x > y' >> logs/run.log",
                                description="make output")], cwd),
        entry("user", [result("t1", long_output)], cwd),
        entry("assistant", [use("t2", "Write", file_path=f"{cwd}/src/p.py", content="A\n")], cwd),
        entry("user", [result("t2", "File created successfully at: src/p.py")], cwd),
        entry("assistant", [use("t3", "Edit", file_path=f"{cwd}/src/p.py", old_string="A", new_string="B"),
                            use("t4", "MultiEdit", file_path="/abs/other.py", edits=[])], cwd),
        entry("user", [result("t3", [{"type": "text", "text": "updated"}]), result("t4", "updated")], cwd),
        entry("assistant", [use("t5", "NotebookEdit", notebook_path=f"{cwd}/nb.ipynb", new_source="x")], cwd),
        entry("user", [result("t5", "ok")], cwd),
        entry("assistant", [use("t6", "Bash", command="cat src/p.py | tee -a copy.txt; false")], cwd),
        entry("user", [result("t6", "B\n```\nfenced\n```", is_error=True)], cwd),
        entry("assistant", [use("t7", "Bash", command="cargo test --workspace > /dev/null 2>&1")], cwd),
        entry("user", [result("t7", "PreToolUse:Bash hook error: [B01] heavy test", is_error=True)], cwd),
        entry("assistant", [use("t8", "Monitor", command="tail -f build.log", timeout_ms=1000)], cwd),
        entry("assistant", [{"type": "text", "text": "Stopped: out of time.\nsrc/p.py done, docs left."}], cwd),
    ]
    lines = [json.dumps(e) for e in entries]
    lines.insert(3, "this is not json")
    lines.insert(5, "[1, 2]")
    lines.append('{"type": "assistant", "message": {"content": [{"type": "te')  # torn last line
    return lines


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A working directory and its transcript under $HOME/.claude/projects, as Claude Code lays it out."""
    cwd = tmp_path / "my.repo"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    base = tmp_path / "home" / ".claude" / "projects" / H.project_dir_name(str(cwd)) / SESSION / "subagents"
    base.mkdir(parents=True)
    path = base / f"agent-{AGENT}.jsonl"
    path.write_text("\n".join(transcript_lines(str(cwd))) + "\n")
    (base / f"agent-{AGENT}.meta.json").write_text(json.dumps(
        {"agentType": "implementer", "description": "fix the parser", "finished": False}))
    return cwd, path


def test_project_dir_name_matches_claude_code():
    assert H.project_dir_name("/tmp/hv/run/repo") == "-tmp-hv-run-repo"
    assert H.project_dir_name("/work/my.repo_x") == "-work-my-repo-x"


def test_extract_is_mechanical_and_complete(project):
    cwd, path = project
    entries, bad = H.read_entries(str(path))
    assert bad == 3
    data = H.extract(entries)
    assert data["prompt"].startswith("task: fix the parser\n")
    assert data["session"] == SESSION and data["agent_id"] == AGENT
    assert [c["name"] for c in data["calls"]] == ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit",
                                                   "Bash", "Bash", "Monitor"]
    by_id = {c["id"]: c for c in data["calls"]}
    assert by_id["t3"]["result"] == "updated" and by_id["t6"]["is_error"]
    assert by_id["t8"]["result"] is None
    assert data["last_message"] == "Stopped: out of time.\nsrc/p.py done, docs left."


def test_files_written_from_tools_and_shell(project):
    cwd, path = project
    data = H.extract(H.read_entries(str(path))[0])
    files = dict(H.files_written(data["calls"]))
    c = str(cwd)
    assert files[f"{c}/src/p.py"] == ["Write", "Edit"]
    assert files["/abs/other.py"] == ["MultiEdit"]
    assert files[f"{c}/nb.ipynb"] == ["NotebookEdit"]
    assert any("> out.txt" in h for h in files[f"{c}/out.txt"])
    assert any(">> logs/run.log" in h for h in files[f"{c}/logs/run.log"])
    assert any("tee" in h for h in files[f"{c}/copy.txt"])
    assert f"{c}/y" not in files and "/dev/null" not in files and f"{c}/1" not in files  # 'x > y' is data
    assert len(files) == 6, files


def test_fallback_scanner_is_quote_aware():
    f = H._fallback_writes
    assert f("echo 'a > b' \"c >> d\"") == []
    assert [p for p, _ in f("cmd 2>&1 >out 2>err; ls &> all | tee -a t1 t2 && echo >&2 x")] == \
        ["out", "err", "all", "t1", "t2"]
    assert f('echo "unbalanced > x') is not None  # never raises


def test_markdown_hand_over(project):
    cwd, _ = project
    text = H.handover(AGENT, cwds=[str(cwd)])
    assert text.startswith(f"# Hand-over: agent {AGENT} (implementer)\n")
    assert "- finished: no (it stopped half-way)" in text
    assert "- 3 unreadable transcript line(s) skipped" in text
    assert "## Dispatch prompt\n\n```text\ntask: fix the parser" in text
    assert "## Commands (4)" in text
    assert "### 1. Bash: ok (make output)" in text
    assert "[... 240 lines trimmed ...]" in text and "\n300\n" in text and "\n1\n" in text
    assert "### 2. Bash: error" in text
    assert "````\nB\n```\nfenced\n```\n````" in text  # a fence longer than the output's
    assert "PreToolUse:Bash hook error: [B01] heavy test" in text
    assert "### 4. Monitor: no result in the transcript" in text
    assert text.rstrip().endswith("```text\nStopped: out of time.\nsrc/p.py done, docs left.\n```")


def test_trim_limits_long_lines_and_total():
    t = H.trim("x" * 1000)
    assert "[... 600 chars trimmed]" in t
    t = H.trim("\n".join("y" * 300 for _ in range(60)), max_chars=2000)
    assert "chars trimmed ...]" in t and len(t) < 2100


@pytest.mark.parametrize("how", ["home", "config-dir", "transcripts", "session", "prefixed-id", "path"])
def test_locating_the_transcript(project, tmp_path, monkeypatch, capsys, how):
    cwd, path = project
    args = [AGENT]
    if how == "config-dir":
        alt = tmp_path / "alt-config"
        os.rename(tmp_path / "home" / ".claude", alt)
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(alt))
    elif how == "transcripts":
        moved = tmp_path / "elsewhere"
        os.rename(tmp_path / "home" / ".claude" / "projects", moved)
        args += ["--transcripts", str(moved)]
    elif how == "session":
        args += ["--session", SESSION]
    elif how == "prefixed-id":
        args = [f"agent-{AGENT}"]
    elif how == "path":
        args = [str(path)]
    rc = H.main(args)  # in this process: cwd is the project (the fixture chdir'ed there)
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out.startswith(f"# Hand-over: agent {AGENT}")


def test_searches_every_session_and_every_project(project, tmp_path):
    cwd, path = project
    other = tmp_path / "home" / ".claude" / "projects" / "-some-other-name" / "s2" / "subagents"
    other.mkdir(parents=True)
    (other / "agent-zz9.jsonl").write_text(json.dumps(entry("user", "other prompt", "/x")) + "\n")
    assert "other prompt" in H.handover("zz9", cwds=[str(cwd)])
    with pytest.raises(H.HandoverError, match="no transcript agent-nope.jsonl"):
        H.handover("nope", cwds=[str(cwd)])
    with pytest.raises(H.HandoverError, match="no transcript"):
        H.handover(AGENT, session="wrong-session", cwds=[str(cwd)])


def test_out_file_is_written_atomically(project, tmp_path):
    cwd, _ = project
    out = tmp_path / "handovers" / "a.md"
    p = subprocess.run([tool("agent-handover"), AGENT, "--out", str(out)], capture_output=True, text=True, cwd=cwd)
    assert p.returncode == 0 and p.stdout == ""
    assert out.read_text().startswith("# Hand-over")
    assert not [n for n in os.listdir(out.parent) if n != "a.md"]


def test_missing_or_empty_transcript_is_a_clear_error(project, tmp_path):
    cwd, path = project
    p = subprocess.run([tool("agent-handover"), "nope"], capture_output=True, text=True, cwd=cwd)
    assert p.returncode == 1 and "--session" in p.stderr and "Traceback" not in p.stderr
    empty = tmp_path / "agent-empty.jsonl"
    empty.write_text("garbage\n\n{\"type\": \"attachment\"}\n")
    with pytest.raises(H.HandoverError, match="holds no conversation"):
        H.handover(str(empty))
    p = subprocess.run([tool("agent-handover"), "a/b"], capture_output=True, text=True, cwd=cwd)
    assert p.returncode == 1 and "expected the id" in p.stderr
