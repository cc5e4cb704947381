"""Words as the bash reader expands them (hooks/bash_words.py): ${...} operators of a known variable.

Found running the exec corpus (parameter-expansion-operators): `X=MAKE; ${X,,} build` was refused as a
command name that cannot be read, and `X=nmake; ${X#n} check-full` was refused for the same reason rather
than read as the heavy run it is.
"""
from __future__ import annotations

import pytest

from swarmgate.hooks.bash_words import param_value

V = {"X": "CarGo", "M": "make-it", "P": "a/b/a/b", "E": ""}


@pytest.mark.parametrize("inner,value", [
    ("X,,", "cargo"), ("X^^", "CARGO"), ("X,", "carGo"), ("X^", "CarGo"),
    ("M#ma", "ke-it"), ("M##ma", "ke-it"), ("M#zz", "make-it"), ("M%-it", "make"), ("M%%-it", "make"),
    ("M%zz", "make-it"), ("P/a/c", "c/b/a/b"), ("P//a/c", "c/b/c/b"), ("P/#a/c", "c/b/a/b"),
    ("P/%b/c", "a/b/a/c"), ("P/#z/c", "a/b/a/b"), ("P//a", "/b//b"), ("M:2", "ke-it"), ("M:0:4", "make"),
    ("E,,", ""), ("X:-y", "CarGo"), ("Q:-cargo", "cargo"),
])
def test_an_operator_of_a_known_variable_is_read(inner, value):
    assert param_value(inner, V) == value


@pytest.mark.parametrize("inner", [
    "Q,,", "M#m*", "M%%-*", "P/[ab]/c", "M:$n", "M: -2", "M:x", "M/$a/b", "M@Q", "M:+y", "#M", "!M",
])
def test_an_unknown_variable_glob_or_computed_word_stays_unknown(inner):
    assert param_value(inner, {**V, "UNK": None}) is None
    assert param_value("UNK,,", {"UNK": None}) is None
