"""The config's TOML subset reader (swarmgate/config_toml.py) against tomllib: whatever it accepts
it reads exactly as tomllib does (values and types), and it accepts nothing tomllib rejects."""
from __future__ import annotations

import os
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmgate import config_toml as C

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def typed(v):
    """A value with its types spelled out (True == 1 and 1 == 1.0 in Python, not in TOML)."""
    if isinstance(v, dict):
        return ("dict", sorted((k, typed(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("list", [typed(x) for x in v])
    return (type(v).__name__, v)


def agree(text: str) -> bool:
    """True when the subset reader read ``text``; asserts it read it as tomllib does."""
    try:
        mine = C.loads(text)
    except C.Unsupported:
        return False
    theirs = tomllib.loads(text)  # raises if the reader accepted invalid TOML: a failure
    assert typed(mine) == typed(theirs), text
    return True


def test_the_shipped_config_is_in_the_subset():
    with open(os.path.join(ROOT, "rules", "swarmgate.toml"), encoding="utf-8") as f:
        assert agree(f.read())


@pytest.mark.parametrize("text", [
    "", "# only a comment\n", "a = 1", "a = -0\nb = +7\nc = 0.25\nd = -3.5\n", "a = true\nb = false\n",
    'a = "x \\" \\\\ \\t \\u00e9 \\U0001F600"\n', "a = 'C:\\\\path'\n", "a = [ ]\nb = [1, 'x', [true, 2.5],]\n",
    'a = [\n  "x",  # one\n  # between\n  "y",\n]\n', "[t]\n[u.v]\nw = 1\n[u.x]\n", "[[s]]\nn = 1\n[[s]]\nn = 2\n",
    "a = 1\r\nb = 2  # c\r\n", "[write]\ntool-implementer = ['x/**']\ngeneral_purpose = []\n",
])
def test_plain_texts_are_read_as_tomllib_reads_them(text):
    assert agree(text)


@pytest.mark.parametrize("text", [
    "a = 1\na = 2\n",                       # redefined key
    "[t]\n[t]\n",                           # table twice
    "a = 1\n[a]\n", "[a]\n[[a]]\n", "a = []\n[[a]]\n",
    "a = 1 2\n", "a = 'x\n", 'a = "\\q"\n', 'a = "\\ud800"\n', "a = 01\n", "a = 1.\n", "a = .5\n",
    "a = 1_000\n", "a = 1e3\n", "a = 0x1F\n", "a = inf\n", "a = truex\n", "= 1\n", "a\n", "[ a ]\n", "[a]]\n",
    "a = \"tab\tok but bell \x07\"\n", "# bell \x07\n", "a = 1 # cr\r alone\n", "\ufeffa = 1\n",
    "a = 1\n\r", "# c\r", "a = 1\n  \r",
])
def test_anything_else_is_left_to_tomllib(text):
    assert not agree(text)


@pytest.mark.parametrize("text", [
    "a = 1979-05-27\n", "a = {x = 1}\n", 'a = """multi"""\n', "'quoted' = 1\n", "a.b = 1\n", "[a.b]\n[a]\n",
    "[[a]]\n[a.b]\n", "a = nan\n",
])
def test_valid_toml_outside_the_subset_falls_back(text):
    tomllib.loads(text)  # valid
    assert not agree(text)


# a grammar around the subset, with pieces from outside it and raw noise mixed in
_key = st.sampled_from(["a", "b", "B01", "tool-implementer", "x_y", "a.b", "'q'", "", "1", "ü"])
_scalar = st.one_of(
    st.integers(-10**20, 10**20).map(str), st.sampled_from(["true", "false", "0", "-0", "+1", "01", "1_0", "1e2",
                                                            "0.5", "-2.25", "1.", "inf", "1979-05-27"]),
    st.text(max_size=8).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.text(max_size=8).map(lambda s: "'" + s + "'"),
    st.sampled_from(['"\\u00e9"', '"\\n"', '"\\x"', "'a'b'", '"""x"""', "{x = 1}", '"\\U0001F600"']))
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3).map(
    lambda xs: "[" + ", ".join(xs) + "]"), max_leaves=4)
_ws = st.sampled_from(["", " ", "  ", "\t"])
_comment = st.sampled_from(["", "  # note", " #", "# x\x07"])
_line = st.one_of(
    st.tuples(_key, _ws, _value, _comment).map(lambda t: f"{t[0]}{t[1]}={t[1]}{t[2]}{t[3]}"),
    st.lists(_key, min_size=1, max_size=3).map(lambda ks: "[" + ".".join(ks) + "]"),
    st.lists(_key, min_size=1, max_size=2).map(lambda ks: "[[" + ".".join(ks) + "]]"),
    _comment, st.text(max_size=6))
_doc = st.tuples(st.lists(_line, max_size=8), st.sampled_from(["\n", "\r\n"])).map(lambda t: t[1].join(t[0]))


@settings(max_examples=800, deadline=None)
@given(_doc)
def test_the_reader_never_disagrees_with_tomllib(text):
    agree(text)


def _character_reader_only(text: str):
    saved = C._simple_line, C._plain_lines
    C._simple_line = lambda body: None
    C._plain_lines = lambda text, root, defined, headers: (0, root)
    try:
        return C.loads(text)
    except C.Unsupported as e:
        return f"unsupported: {e}"
    finally:
        C._simple_line, C._plain_lines = saved


def _both_fast_paths(text: str):
    try:
        return C.loads(text)
    except C.Unsupported as e:
        return f"unsupported: {e}"


@settings(max_examples=800, deadline=None)
@given(_doc)
def test_the_line_fast_path_answers_as_the_character_reader(text):
    assert typed(_both_fast_paths(text)) == typed(_character_reader_only(text)), text


@pytest.mark.parametrize("text", [
    "a = 01\n", "a = 0\n", "a = 12 # x\n", "a = 1,\n", "a = 1]\n", "a = true#x\n", "a = truex\n", "a = false \n",
    'a = "x"y\n', 'a = "x" # \x07\n', 'a = "x\\"y"\n', 'a = ["x", "y",]\n', 'a = ["x" "y"]\n', "a = [,]\n",
    'a = ["x"\n', "a = [1, [2]]\n", "a b = 1\n", "a = \n", "=1\n", "a = -1\n", "a = 1.5\n", 'a = "\u00a0"\n',
    "a = 1\na = 2\n", "[t]\na = [ ]  # c\n",
    '[a]\n[a]\n', "[a]]\n", "[]\n", "[-]\n", "[a.-]\n", "[a..b]\n", "[.a]\n", "[a] # c\n", "[a] #\tc\n",
    "[a] x\n", "[a.b]\n[a]\n", "a = 1\n[a]\n", "[[a]]\nb = 1\n", "[ a ]\n", "[a]\n  b = 1\n\t# c\n",
    'a = ["x]", "y"]\n', 'a = ["x", "]"]\n', 'a = ["x" , "y" ,]  # c\n', 'a = ["x""y"]\n', 'a = ["x",,"y"]\n',
    'a = [ "x", ]\n', 'a = ["#"] # ]\n', 'a = ["x"] "y"\n', 'a = [ # ]\n', "a = ['x']\n", 'a = ["x\ty"]\n',
    'a = ["x\\"y"]\n', 'a = ["x"]]\n', 'a = [1, "x"]\n', 'a = ""\n', 'a = "x=y" # "z"\n', 'a = "x"\tb\n',
    "- = 1\n", "a- = true\n", "a = 0 # zero\n", "a = 007\n", "a = \u0663\n", "a = \u00b2\n", "# c\x7f\n",
    "\x0c\n", "a = 1\nb = [\n  'x',\n]\nc = 2\n", "a = 1\nb = 1979-05-27\n[t]\nc = 2\n",
])
def test_the_line_fast_path_on_edge_lines(text):
    assert typed(_both_fast_paths(text)) == typed(_character_reader_only(text)), text


def test_the_shipped_config_is_read_by_the_line_loop_alone():
    """The hook reads the config on every call: no line of the shipped one needs the character reader."""
    with open(os.path.join(ROOT, "rules", "swarmgate.toml"), encoding="utf-8") as f:
        text = f.read()
    root: dict = {}
    assert C._plain_lines(text, root, set(), []) is None
    assert typed(root) == typed(tomllib.loads(text))


def test_every_key_line_of_the_shipped_config_takes_the_fast_path():
    """The hook reads the config on every call: its lines are the shapes ``_simple_line`` reads."""
    with open(os.path.join(ROOT, "rules", "swarmgate.toml"), encoding="utf-8") as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith(("#", "["))]
    assert lines and [ln for ln in lines if C._simple_line(ln) is None] == []
