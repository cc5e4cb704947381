"""Whatever arrives on stdin, the engine answers with one JSON object and never raises."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmgate.hook_engine import answer

EVENTS = ["PreToolUse", "PostToolUse", "SessionStart", "SubagentStart", "SubagentStop", "Stop", "Bogus"]
TOOLS = ["Bash", "Monitor", "Write", "Edit", "Agent", "Task", "SendMessage", "CronCreate", "Read"]
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3),
                           max_leaves=10)
payloads = st.fixed_dictionaries(
    {"session_id": st.text(max_size=10) | st.integers(), "tool_name": st.sampled_from(TOOLS) | json_values},
    optional={"tool_input": st.dictionaries(st.sampled_from(["command", "file_path", "prompt", "subagent_type",
                                                             "notebook_path", "to", "cron"]),
                                            st.text(max_size=40) | json_values, max_size=4) | json_values,
              "agent_id": st.text(max_size=6) | json_values, "agent_type": st.text(max_size=12) | json_values,
              "stop_hook_active": json_values, "transcript_path": st.text(max_size=12) | json_values})


def _check(event, text):
    out, code = answer(event, text)
    assert code == 0
    ans = json.loads(out)
    assert isinstance(ans, dict)
    if event in ("Stop", "SubagentStop"):
        assert ans.get("decision") in (None, "block")
    return ans


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(EVENTS), payloads)
def test_any_payload_gets_an_answer(repo, monkeypatch, event, payload):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))  # random `cwd`s must not write outside the repo
    # A01 on an Agent/Task PostToolUse starts a detached swarm-watch that lives as long as this
    # process's parent; as in a self-test cell, run its one tick in the foreground instead
    monkeypatch.setenv("SWARMGATE_SELFTEST_CASE", "1")
    payload = dict(payload, cwd=str(repo), hook_event_name=event)
    _check(event, json.dumps(payload))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(EVENTS), st.text(max_size=60) | json_values.map(json.dumps))
def test_any_text_gets_an_answer(repo, monkeypatch, event, text):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    monkeypatch.setenv("SWARMGATE_SELFTEST_CASE", "1")  # no detached swarm-watch (see above)
    monkeypatch.chdir(repo)
    ans = _check(event, text)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if event == "PreToolUse" and not (isinstance(parsed, dict) and isinstance(parsed.get("tool_name"), str)):
        assert ans["hookSpecificOutput"]["permissionDecision"] == "deny"
