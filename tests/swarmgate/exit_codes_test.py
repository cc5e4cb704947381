"""Exit codes as data: one table, and the README's and docs/runner.md's tables generated from it."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from swarmgate import docs, exit_codes
from swarmgate.exit_codes import CODES, Exit, describe

ROOT = Path(__file__).resolve().parents[2]
SPEC_CODES = {78, *range(241, 255)}  # SPEC §9: these numbers carry swarmgate's meanings only


def test_the_table_holds_every_code_of_the_spec_once():
    codes = [c.code for c in CODES]
    names = [c.name for c in CODES]
    assert len(codes) == len(set(codes)) and len(names) == len(set(names))
    assert set(codes) == SPEC_CODES
    for c in CODES:
        assert c.meaning.strip() and c.advice.strip(), c.code
        assert Exit[c.name] == c.code
    assert Exit.OK == 0 and Exit.HEAVY_REFUSED == 249 and Exit.USAGE == 251


def test_describe_gives_meaning_and_advice():
    assert describe(250) == "250: hit its own memory cap (raise the cap or shrink the job)"
    assert describe(3) == "3: the command's own exit code"


def test_the_generated_docs_are_up_to_date(capsys):
    rc = docs.main(["--check"])
    assert rc == 0, capsys.readouterr().err


@pytest.fixture
def tree(tmp_path) -> Path:
    for rel in (t.rel for t in docs.TARGETS):  # every file `swarmgate docs` writes into
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_a_stale_exit_code_table_fails_the_check_and_is_rewritten_in_place(tree, capsys):
    readme = tree / "README.md"
    text = readme.read_text()
    stale = text.replace("| 250 | hit its own memory cap |", "| 250 | ran out of memory |")
    assert stale != text
    readme.write_text(stale.replace("## Uninstall", "## Uninstall\n\nA line a person wrote.\n"))
    assert docs.main(["--check", "--root", str(tree)]) == 1
    assert "README.md is out of date" in capsys.readouterr().err
    assert docs.main(["--root", str(tree)]) == 0
    assert docs.main(["--check", "--root", str(tree)]) == 0
    fixed = readme.read_text()
    assert "| 250 | hit its own memory cap |" in fixed and "A line a person wrote." in fixed


def test_a_new_code_reaches_both_tables(tree, monkeypatch):
    row = exit_codes.ExitCode(240, "EXAMPLE", "an example meaning", "an example advice", runner="the runner's words")
    monkeypatch.setattr(exit_codes, "CODES", (*CODES, row))
    assert docs.main(["--check", "--root", str(tree)]) == 1
    assert docs.main(["--root", str(tree)]) == 0
    assert "| 240 | an example meaning | an example advice |" in (tree / "README.md").read_text()
    assert "| 240 | the runner's words | an example advice |" in (tree / "docs/runner.md").read_text()


def test_a_file_without_the_markers_is_one_line_and_251(tree, capsys):
    runner = tree / "docs" / "runner.md"
    runner.write_text(runner.read_text().replace(docs.END_MARK, ""))
    assert docs.main(["--check", "--root", str(tree)]) == 251
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "docs/runner.md: no generated section" in err
