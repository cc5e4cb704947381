"""bashlex as the differential oracle of the lexical parser, over the whole corpus.

The guards read every command with the lexical parser (hooks/bash_lexical.py: no bashlex import
on the hook's path). bashlex stays a dependency for this: each corpus command (tests/bash/corpus.py,
heavy and benign, with the files it reads) is analysed by both front ends, and where bashlex
parses the text, both must find the same commands (words, how they were reached, background,
redirections, assignments) and the same unverifiable parts. A disagreement fails unless the
command is listed in KNOWN_BASHLEX_BUGS with the bashlex bug it shows; a listed command that
agrees again fails too, so the list never outlives the bug.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swarmgate.hooks import bash_parse
from swarmgate.hooks.bash_tree import analyze
from tests.bash.corpus import BENIGN, HEAVY

# command -> the bashlex bug that makes its tree differ (none today: bashlex_adapter refuses the
# trees it is known to get wrong, and the lexical parser reads those texts itself)
KNOWN_BASHLEX_BUGS: dict[str, str] = {}

ENTRIES = HEAVY + BENIGN


def _view(an) -> tuple:
    commands = [(c.words, c.via, c.background, [(r.op, r.target, r.fd) for r in c.redirects], c.assignments)
                for c in an.commands]
    return commands, sorted(u.reason for u in an.unverifiable)


def _both(entry, root) -> tuple:
    for rel, body in entry.files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body)
        if rel.endswith(".sh"):
            os.chmod(path, 0o755)
    out = []
    for parser in ("auto", "lexical"):
        bash_parse.clear_cache()
        out.append(analyze(entry.command, cwd=str(root), parser=parser))
    return tuple(out)


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e.cls}:{e.command[:40]}" for e in ENTRIES])
def test_both_parsers_read_the_corpus_alike(entry, tmp_path):
    oracle, lexical = _both(entry, tmp_path)
    assert lexical.parsed_by == "lexical"
    if oracle.parsed_by != "bashlex":
        pytest.skip("bashlex does not parse this text (the lexical parser is the only reader)")
    agree = _view(oracle) == _view(lexical)
    if entry.command in KNOWN_BASHLEX_BUGS:
        assert not agree, "listed as a bashlex bug, but both parsers agree now: drop it from the list"
        return
    assert agree, (f"the parsers disagree on {entry.command!r}:\n  bashlex: {_view(oracle)}\n"
                   f"  lexical: {_view(lexical)}")


def test_the_oracle_reads_most_of_the_corpus(tmp_path):
    """The comparison is not vacuous: bashlex parses most corpus commands at the top level."""
    parsed = 0
    for i, entry in enumerate(ENTRIES):
        oracle, _ = _both(entry, tmp_path / str(i))
        parsed += oracle.parsed_by == "bashlex"
    assert parsed >= 0.8 * len(ENTRIES), f"bashlex parsed only {parsed} of {len(ENTRIES)}"


def test_the_default_parser_is_the_lexical_one_and_never_imports_bashlex():
    code = ("import sys\nfrom swarmgate.hooks.bash_tree import analyze\n"
            "an = analyze('cargo test --workspace | tee log', cwd='/')\n"
            "print(an.parsed_by, 'bashlex' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["lexical", "False"]
