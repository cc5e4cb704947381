"""The walker's rare methods (hooks/bash_walker_rare.py) join ``Walker`` on first use: a common command
never loads them, a loop does, and the walk reads the loop as before."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from swarmgate.hooks import bash_walker, bash_walker_rare
from swarmgate.hooks.bash_tree import analyze

PROBE = ("import sys\nfrom swarmgate.hooks import bash_tree\nan = bash_tree.analyze(sys.argv[1], cwd='/')\n"
         "print('swarmgate.hooks.bash_walker_rare' in sys.modules, ' '.join(c.name for c in an.commands))\n")


@pytest.mark.parametrize("command,loaded,names", [
    ("ls -la src | grep x", "False", "ls grep"),
    ("for f in a b; do rm \"$f\"; done", "True", "rm rm"),
    ("bash -c 'rm -rf build'", "True", "bash rm"),
])
def test_loaded_on_first_use_only(command, loaded, names):
    p = subprocess.run([sys.executable, "-c", PROBE, command], capture_output=True, text=True, timeout=60, check=True)
    assert p.stdout.strip() == f"{loaded} {names}"


def test_every_rare_method_is_a_walker_method_defined_once():
    rare = {n for n in vars(bash_walker_rare.RareWalking) if not n.startswith("__")}
    tree = ast.parse(Path(bash_walker.__file__).read_text())
    (walker,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Walker"]
    assert rare and not rare & {n.name for n in walker.body if isinstance(n, ast.FunctionDef)}
    w = bash_walker.Walker(bash_walker.Analysis(), "/", 6, float("inf"), 1 << 20)
    for n in rare:
        assert callable(getattr(w, n))


def test_a_missing_attribute_is_still_missing():
    w = bash_walker.Walker(bash_walker.Analysis(), "/", 6, float("inf"), 1 << 20)
    assert not hasattr(w, "no_such_method")
    with pytest.raises(AttributeError, match="no_such_method"):
        w.no_such_method  # noqa: B018 - the lookup is the test


@pytest.mark.parametrize("command,reached", [
    # a shell given /dev/fd/N reads what its own redirection opened N on (exec corpus,
    # descriptors-fed-to-a-shell: `bash /dev/fd/3 3<<<'make build'` was refused as unreadable)
    ("bash /dev/fd/3 3<<<'make check-full'", ["make", "check-full"]),
    ("sh /proc/self/fd/4 4<<'EOF'\ncargo test --workspace\nEOF", ["cargo", "test", "--workspace"]),
    ("bash /dev/fd/3 3<<<'make build'", ["make", "build"]),
])
def test_a_shell_reads_the_descriptor_its_own_redirection_opens(command, reached):
    an = analyze(command, cwd="/")
    assert reached in [list(c.words) for c in an.commands] and not an.unverifiable, \
        ([c.words for c in an.commands], an.unverifiable)


@pytest.mark.parametrize("command", ["bash /dev/fd/3", "exec 3<<<'make check-full'; bash /dev/fd/3",
                                     "bash /dev/fd/3 3<<<\"$CMD\"", "bash /dev/fd/3 3<\"$F\""])
def test_a_descriptor_opened_elsewhere_stays_unreadable(command):
    an = analyze(command, cwd="/")
    assert any("file descriptor" in u.reason for u in an.unverifiable), an.unverifiable
