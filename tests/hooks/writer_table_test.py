"""The writer table's data (hooks/writer_table.py) against its parsers (hooks/shell_writers.py): every
name resolves, and the gate ``writes_files`` says no only where the parsers find nothing."""
from __future__ import annotations

import pytest

from swarmgate.hooks import shell_writers
from swarmgate.hooks.bash_results import SimpleCommand
from swarmgate.hooks.writer_table import SPECIAL, TABLE, parser_of, writes_files


def test_every_special_name_has_its_parser():
    for name, parser in SPECIAL.items():
        assert parser in shell_writers._PARSERS or parser in shell_writers._NAMED_PARSERS, name


def test_every_table_entry_builds_a_writer():
    for name in TABLE:
        w = shell_writers.writer(name)
        assert w is not None and w.name == name
        assert shell_writers.writer(name) is w   # built once
    assert shell_writers.writer("ls") is None


@pytest.mark.parametrize("words,writes", [
    (["rm", "-rf", "build"], True), (["cp", "a", "b"], True), (["gzip", "log"], True),
    (["python3.11", "-m", "pip", "install", "--target", "t", "x"], True), (["sort", "-o", "out", "in"], True),
    (["ls", "-la"], False), (["cat", "README.md"], False), (["grep", "-r", "x", "src"], False),
])
def test_the_gate_agrees_with_the_parsers(words, writes):
    cmd = SimpleCommand(words, {}, [], (), 0, (), " ".join(words), cwd="/tmp")
    assert writes_files(words[0]) is writes
    assert bool(shell_writers.targets(cmd)) is writes


def test_python_minor_versions_go_to_pip():
    assert parser_of("python3.12") == "python_pip"
    assert parser_of("pythonx") is None
