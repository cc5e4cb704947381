"""SPEC §4.3 pattern matching: basename, ordered whole words, globs, other views."""
from __future__ import annotations

import pytest

from swarmgate.hooks.command_patterns import (
    PatternError,
    basename,
    compile_pattern,
    first_match,
    matches,
    matches_words,
    split_words,
    views,
)


class Cmd:
    """SimpleCommand-like: words as the tree gives them (quote-removed; words[0] as written)."""

    def __init__(self, *words: str) -> None:
        self.words = list(words)
        self.name = basename(words[0]) if words else ""
        self.args = list(words[1:])


@pytest.mark.parametrize("words", [
    ("cargo", "test", "--workspace"),
    ("/usr/bin/cargo", "test", "--workspace"),
    ("\\cargo", "test", "--workspace"),
    ("cargo", "--locked", "test", "--release", "--workspace"),
    ("cargo", "+nightly", "test", "-j", "4", "--workspace", "--", "--nocapture"),
    ("/home/u/.cargo/bin/cargo", "test", "--workspace"),
])
def test_heavy_pattern_matches(words):
    assert matches(Cmd(*words), "cargo test --workspace")


@pytest.mark.parametrize("words", [
    ("cargo", "test", "--all-features"),          # whole words: --all is not --all-features
    ("cargo", "--all", "test"),                    # order matters
    ("cargo", "build", "--all"),
    ("cargo-test", "--all"),
    ("echo", "cargo", "test", "--all"),            # name differs: data
    ("grep", "-r", "cargo test --all", "docs/"),
])
def test_heavy_pattern_does_not_match(words):
    assert not matches(Cmd(*words), "cargo test --all")


def test_quoted_pattern_words_and_quote_removal():
    words = split_words("""bash '.claude/gate.d/x y.sh' "a\\"b" c\\ d""")
    assert words == ["bash", ".claude/gate.d/x y.sh", 'a"b', "c d"]
    assert compile_pattern('"cargo" test').name == "cargo"
    with pytest.raises(PatternError):
        compile_pattern("bash 'unbalanced")
    with pytest.raises(PatternError):
        compile_pattern("   ")


def test_glob_word():
    pat = "bash .claude/gate.d/*"
    assert matches(Cmd("bash", ".claude/gate.d/checker-tier-crash-point-replay.sh", "--full", "."), pat)
    assert matches(Cmd("bash", "-x", ".claude/gate.d/a.sh"), pat)
    assert not matches(Cmd("bash", "scripts/a.sh"), pat)
    assert not matches(Cmd("sh", ".claude/gate.d/a.sh"), pat)


def test_path_normalisation_against_repo(tmp_path):
    repo = str(tmp_path)
    pat = "bash .claude/gate.d/*"
    assert matches(Cmd("bash", "./.claude/gate.d/a.sh"), pat, cwd=repo, repo=repo)
    assert matches(Cmd("bash", f"{repo}/.claude/gate.d/a.sh"), pat, cwd=repo, repo=repo)
    assert matches(Cmd("bash", "../.claude/gate.d/a.sh"), pat, cwd=f"{repo}/sub", repo=repo)
    assert not matches(Cmd("bash", "/elsewhere/.claude/gate.d/a.sh"), pat, cwd=repo, repo=repo)


def test_script_run_by_path_matches_bash_pattern(tmp_path):
    repo = str(tmp_path)
    assert matches(Cmd("./.claude/gate.d/a.sh", "--full"), "bash .claude/gate.d/*", cwd=repo, repo=repo)
    assert matches(Cmd(".claude/gate.d/a.sh"), "bash .claude/gate.d/*", cwd=repo, repo=repo)
    assert matches(Cmd("source", ".claude/gate.d/a.sh"), "bash .claude/gate.d/*", cwd=repo, repo=repo)
    assert not matches(Cmd("/usr/bin/cargo", "test"), "bash *")


def test_single_word_pattern_and_python_m_view():
    assert matches(Cmd("pytest"), "pytest")
    assert matches(Cmd("python3", "-m", "pytest", "-q"), "pytest")
    assert matches(Cmd("python", "-X", "dev", "-m", "pytest"), "pytest")
    assert matches(Cmd("uv", "run", "pytest", "tests"), "pytest")
    assert matches(Cmd("poetry", "run", "--", "pytest"), "pytest") is True
    assert not matches(Cmd("python3", "-c", "import pytest"), "pytest")
    assert not matches(Cmd("python3", "script.py", "-m", "pytest"), "pytest")
    assert not matches(Cmd("pip", "install", "pytest"), "pytest")


def test_views_and_first_match():
    assert views("python3", ["-m", "pytest", "x"])[1] == ("pytest", ["x"])
    assert first_match(Cmd("make", "-j8", "check-full"), ["cargo test --all", "make check-full"]) == "make check-full"
    assert first_match(Cmd("make", "check"), ["make check-full"]) is None
    assert matches_words("cargo", ["test", "--all"], "cargo test --all")


def test_empty_command_never_matches():
    assert not matches(Cmd(), "cargo")


def test_glob_in_command_name():
    assert matches(Cmd("/usr/bin/qemu-system-x86_64", "-m", "4G"), "qemu-system-*")
    assert not matches(Cmd("qemu-img", "info"), "qemu-system-*")
