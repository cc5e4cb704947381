"""W01 reads `{}` of `find ROOTS ... -exec CMD {} ... (;|+)` as the files find yields under its
start points, not as a file named `{}` (issue 25, item 5): through the guard and the real hook."""
from __future__ import annotations

import pytest

from tests.hooks.conftest import denied, hook

CONFIG = '[write]\nmain = ["**"]\nimplementer = ["src/**", "tests/**"]\n'


def _w01(judge, command, **kw):
    judge.config_text = CONFIG
    return [f for f in judge.findings(command, subagent=True, **kw) if f.code == "W01"]


@pytest.mark.parametrize("command", [
    "find src -name __pycache__ -type d -exec rm -rf {} +",
    "find src tests -name '*.pyc' -exec rm -f {} \\;",
    "find src -name '*.orig' -exec mv {} {}.bak \\;",
    "find src -name '*.py' -exec sed -i s/a/b/ {} +",
    "find src -type f -execdir chmod 644 {} \\;",
    "find -L src -name x -ok rm {} \\;",
    "find src -name '*.tmp' -delete",
])
def test_inside_the_rows_passes(judge, command):
    assert not _w01(judge, command)


@pytest.mark.parametrize("command, shown", [
    ("find / -name x -exec rm {} +", ". (anything under it)"),
    ("find docs -name '*.md' -exec rm -rf {} +", "docs (anything under it)"),
    ("find src -name '*.py' -exec mv {} docs \\;", "docs"),
    ("find src -name '*.py' -exec cp {} docs/{} \\;", "docs/src (anything under it)"),
    ("find . -name '*.pyc' -exec rm {} +", ". (anything under it)"),
    ("find src -execdir touch stamp \\;", "stamp"),
    ("find docs -delete", "docs (anything under it)"),
    ("find src -name '*.py' -exec mv {} {}/.. \\;", ". (anything under it)"),
    ("find src/a -type f -execdir mv {} ../../x \\;", ". (anything under it)"),
])
def test_outside_the_rows_is_refused(judge, command, shown):
    f = _w01(judge, command)
    assert f and shown in f[0].message, (command, [x.message for x in f])


def test_a_root_climbing_out_of_the_cwd_is_refused(judge):
    (__import__("pathlib").Path(judge.repo) / "src").mkdir()
    f = _w01(judge, "find ../docs -exec rm -rf {} +", cwd=f"{judge.repo}/src")
    assert f and "docs (anything under it)" in f[0].message


def test_the_literal_braces_are_no_file(judge):
    # `{}` is no path relative to the cwd: from the repository root the implementer may not write
    # ./{}; the write is src's
    judge.config_text = CONFIG
    assert not _w01(judge, "find src -exec rm -rf {} +")
    assert _w01(judge, "rm -rf {}")


def test_through_the_real_hook(repo):
    (repo / ".claude" / "swarmgate.toml").write_text(CONFIG)
    ok = hook("PreToolUse", {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                             "tool_input": {"command": "find src -name __pycache__ -type d -exec rm -rf {} +"}},
              repo)
    assert "W01" not in denied(ok), denied(ok)
    no = hook("PreToolUse", {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                             "tool_input": {"command": "find / -name x -exec rm {} +"}}, repo)
    assert "W01" in denied(no), no
