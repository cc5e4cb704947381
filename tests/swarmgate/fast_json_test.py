"""fast_json gives exactly json's results and json's errors; its pure-Python reader and writer
(what the hook uses while `_json` is not loaded) are held to json directly."""
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


# --- the pure-Python reader and writer, against json ---------------------------------------------

# every character json treats specially, surrogates (lone and paired), the reader's stand-ins
CHARS = st.characters(exclude_categories=()) | st.sampled_from(
    list('"\\/\b\f\n\r\t\x00\x1f\x7f u0123456789abcdefABCDEF') + ["\ud800", "\udbff", "\udc00", "\udfff",
                                                                    "\U0001f600", "\ufdd0", "\ufdd1", "\u2028"])
TEXT = st.text(CHARS, max_size=12)
FLOATS = st.floats() | st.sampled_from([0.0, -0.0, 1e400, -1e400, 1e-320, 5e-324, 1.7976931348623157e308, 0.1])
INTS = st.integers() | st.integers(min_value=-(10 ** 80), max_value=10 ** 80)
SCALARS = st.none() | st.booleans() | INTS | FLOATS | TEXT
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                      max_leaves=25)
FORMATS = st.fixed_dictionaries({"ensure_ascii": st.booleans(), "indent": st.none() | st.sampled_from([0, 2, "\t"]),
                                 "separators": st.sampled_from([None, (",", ":"), (" , ", " : "), (",\n", ":\t")])})


def same(a, b) -> bool:
    """Equal values of the same types, floats by repr (nan, -0.0), dicts in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def outcome(fn, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception's type and message
        return "error", type(e), str(e)


def same_outcome(got, want) -> bool:
    if got[0] == want[0] == "ok":
        return same(got[1], want[1])
    return got == want


def left_to_c(text: str) -> bool:
    """What the reader leaves to the C scanner: deep nesting, its stand-ins for escaped backslashes
    and quotes, escapes in U+D000..U+DFFF (a surrogate pair is one character to json)"""
    return (text.count("[") + text.count("{") > fast_json.MAX_DEPTH or fast_json._B in text or fast_json._Q in text
            or "\\ud" in text.replace("\\\\", "").lower())


def reads_as_json(text: str) -> None:
    """The reader returns json.loads's value, or raises one of _NOT_READ where json raises."""
    want = outcome(json.loads, text)
    try:
        got = fast_json._read(text)
    except fast_json._NOT_READ:
        got = None
        assert want[0] == "error" or left_to_c(text), (text, want)
    else:
        assert want[0] == "ok" and same(got, want[1]), (text, got, want)
    assert same_outcome(outcome(fast_json.loads, text), want), text


@settings(max_examples=300, deadline=None)
@given(VALUES, FORMATS, st.sampled_from(["", " ", "\n", " \t\r\n"]))
def test_the_reader_reads_what_json_wrote(value, fmt, ws):
    text = ws + json.dumps(value, **fmt) + ws
    if left_to_c(text):
        assert same_outcome(outcome(fast_json.loads, text), outcome(json.loads, text))
        with pytest.raises(fast_json._Unread):
            fast_json._read(text)
    else:
        assert same(fast_json._read(text), json.loads(text))


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from('{}[]:,"\\ -+.0123456789eEunlratfsINaiy\t\n\rx\x00\x1f\ud800u'), max_size=30))
def test_the_reader_on_json_shaped_noise(text):
    reads_as_json(text)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.data())
def test_the_reader_on_json_with_one_character_changed(value, data):
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    at = data.draw(st.integers(0, len(text)))
    how = data.draw(st.sampled_from(["drop", "insert", "replace"]))
    ch = data.draw(st.sampled_from(list('"\\{}[],: u0e-.\x01\n') + ["\ud800"]))
    text = {"drop": text[:at] + text[at + 1:], "insert": text[:at] + ch + text[at:],
            "replace": text[:at] + ch + text[at + 1:]}[how]
    reads_as_json(text)


EDGES = [
    '"\\ud800"', '"\\udc00"', '"\\ud800\\udc00"', '"\\udbff\\udfff"', '"\\ud800\\ud800"', '"\\udc00\\ud800"',
    '"\\ud800\\n"', '"\\ud800\\\\"', '"\\ud800\\\\u0041"', '"\\ud800x\\udc00"', '"\\ud800\\udc00\\udc00"',
    '"\\ud800\\u00"', '"\\ud800\\uzzzz"', '"\\u00e9\\u0000\\u001f\\u005c\\u0022"', '"\\uD83D\\uDE00"', '"\\u+123"',
    '"\\u 123"', '"\\u1_23"', '"\\u12"', '"\\x41"', '"\\\'"', '"\\\\\\""', '"\\\\\\\\"', '"a\\\\"', '"a\\"', '"\\/"',
    '"\ud800"', '"\U0001f600"', '"\x7f\u2028\xa0"', '"\ufdd0"', '"\\\\\ufdd1"', "\ufdd0", '"é\\u00e9"',
    "-0", "-0.0", "0", "1E+2", "1e-2", "1E2", "1.5e3", "-1e400", "1e400", "1.", "1.e5", ".5", "01", "-", "--1", "+1",
    "1e", "1e+", "1E-x", "0x10", "1" * 4300, "1" * 4301, "-" + "9" * 400 + ".5e-400",
    "NaN", "-NaN", "Infinity", "-Infinity", "infinity", "nan", "[NaN,-Infinity]", "Infinityx", "-Inf",
    "true", "false", "null", "tru", "nul", "True", "None",
    "", " ", "\t\n\r ", "\x0b1", "1\x0c", " [1] ", "[1] x", "[1]]", '{"a":1}{', "\ufeff[]", "[1,]", "[,1]", '{"a":1,}',
    '{"a" 1}', '{a:1}', "{'a':1}", '{"a":1,"a":2,"b":3,"a":4}', '{"":[]}', "[]", "{}", "[ ]", "{ }", "[[[[]]]]",
    '{"k" : [ 1 , { "x" : null } , [ ] ] }', '["a"\n,\t"b"\r]',
] + [f'"{chr(n)}"' for n in range(0x21)] + [f'"\\{chr(n)}"' for n in range(0x20, 0x7f)]


@pytest.mark.parametrize("text", EDGES)
def test_the_reader_on_edge_cases(text):
    reads_as_json(text)


@pytest.mark.parametrize("depth", [1, 50, fast_json.MAX_DEPTH, fast_json.MAX_DEPTH + 1, 3000])
def test_deep_nesting(depth):
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth, "[" * depth):
        reads_as_json(text)


@settings(max_examples=300, deadline=None)
@given(VALUES | st.tuples(VALUES, VALUES), st.booleans(), st.booleans(),
       st.sampled_from([(", ", ": "), (",", ":"), (" ,", " : ")]))
def test_the_writer_writes_what_json_writes(value, ascii_, sort, seps):
    want = outcome(json.dumps, value, ensure_ascii=ascii_, sort_keys=sort, separators=seps)
    try:
        got = ("ok", fast_json._write(value, ascii_, seps, sort))
    except Exception:  # noqa: BLE001 - where json raises, the writer leaves it to the C encoder
        got = None
    if got is not None or want[0] == "ok":
        assert got == want
    assert outcome(fast_json.dumps, value, ensure_ascii=ascii_, sort_keys=sort, separators=seps) == want


class Text(str):
    pass


class Number(int):
    def __repr__(self):
        return "not this"


class Real(float):
    def __repr__(self):
        return "not this"


def _circular():
    a: list = [1]
    a.append(a)
    return a


def _circular_dict():
    d: dict = {}
    d["d"] = [d]
    return d


@pytest.mark.parametrize("value", [
    {1: "a", 2.5: "b", False: "c", None: "d", float("nan"): "e", float("inf"): "f", -1.5: "g", 10 ** 30: "h"},
    {True: 1}, {-0.0: 1}, {float("-inf"): [float("nan")]},
    {"b": 1, "a": [1, (2, 3)], "c": {"z": {}, "y": []}}, [Text("x\"y"), Number(7), Real(0.5), True, False, None],
    "\ud800\udc00\U0001f600\x7f\x00\x1f\u2028\"\\/", ["\ufdd0", "\\u0041"], {Text("k"): Text("v")},
    [1e400, -1e400, float("nan"), 1e-320, -0.0, 1e16, 1.0, 123456789.125],
    {"a": object()}, [{1, 2}], {(1, 2): 3}, {"a": 1, 2: 3}, _circular(), _circular_dict(), b"bytes", [..., 1],
    {1: 1, "1": 2}, [[]] * 3,
])
def test_the_writer_on_edge_cases(value):
    for ascii_ in (True, False):
        for sort in (True, False):
            for seps in ((", ", ": "), (",", ":")):
                want = outcome(json.dumps, value, ensure_ascii=ascii_, sort_keys=sort, separators=seps)
                assert outcome(fast_json.dumps, value, ensure_ascii=ascii_, sort_keys=sort,
                               separators=seps) == want, (ascii_, sort, seps)


@pytest.mark.parametrize("text", ["Hello", "", "a" * 10000, "é" * 4000, "\U0001f600" * 2000, "\n\"\\\x7f" * 3000,
                                  "\x00\x1f" * 5000])
def test_the_writers_string_escapes_at_length(text):
    """Long strings go through str.replace, non-ASCII ones for ensure_ascii through str.translate,
    up to a length (then the C encoder); the translate table grows only so far."""
    for ascii_ in (True, False):
        want = json.dumps([text, {text: text}], ensure_ascii=ascii_, separators=(",", ":"))
        if ascii_ and not text.isascii() or ascii_ and "\x7f" in text:
            if len(text) > fast_json.DUMPS_PURE_ESCAPED:
                with pytest.raises(fast_json._Unread):
                    fast_json._write([text, {text: text}], ascii_, (",", ":"), False)
                continue
        assert fast_json._write([text, {text: text}], ascii_, (",", ":"), False) == want
    many = "".join(map(chr, range(0x4e00, 0x4e00 + 6000)))
    for at in range(0, 6000, fast_json.DUMPS_PURE_ESCAPED):
        part = many[at:at + fast_json.DUMPS_PURE_ESCAPED]
        assert fast_json._write(part, True, (",", ":"), False) == json.dumps(part)
    assert len(fast_json._ASCII) <= 4096


def test_the_writer_leaves_many_values_to_the_c_encoder():
    few, many = list(range(fast_json.DUMPS_PURE_PIECES // 2 - 1)), list(range(fast_json.DUMPS_PURE_PIECES))
    assert fast_json._write(few, True, (",", ":"), False) == json.dumps(few, separators=(",", ":"))
    for value in (many, {"a": many}, [dict.fromkeys(map(str, many))]):
        with pytest.raises(fast_json._Unread):
            fast_json._write(value, True, (",", ":"), False)
        assert fast_json.dumps(value) == json.dumps(value)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASH_PAYLOAD = json.dumps({
    "session_id": "9b2f6c1e-4a7d-4f3e-9c2b-8e1d5a6f7b30", "transcript_path": "/root/.claude/projects/x.jsonl",
    "cwd": "/work/repo", "hook_event_name": "PreToolUse", "tool_name": "Bash",
    "tool_input": {"command": "ls -la \"src dir\" | grep 'caf\u00e9\\\\'", "description": "List"}},
    separators=(",", ":"), ensure_ascii=False)


def _in_a_bare_interpreter(code: str, arg: str) -> list[str]:
    p = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {ROOT!r})\n" + code, arg],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split("\n")


def test_a_small_document_does_not_load_the_c_accelerator():
    out = _in_a_bare_interpreter(
        "from swarmgate import fast_json\n"
        "v = fast_json.loads(sys.argv[1])\n"
        "print(fast_json.dumps(v, ensure_ascii=True)); print(fast_json.dumps(v, separators=(',', ':'), "
        "ensure_ascii=False, sort_keys=True).encode('unicode_escape').decode())\n"
        "print('_json' in sys.modules, 'json' in sys.modules)", BASH_PAYLOAD)
    value = json.loads(BASH_PAYLOAD)
    assert out[0] == json.dumps(value)
    assert out[1] == json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode(
        "unicode_escape").decode()
    assert out[2] == "False False"


def test_a_document_of_many_values_goes_to_the_c_scanner():
    many = json.dumps(list(range(fast_json.LOADS_PURE_COMMAS + 2)))   # one comma too many
    assert len(many) < fast_json.LOADS_PURE_MAX
    out = _in_a_bare_interpreter(
        "from swarmgate import fast_json\n"
        "print(fast_json.loads(sys.argv[1])[-1], '_json' in sys.modules)\n", many)
    assert out[0] == f"{fast_json.LOADS_PURE_COMMAS + 1} True"


def test_a_large_document_goes_to_the_c_scanner_and_then_everything_does():
    big = json.dumps({"tool_input": {"content": "x = '\\\\'\n" * (fast_json.LOADS_PURE_MAX // 8)}})
    assert len(big) > fast_json.LOADS_PURE_MAX
    out = _in_a_bare_interpreter(
        "from swarmgate import fast_json\n"
        "v = fast_json.loads(sys.argv[1]); print('_json' in sys.modules, fast_json._json is not None)\n"
        "print(fast_json.loads('[1, \"a\"]'), fast_json.dumps(v) == sys.argv[1])", big)
    assert out[:2] == ["True True", "[1, 'a'] True"]


def test_an_error_gives_jsons_message_from_a_bare_interpreter():
    out = _in_a_bare_interpreter(
        "from swarmgate import fast_json\n"
        "try:\n    fast_json.loads(sys.argv[1])\nexcept ValueError as e:\n    print(type(e).__name__, e)",
        '{"a": [1, 2,]}')
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads('{"a": [1, 2,]}')
    assert out[0] == f"JSONDecodeError {want.value}"
