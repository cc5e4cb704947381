"""fast_json gives exactly json's results and json's errors."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmgate import fast_json

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars,
                      lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
                      max_leaves=30)


@settings(max_examples=120, deadline=None)
@given(values, st.booleans(), st.booleans(), st.sampled_from([(", ", ": "), (",", ":")]))
def test_dumps_matches_json(value, ascii_, sort, seps):
    assert fast_json.dumps(value, ensure_ascii=ascii_, sort_keys=sort, separators=seps) == \
        json.dumps(value, ensure_ascii=ascii_, sort_keys=sort, separators=seps)


@settings(max_examples=120, deadline=None)
@given(values, st.sampled_from(["", " ", "\n", " \t\r\n"]))
def test_loads_matches_json(value, ws):
    text = ws + json.dumps(value) + ws
    assert fast_json.loads(text) == json.loads(text)


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=40))
def test_loads_on_any_text_behaves_like_json(text):
    try:
        want = ("ok", json.loads(text))
    except ValueError as e:
        want = ("error", type(e), str(e))
    try:
        got = ("ok", fast_json.loads(text))
    except ValueError as e:
        got = ("error", type(e), str(e))
    if want[0] == "ok" and isinstance(want[1], float) and math.isnan(want[1]):
        assert got[0] == "ok" and math.isnan(got[1])
    else:
        assert got == want


@pytest.mark.parametrize("text", ["", "   ", "{not json", "[1, 2", '{"a": 1} extra', "[1,]", '"\\x"', "\x00"])
def test_errors_are_jsons_own(text):
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        fast_json.loads(text)
    assert str(got.value) == str(want.value)


def test_constants_and_unserialisable():
    assert math.isinf(fast_json.loads("Infinity")) and math.isnan(fast_json.loads("[NaN]")[0])
    assert fast_json.dumps([float("inf")]) == json.dumps([float("inf")])
    with pytest.raises(TypeError) as e:
        fast_json.dumps({"a": object()})
    assert "not JSON serializable" in str(e.value)


def test_the_hook_does_not_import_the_json_package(tmp_path, repo):
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse",
                          "tool_name": "Write", "tool_input": {"file_path": str(repo / "a.txt"), "content": ""}})
    code = ("import sys; from swarmgate.cli import main; rc = main(['hook', 'PreToolUse']); "
            "sys.stderr.write('JSON ' + str('json' in sys.modules))")
    env = {**os.environ, "SWARMGATE_STATE_DIR": str(tmp_path / "st")}
    for _ in range(2):  # the first call writes the caches (json.dumps with indent is fine there)
        proc = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True,
                              cwd=repo, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}
    assert proc.stderr.rstrip().endswith("JSON False"), proc.stderr
