"""bashlex as the differential oracle of the lexical parser, over every corpus command.

The guards read every command with the lexical parser (hooks/bash_lexical.py: no bashlex import on
the hook's path). bashlex stays a dependency for this: every command of the corpus - the workarounds,
the benign controls and the real-world commands of tests/corpus/, and the heavy and benign entries
of tests/hooks/bash_corpus.py, each with the files it reads - is parsed by both. bashlex parses the text
itself (not only where the hook's "auto" mode would try it), its tree goes through the adapter and
the same walker, and both readings must find the same commands (words, how they were reached,
background, redirections, assignments) and the same unverifiable parts.

Where they differ, or bashlex cannot parse or be trusted with a text bash runs, the difference must
be one of KNOWN_BASHLEX_BUGS, each with what bashlex does wrong; anything else fails. A listed bug
that no corpus command shows any more fails too, so the list never outlives the bug.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from swarmgate.hooks import bash_parse, bash_walker, bashlex_adapter, bashlex_fast
from swarmgate.hooks.bash_results import Analysis
from swarmgate.hooks.bash_tree import analyze
from tests.hooks.bash_corpus import BENIGN, HEAVY
from tests.corpus import benign, counts, workarounds
from tests.corpus.corpus_test import prepare

# name -> (how the oracle's answer starts, a text the command holds or "", what bashlex gets wrong).
# "raise": bashlex raised; "refuse": the adapter refused its tree (swarmgate/hooks/bashlex_adapter.py
# checks bashlex's words against the text); "differ": both parsed, the readings differ.
KNOWN_BASHLEX_BUGS: dict[str, tuple[str, str, str]] = {
    "quoted here-document delimiter": (
        "raise ParsingError: here-document at line 0 delimited by end-of-file", "<<",
        "bashlex waits for the delimiter of <<'EOF' with its quotes and never finds it; bash strips them"),
    "arithmetic expansion": (
        "raise NotImplementedError: arithmetic expansion", "$((",
        "bashlex does not implement $(( )) (whose subscripts may run command substitutions)"),
    "arithmetic command": (
        "differ", "((",
        "bashlex reads the arithmetic command (( ... )) as two nested subshells running its text"),
    "time": ("raise NotImplementedError: type = {time command}", "time",
             "bashlex does not implement the `time` keyword"),
    "coproc": ("raise NotImplementedError: type = {coproc}", "coproc",
               "bashlex does not implement `coproc`"),
    "case patterns": ("raise NotImplementedError: type = {pattern}", "case",
                      "bashlex parses `case` but builds no node for its patterns"),
    "arithmetic for": ("raise ParsingError: unexpected token '('", "for ((",
                       "bashlex has no arithmetic for loop for (( ...; ...; ... ))"),
    "arrays": ("raise ParsingError: unexpected token '('", "=(",
               "bashlex has no array assignment NAME=(...)"),
    "[[ ]]": ("raise ParsingError: unexpected token", "[[",
              "bashlex has no [[ ]] conditional command"),
    "substitution in single quotes": (
        "refuse PositionMismatch: bashlex read a substitution inside single quotes", "'",
        "bashlex finds $( ) inside single quotes, where bash runs nothing"),
    "subscript assignment": (
        "refuse PositionMismatch: bashlex read NAME[i]=value as a command", "]=",
        "bashlex reads the assignment NAME[i]=value as a command named by its text"),
    "word text": (
        "refuse PositionMismatch: ", "\\",
        "bashlex's word differs from the text it spans where backslashes are involved: it drops backslashes "
        "bash keeps inside double quotes (\\n, \\s, \\( stay; only \\$ \\` \\\" \\\\ and backslash-newline "
        "are escapes there) and $'...' quoting in an assignment word"),
}

ENTRIES = ([(e.command, e) for e in workarounds.ENTRIES + benign.ENTRIES]
           + [(x["command"], None) for x in counts.real_world()]
           + [(e.command, e) for e in HEAVY + BENIGN])


def _view(an: Analysis) -> tuple:
    commands = [(c.words, c.via, c.background, [(r.op, r.target, r.fd) for r in c.redirects], c.assignments)
                for c in an.commands]
    return commands, sorted(u.reason for u in an.unverifiable)


def _oracle(text: str, cwd: str, bashlex) -> tuple[str, Analysis | None]:
    """("", the reading through bashlex's tree), or (what went wrong, None)."""
    try:
        trees = bashlex.parser.parse(text)
    except Exception as e:  # noqa: BLE001 - bashlex raises many kinds: each is an answer here
        return f"raise {type(e).__name__}: {e}", None
    try:
        seq = bashlex_adapter.convert(trees, text)
    except Exception as e:  # noqa: BLE001
        return f"refuse {type(e).__name__}: {e}", None
    an = Analysis()
    walker = bash_walker.Walker(an, cwd, 6, time.monotonic() + 10, 1 << 20)
    walker.source = text   # as bash_tree.analyze sets it
    walker.parser = "auto"   # nested texts (sh -c, scripts) through bashlex too, where it is trusted
    walker.walk(seq, bash_walker.Ctx())
    walker.finish(bash_walker.Ctx())
    return "", an


def _known(outcome: str, text: str) -> str | None:
    for name, (start, holds, _why) in KNOWN_BASHLEX_BUGS.items():
        if outcome.startswith(start) and holds in text:
            return name
    return None


def test_both_parsers_read_every_corpus_command_alike(tmp_path):
    bashlex = bashlex_fast.load()
    empty = tmp_path / "empty"
    empty.mkdir()
    unexplained, seen, agreed = [], set(), 0
    for i, (text, entry) in enumerate(ENTRIES):
        cwd = empty
        if entry is not None and (entry.files or getattr(entry, "git_init", False)):
            cwd = tmp_path / f"e{i}"
            cwd.mkdir()
            prepare(cwd, entry)
        bash_parse.clear_cache()
        lexical = analyze(text, cwd=str(cwd), parser="lexical", budget_s=10.0)
        assert lexical.parsed_by == "lexical"
        outcome, oracle = _oracle(text, str(cwd), bashlex)
        if oracle is not None:
            if _view(oracle) == _view(lexical):
                agreed += 1
                continue
            outcome = (f"differ\n    bashlex: {_view(oracle)}\n    lexical: {_view(lexical)}")
        bug = _known(outcome, text)
        if bug is None:
            unexplained.append(f"{text[:120]!r}: {outcome[:600]}")
        else:
            seen.add(bug)
    assert not unexplained, (f"{len(unexplained)} corpus commands read differently by bashlex and the lexical "
                             "parser, none a listed bashlex bug:\n" + "\n".join(unexplained[:20]))
    assert set(KNOWN_BASHLEX_BUGS) - seen == set(), \
        f"listed as bashlex bugs, but no corpus command shows them any more: {sorted(set(KNOWN_BASHLEX_BUGS) - seen)}"
    # the comparison is not vacuous: bashlex reads nearly all of the corpus
    assert agreed >= 0.95 * len(ENTRIES), f"the parsers agree on only {agreed} of {len(ENTRIES)}"


def test_the_oracle_can_fail(tmp_path):
    """A lexical reading that lost a command is a disagreement no listed bug explains."""
    bashlex = bashlex_fast.load()
    text = "ls && cargo test --workspace"
    _, oracle = _oracle(text, str(tmp_path), bashlex)
    lexical = analyze("ls", cwd=str(tmp_path), parser="lexical")
    assert _view(oracle) != _view(lexical)
    assert _known("differ", text) is None


@pytest.mark.parametrize("text, bug", [("time make", "time"), ("a=(1 2)", "arrays"), ("echo $((1+2))",
                                                                                   "arithmetic expansion")])
def test_a_listed_bug_is_what_bashlex_does(tmp_path, text, bug):
    outcome, _ = _oracle(text, str(tmp_path), bashlex_fast.load())
    assert _known(outcome, text) == bug, outcome


def test_the_default_parser_is_the_lexical_one_and_never_imports_bashlex():
    code = ("import sys\nfrom swarmgate.hooks.bash_tree import analyze\n"
            "an = analyze('cargo test --workspace | tee log', cwd='/')\n"
            "print(an.parsed_by, 'bashlex' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == ["lexical", "False"]
