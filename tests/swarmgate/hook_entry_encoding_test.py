"""The hook's answer is always encodable (issue 11): lone surrogates (as JSON escapes) and invalid
UTF-8 anywhere in the event - command, file path, prompt, transcript - never crash `swarmgate
hook`; it exits 0 with exactly one JSON object, through the real entry point in a fresh process."""
from __future__ import annotations

import json
import os
import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.swarmgate.conftest import SWARMGATE, answer_of, run_hook

LONE = ["\ud800", "\udbff", "\udc00", "\udfff", "\udc80"]


def _event(repo, event: str, **fields) -> dict:
    return {"session_id": "sess-enc", "transcript_path": "", "cwd": str(repo), "hook_event_name": event, **fields}


def _hook(repo, event: str, stdin: bytes):
    return run_hook([event], stdin, cwd=repo, env={"CLAUDE_PROJECT_DIR": str(repo), "SWARMGATE_SELFTEST_CASE": "1"})


def _escaped(payload: dict) -> bytes:
    """JSON with every non-ASCII character escaped: a lone surrogate arrives as `\\ud800`."""
    return json.dumps(payload, ensure_ascii=True).encode("ascii")


def _raw(payload: dict) -> bytes:
    """JSON written as bytes, a lone surrogate encoded as it is (invalid UTF-8 on stdin)."""
    return json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _log(repo) -> list[dict]:
    path = repo / ".swarmgate" / "log" / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_lone_surrogate_in_a_heavy_command_is_judged_not_crashed_on(repo):
    """The first crash named in the issue: exit 1 and a traceback, so the client ran the command."""
    proc = _hook(repo, "PreToolUse", _escaped(_event(repo, "PreToolUse", tool_name="Bash", tool_input={
        "command": "cargo test --workspace -- x\ud800"})))
    ans = answer_of(proc)["hookSpecificOutput"]
    assert ans["permissionDecision"] == "deny" and "[B01]" in ans["permissionDecisionReason"]
    # judged as what the client will run: the surrogate encoded to UTF-8 is U+FFFD
    assert "x\ufffd" in ans["permissionDecisionReason"]
    (rec,) = _log(repo)
    assert rec["decision"] == "deny" and "B01" in rec["codes"]


def test_a_lone_surrogate_in_a_file_path_still_meets_g01(repo):
    """The second crash named in the issue: a Write to `.claude/settings.json\\ud800/../settings.json`."""
    proc = _hook(repo, "PreToolUse", _escaped(_event(repo, "PreToolUse", tool_name="Write", tool_input={
        "file_path": ".claude/settings.json\ud800/../settings.json", "content": "{}"})))
    ans = answer_of(proc)["hookSpecificOutput"]
    assert ans["permissionDecision"] == "deny" and "[G01]" in ans["permissionDecisionReason"]
    assert [r["codes"] for r in _log(repo)] == [["G01"]]


def test_invalid_utf8_on_stdin_and_in_a_transcript(repo, tmp_path):
    transcript = tmp_path / "agent.jsonl"
    line = json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test --workspace \udcff"}}]}},
        ensure_ascii=False)
    transcript.write_bytes(line.encode("utf-8", "surrogatepass") + b"\n\xff\xfe not utf-8 \x80\n")
    for event, fields in [
        ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "echo \udcff\udcfe > out.txt"}}),
        ("SubagentStop", {"agent_id": "a1", "agent_type": "implementer", "agent_transcript_path": str(transcript),
                          "last_assistant_message": "done \ud83d", "stop_hook_active": False}),
        ("Stop", {"last_assistant_message": "bye \udc00", "stop_hook_active": False}),
        ("UserPromptSubmit", {"prompt": "run \udfff"}),
    ]:
        for encode in (_escaped, _raw):
            answer_of(_hook(repo, event, encode(_event(repo, event, **fields))))


def test_the_answer_is_ascii_json(repo):
    proc = _hook(repo, "PreToolUse", _escaped(_event(repo, "PreToolUse", tool_name="Bash", tool_input={
        "command": "cargo test --workspace -- 群れ"})))
    proc.stdout.decode("ascii")
    assert "群れ" in answer_of(proc)["hookSpecificOutput"]["permissionDecisionReason"]


def test_an_answer_that_cannot_be_written_refuses_with_exit_2(repo):
    """stdout closed: the refusal goes to stderr with exit 2, never exit 0 with nothing said."""
    stdin = _escaped(_event(repo, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"}))
    r, w = os.pipe()
    os.close(r)  # the reader is gone: the write fails with EPIPE
    try:
        proc = subprocess.run([SWARMGATE, "hook", "PreToolUse"], input=stdin, stdout=w, stderr=subprocess.PIPE,
                              cwd=repo, env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}, timeout=60)
    finally:
        os.close(w)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert "could not write the hook answer" in err and "Traceback" not in err


# arbitrary text with lone surrogates mixed in, in every field a guard reads
_chunks = st.one_of(st.text(max_size=12), st.sampled_from(LONE), st.integers(0xD800, 0xDFFF).map(chr),
                    st.sampled_from([" ", "/", "..", ".claude/settings.json", "cargo test --workspace", ";", "'",
                                     "\"", "\\", "$(", "`", "\n"]))
nasty = st.lists(_chunks, max_size=8).map("".join)


@st.composite
def events(draw):
    s = draw(nasty)
    kind = draw(st.sampled_from(["bash", "write", "agent", "send", "subagent-stop", "stop", "prompt", "key"]))
    if kind == "bash":
        return "PreToolUse", {"tool_name": draw(st.sampled_from(["Bash", "Monitor"])), "tool_input": {"command": s}}
    if kind == "write":
        return "PreToolUse", {"tool_name": draw(st.sampled_from(["Write", "Edit", "NotebookEdit"])),
                              "tool_input": {"file_path": s, "notebook_path": s, "content": s}}
    if kind == "agent":
        return "PreToolUse", {"tool_name": "Agent", "tool_input": {"prompt": s, "subagent_type": s[:20],
                                                                   "description": s}}
    if kind == "send":
        return "PreToolUse", {"tool_name": "SendMessage", "tool_input": {"to": s, "message": s}}
    if kind == "subagent-stop":
        return "SubagentStop", {"agent_id": s[:8] or "a", "agent_type": s, "last_assistant_message": s,
                                "agent_transcript_path": s, "stop_hook_active": False}
    if kind == "stop":
        return "Stop", {"last_assistant_message": s, "stop_hook_active": False}
    if kind == "prompt":
        return "UserPromptSubmit", {"prompt": s}
    return "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls", s: s}, s: s}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events(), st.booleans())
def test_any_escaped_or_raw_string_gets_one_json_answer(repo, ev, raw):
    event, fields = ev
    payload = _event(repo, event, **fields)
    ans = answer_of(_hook(repo, event, (_raw if raw else _escaped)(payload)))
    if event == "PreToolUse":
        assert ans.get("hookSpecificOutput", {}).get("hookEventName") in (None, "PreToolUse")
