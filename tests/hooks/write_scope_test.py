"""W01 write scope: file tools and shell writes against the [write] table; G01 shell writes."""
from __future__ import annotations

import pytest

from swarmgate.hooks.command_patterns import basename
from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.shell_writes import command_write_targets, place_writes, resolve
from swarmgate.hooks.write_scope import glob_allows

CONFIG = """\
[write]
main = ["**"]
implementer = ["src/**", "tests/**"]
docs-writer = ["docs/**", "**/*.md"]
"""


class R:
    def __init__(self, op, target, fd=None, heredoc=None):
        self.op, self.target, self.fd, self.heredoc = op, target, fd, heredoc


class Cmd:
    def __init__(self, *words, redirects=()):
        self.words = list(words)
        self.name = basename(words[0]) if words else ""
        self.args = list(words[1:])
        self.redirects = list(redirects)
        self.via = ()


def targets(*words, redirects=()):
    return [p for p, _ in command_write_targets(Cmd(*words, redirects=redirects))]


def test_redirections():
    assert targets("echo", "x", redirects=[R(">", "out.txt")]) == ["out.txt"]
    assert targets("echo", "x", redirects=[R(">>", "log"), R(">&", "2"), R(">", "/dev/null")]) == ["log"]
    assert targets("make", redirects=[R("&>", "build.log")]) == ["build.log"]
    assert targets("cat", redirects=[R("<", "in.txt")]) == []
    assert targets(redirects=[R(">", "empty")]) == ["empty"]   # `> file` alone truncates


@pytest.mark.parametrize("words,want", [
    (("tee", "-a", "a.log", "b.log"), ["a.log", "b.log"]),
    (("tee",), []),
    (("cp", "-r", "x", "y", "dest/"), ["dest/x", "dest/y"]),
    (("cp", "-t", "dest", "x", "y"), ["dest/x", "dest/y"]),
    (("mv", "--target-directory=d", "x"), ["d/x", "x"]),   # mv also removes its source
    (("install", "-m", "755", "bin/x", "/usr/local/bin/x"), ["/usr/local/bin/x"]),
    (("install", "-d", "some/dir"), []),
    (("rsync", "-a", "--exclude", "target", "src/", "host:/backup/"), []),
    (("rsync", "-a", "src/", "mirror/"), ["mirror/"]),
    (("sed", "-i", "s/a/b/", "f1", "f2"), ["f1", "f2"]),
    (("sed", "-i.bak", "-e", "s/a/b/", "f1"), ["f1"]),
    (("sed", "-n", "1,5p", "f1"), []),
    (("perl", "-pi", "-e", "s/a/b/", "f1"), ["f1"]),
    (("dd", "if=/dev/zero", "of=disk.img", "bs=1M"), ["disk.img"]),
    (("truncate", "-s", "0", "big.log"), ["big.log"]),
    (("rm", "-rf", "build", "dist"), ["build", "dist"]),
    (("touch", "-d", "yesterday", "stamp"), ["stamp"]),
    (("mkdir", "-p", "out/dir"), []),
    (("cat", "file"), []),
])
def test_command_targets(words, want):
    assert targets(*words) == want


PATCH = ("*** Begin Patch\n*** Add File: docs/a.md\n+x\n*** Update File: src/b.py\n*** Move to: src/c.py\n"
         "@@\n-a\n+b\n*** End Patch\n")


def test_apply_patch_writes_every_path_of_its_patch():
    """Codex's apply_patch in a shell command (a here-document, a here-string, an argument)."""
    assert targets("apply_patch", redirects=[R("<<", "EOF", heredoc=PATCH)]) == ["docs/a.md", "src/b.py", "src/c.py"]
    assert targets("applypatch", redirects=[R("<<<", PATCH, heredoc=PATCH)]) == ["docs/a.md", "src/b.py", "src/c.py"]
    assert targets("apply_patch", PATCH) == ["docs/a.md", "src/b.py", "src/c.py"]
    assert targets("apply_patch", redirects=[R("<", "/tmp/p.diff")]) == []  # read from a file: not followed
    assert targets("echo", PATCH) == []


def test_glob_allows_and_resolve(tmp_path):
    assert glob_allows(["src/**"], "src/a/b.rs")
    assert not glob_allows(["src/**"], "srcx/a.rs")
    assert glob_allows(["**/*.md"], "README.md")
    assert glob_allows(["src/**"], "src")
    assert not glob_allows([], "x")
    repo = str(tmp_path)
    assert resolve("a/../b", repo, repo) == (f"{repo}/b", "b")
    assert resolve("/tmp/x", repo, repo)[1] is None
    assert resolve("../x", f"{repo}/sub", repo)[1] == "x"


# --- through the guard: file tools ---

def test_file_tools_main_and_subagent(judge):
    judge.config_text = CONFIG
    assert "W01" not in judge.codes(tool="Write", tool_input={"file_path": "anything/at/all.txt", "content": ""})
    assert "W01" not in judge.codes(tool="Edit", subagent=True,
                                     tool_input={"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"})
    f = [x for x in judge.findings(tool="Write", subagent=True,
                                   tool_input={"file_path": "Cargo.toml", "content": ""}) if x.code == "W01"]
    assert f and "Cargo.toml" in f[0].message and "src/**" in f[0].message
    assert "W01" in judge.codes(tool="NotebookEdit", subagent=True,
                                tool_input={"notebook_path": f"{judge.repo}/nb/a.ipynb", "new_source": ""})
    assert "W01" not in judge.codes(tool="MultiEdit", subagent=True, agent_type="docs-writer",
                                     tool_input={"file_path": "crates/x/README.md", "edits": []})


def test_file_tool_outside_repo_is_not_w01(judge):
    judge.config_text = CONFIG
    assert "W01" not in judge.codes(tool="Write", subagent=True, tool_input={"file_path": "/tmp/scratch.txt"})


def test_unknown_type_names_the_line_to_add(judge):
    judge.config_text = CONFIG
    f = [x for x in judge.findings(tool="Write", subagent=True, agent_type="researcher",
                                   tool_input={"file_path": "notes.txt", "content": ""}) if x.code == "W01"]
    assert f and 'researcher = [' in f[0].way_out and "[write]" in f[0].way_out


def test_main_row_restricts_main(judge):
    judge.config_text = '[write]\nmain = ["docs/**"]\n'
    assert "W01" in judge.codes(tool="Write", tool_input={"file_path": "src/x.rs", "content": ""})
    assert "W01" not in judge.codes(tool="Write", tool_input={"file_path": "docs/x.md", "content": ""})


def test_a_bare_redirection_is_a_write(tmp_path):
    """`> FILE` with no command truncates FILE: the reader yields it as a command with no words, so
    G01 and W01 judge it (it passed both before)."""
    an = analyze("> .claude/settings.json", cwd=str(tmp_path))
    assert [w.full for w in place_writes(an, str(tmp_path))] == [str(tmp_path / ".claude/settings.json")]
    assert analyze(": ; x=1", cwd=str(tmp_path)).commands[0].words == [":"]   # no write: nothing extra
