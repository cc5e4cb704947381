"""Every read a hook makes is bounded (issue 11): what is at a path (a FIFO, a device, a directory,
a huge file, a planted symlink) is refused at once instead of holding the hook past its timeout."""
from __future__ import annotations

import json
import os
import threading

import pytest

from swarmgate import bounded_read as B
from swarmgate import statefile
from swarmgate.hooks import session_state
from tests.swarmgate.conftest import answer_of, payload, run_hook


def _finishes(fn, limit: float = 20.0):
    """Run ``fn`` in a thread; fail (instead of hanging the suite) when it does not return.

    A hang detector, not a speed check: the bound is far above any honest read."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"{fn} blocked for more than {limit} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "fifo"
    os.mkfifo(p)
    return p


def test_a_fifo_with_no_writer_is_refused_at_once(fifo):
    with pytest.raises(B.FileRefused) as e:
        _finishes(lambda: B.read_bytes(str(fifo), 1024))
    assert "a FIFO, not a regular file" in e.value.strerror and isinstance(e.value, OSError)


@pytest.mark.parametrize("target, kind", [("/dev/zero", "a character device"), ("/", "a directory")])
def test_devices_and_directories_are_refused_even_through_a_symlink(tmp_path, target, kind):
    link = tmp_path / "swarmgate.toml"
    os.symlink(target, link)
    with pytest.raises(B.FileRefused) as e:
        _finishes(lambda: B.read_bytes(str(link), 1024))
    assert kind in e.value.strerror


def test_size_cap_truncate_and_symlink_refusal(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(B.FileRefused, match="over the 4096-byte limit"):
        B.read_bytes(str(big), 4096)
    assert B.read_bytes(str(big), 4096, truncate=True) == b"x" * 4096
    assert B.read_bytes(str(big), 5000) == b"x" * 5000
    link = tmp_path / "link"
    os.symlink(big, link)
    assert B.read_bytes(str(link), 5000) == b"x" * 5000  # followed by default (a user's symlinked config)
    with pytest.raises(B.FileRefused, match="symlink"):
        B.read_bytes(str(link), 5000, follow=False)
    with pytest.raises(FileNotFoundError):
        B.read_bytes(str(tmp_path / "absent"), 10)


def test_a_deadline_already_past_stops_the_read(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"data")
    with pytest.raises(B.FileRefused, match="took longer"):
        B.read_bytes(str(f), 100, deadline=0.0)


def test_state_files_refuse_a_planted_fifo(fifo):
    with pytest.raises(statefile.StateError, match="a FIFO"):
        _finishes(lambda: statefile.read_text(fifo))
    assert statefile.read_text(fifo.parent / "absent") is None


def _hook(repo, event, data: dict):
    return run_hook([event], json.dumps(data), cwd=repo, env={"CLAUDE_PROJECT_DIR": str(repo)}, timeout=30)


def test_a_config_symlinked_to_dev_zero_is_a_config_error_not_a_hang(repo):
    (repo / ".claude").mkdir()
    os.symlink("/dev/zero", repo / ".claude" / "swarmgate.toml")
    ans = answer_of(run_hook(["PreToolUse"], payload(repo, command="ls"), cwd=repo, timeout=30))
    reason = ans["hookSpecificOutput"]["permissionDecisionReason"]
    assert ans["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "swarmgate.toml: cannot read: it is a character device" in reason


def test_a_config_over_the_limit_is_refused_by_name(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text("# padding\n" * 200_000)
    ans = answer_of(run_hook(["PreToolUse"], payload(repo, command="ls"), cwd=repo, timeout=30))
    assert "over the 1048576-byte limit" in ans["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_fifo_transcript_is_reported_unreadable_at_once(repo, fifo):
    data = {"session_id": "s", "transcript_path": str(fifo), "cwd": str(repo), "hook_event_name": "SubagentStop",
            "agent_id": "a1", "agent_type": "implementer", "agent_transcript_path": str(fifo),
            "last_assistant_message": "done", "stop_hook_active": False}
    ans = answer_of(_hook(repo, "SubagentStop", data))
    text = json.dumps(ans)
    assert "could not read the transcript" in text and "a FIFO" in text, text
    start = {"session_id": "s", "transcript_path": str(fifo), "cwd": str(repo), "hook_event_name": "SubagentStart",
             "agent_id": "a1", "agent_type": "implementer"}
    answer_of(_hook(repo, "SubagentStart", start))


def test_a_fifo_run_as_a_script_or_makefile_is_answered(repo):
    os.mkfifo(repo / "x.sh")
    os.mkfifo(repo / "Makefile")
    for cmd in ("bash ./x.sh", "./x.sh", "source x.sh", "make"):
        answer_of(run_hook(["PreToolUse"], payload(repo, command=cmd), cwd=repo, timeout=30))


def test_a_fifo_planted_as_session_state_is_answered(repo):
    state = str(session_state.state_path("s"))  # under this test's SWARMGATE_STATE_DIR
    os.makedirs(os.path.dirname(state), exist_ok=True)
    os.mkfifo(state)
    data = {"session_id": "s", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
            "tool_name": "Agent", "tool_input": {"subagent_type": "clerk", "prompt": "x", "description": "x"}}
    answer_of(_hook(repo, "PreToolUse", data))
