"""The string-literal lexer of interpreter code (hooks/code_literals.py)."""
from __future__ import annotations

from swarmgate.hooks.code_literals import literal_flags, literal_spans, string_literals


def test_spans_give_each_literal_with_its_offsets():
    code = 'os.system("rm -rf x"); y = \'a\\tb\''
    got = list(literal_spans(code))
    assert [lit for lit, _, _ in got] == ["rm -rf x", "a\tb"]
    lit, start, end = got[0]
    assert code[start:end] == '"rm -rf x"'


def test_raw_strings_keep_their_backslashes_and_triple_quotes_are_one_literal():
    assert [lit for lit, _, _ in literal_spans(r'r"\d+" + "\x41"')] == [r"\d+", "A"]
    assert [lit for lit, _, _ in literal_spans('"""a "b" c"""')] == ['a "b" c']


def test_comments_hold_no_literals():
    assert [lit for lit, _, _ in literal_spans('x = 1  # it\'s "quoted"\ny = "real"')] == ["real"]


def test_concatenation_is_joined_and_list_neighbours_are_marked():
    assert string_literals('"rm " + "-rf " . "x"') == [("rm -rf x", False)]
    assert string_literals('["rm", "-rf", "x"]') == [("rm", False), ("-rf", True), ("x", True)]
    assert string_literals('a = "x"; b = "y"') == [("x", False), ("y", False)]


def test_a_literal_only_printed_is_flagged_and_one_piped_is_not():
    assert dict(literal_flags('print("rm -rf docs")')) == {"rm -rf docs": True}
    assert dict(literal_flags('os.system("rm -rf docs")')) == {"rm -rf docs": False}
    assert dict(literal_flags('print "rm -rf docs" | sh')) == {"rm -rf docs": False}
