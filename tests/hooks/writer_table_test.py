"""The writer table's data (hooks/writer_table.py) against its parsers (hooks/shell_writers.py and the
family modules hooks/writers_*.py it dispatches to): every name resolves to a function of its family,
and the gate ``writes_files`` says no only where the parsers find nothing."""
from __future__ import annotations

import subprocess
import sys

import pytest

from swarmgate.hooks import shell_writers
from swarmgate.hooks.bash_results import SimpleCommand
from swarmgate.hooks.writer_table import SPECIAL, TABLE, parser_of, writes_files


def test_every_special_name_has_its_parser():
    for name, parser in SPECIAL.items():
        assert parser in shell_writers._PARSERS or parser in shell_writers._NAMED_PARSERS, name
        fn = shell_writers.parser(parser)
        assert callable(fn) and fn.__module__.startswith("swarmgate.hooks.writers_"), (name, fn)
        assert shell_writers.parser(parser) is fn   # imported once


def test_each_family_is_imported_on_its_first_use_only():
    """A parser's family module loads when the dispatch first needs it, and no other family with it."""
    code = ("import sys\n"
            "from swarmgate.hooks import shell_writers\n"
            "from swarmgate.hooks.bash_results import SimpleCommand\n"
            "fam = lambda: sorted(m for m in sys.modules if m.startswith('swarmgate.hooks.writers_'))\n"
            "before = fam()\n"
            "shell_writers.targets(SimpleCommand(['git', 'status'], {}, [], (), 0, (), 'git status', cwd='/tmp'))\n"
            "print(before, fam())\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert p.stdout.split() == ["[]", "['swarmgate.hooks.writers_git']"], p.stdout


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
