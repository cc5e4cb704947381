"""The verdict cache: keyed by definition, tools, env and inputs; Python inputs per function."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmgate.gate import cache as vcache
from swarmgate.gate.cache import glob_match, match_inputs, python_fingerprints, select_fingerprints
from swarmgate.gate.tree import Entry

MOD = b'''"""Module docstring."""
import os

LIMIT = 3


def add(a, b):
    """Add two numbers."""
    # a comment
    return a + b


def sub(a, b):
    return a - b


class Box:
    """A box."""
    size = 1

    def grow(self, n):
        return self.size + n
'''


def test_fingerprints_ignore_comments_docstrings_and_formatting():
    base = python_fingerprints(MOD)
    assert set(base) == {"add", "sub", "Box", "Box.grow", "<module>"}
    variants = [
        MOD.replace(b"# a comment", b"# another comment entirely"),
        MOD.replace(b'"""Add two numbers."""', b'"""Add two numbers, with a longer docstring."""'),
        MOD.replace(b'"""Module docstring."""', b"# no module docstring any more"),
        MOD.replace(b"return a + b", b"return (a +\n            b)  # reformatted"),
        MOD.replace(b'    """A box."""\n', b""),
        MOD + b"\n\n# trailing comment\n",
    ]
    for v in variants:
        assert python_fingerprints(v) == base, v


def test_fingerprints_change_with_code():
    base = python_fingerprints(MOD)
    changed = python_fingerprints(MOD.replace(b"return a + b", b"return a + b + 1"))
    assert changed["add"] != base["add"]
    assert changed["sub"] == base["sub"] and changed["<module>"] == base["<module>"]
    module = python_fingerprints(MOD.replace(b"LIMIT = 3", b"LIMIT = 4"))
    assert module["<module>"] != base["<module>"] and module["add"] == base["add"]
    method = python_fingerprints(MOD.replace(b"self.size + n", b"self.size * n"))
    assert method["Box.grow"] != base["Box.grow"] and method["Box"] == base["Box"]
    cls = python_fingerprints(MOD.replace(b"size = 1", b"size = 2"))
    assert cls["Box"] != base["Box"]
    assert python_fingerprints(b"def broken(:\n") is None


def test_glob_match():
    assert glob_match("src/a/b.py", "src/**/*.py")
    assert glob_match("src/b.py", "src/**/*.py")
    assert not glob_match("lib/b.py", "src/**/*.py")
    assert glob_match("src/x/y", "src")             # a plain directory matches its files
    assert glob_match("src/x/y", "src/")
    assert glob_match("a.py", "*.py") and not glob_match("d/a.py", "*.py")
    assert glob_match("anything/at/all", "**")
    assert glob_match(".claude/sop/VERSION", ".claude/sop")
    assert glob_match("x.txt", "./x.txt")


def test_function_selectors():
    e = Entry("100644", "0" * 40, "src/m.py")
    t = Entry("100644", "1" * 40, "src/t.txt")
    got = match_inputs([e, t], ["src/m.py::add", "src/*.txt"])
    assert got == [(e, ("add",)), (t, None)]
    fps = python_fingerprints(MOD)
    sel = select_fingerprints(fps, ("add",))
    assert set(sel) == {"add", "<module>"}
    assert set(select_fingerprints(fps, ("Box",))) == {"Box", "Box.grow", "<module>"}


PY_STAGE = """
[[gate.stages]]
name = "compile"
command = "python3 -m py_compile mod.py"
inputs = ["*.py"]
"""


@pytest.fixture
def py_repo(repo):
    repo.config(PY_STAGE)
    repo.write("mod.py", MOD)
    repo.git("add", ".")
    repo.commit("base")
    return repo


def how(result, stage="compile"):
    return [o for o in result.outcomes if o.stage == stage][0].how


def test_cache_hit_then_miss_on_a_real_change(py_repo):
    assert how(py_repo.gate()) == "ran"
    second = py_repo.gate()
    assert how(second) == "cached"
    assert "cached" in second.text
    py_repo.stage_blob("mod.py", MOD.replace(b"return a - b", b"return b - a"))
    assert how(py_repo.gate()) == "ran"


def test_cache_kept_on_comment_and_docstring_changes(py_repo):
    py_repo.gate()
    py_repo.stage_blob("mod.py", MOD.replace(b"# a comment", b"# a comment that changed"))
    r = py_repo.gate()
    assert how(r) == "cached"
    py_repo.stage_blob("mod.py", MOD.replace(b'"""Add two numbers."""', b'"""Sum of two numbers."""'))
    assert how(py_repo.gate()) == "cached"
    py_repo.stage_blob("mod.py", MOD.replace(b"return a + b", b"return a + b  # same code, new comment"))
    assert how(py_repo.gate()) == "cached"


def test_cache_miss_on_a_function_change_kept_on_another_function_with_selectors(repo):
    repo.config("""
[[gate.stages]]
name = "compile"
command = "python3 -m py_compile mod.py"
inputs = ["mod.py::add"]
""")
    repo.write("mod.py", MOD)
    repo.git("add", ".")
    assert how(repo.gate()) == "ran"
    repo.stage_blob("mod.py", MOD.replace(b"return a - b", b"return b - a"))    # sub: not a dependency
    assert how(repo.gate()) == "cached"
    repo.stage_blob("mod.py", MOD.replace(b"return a + b", b"return a + b + 0"))  # add: a dependency
    assert how(repo.gate()) == "ran"


def test_content_keys_for_comment_reading_stages(repo):
    repo.config("""
[[gate.stages]]
name = "no-todo"
command = "! grep -q TODO mod.py"
inputs = ["*.py"]
python_inputs = "content"
""")
    repo.write("mod.py", MOD)
    repo.git("add", ".")
    assert [o.verdict for o in repo.gate().outcomes if o.stage == "no-todo"] == ["pass"]
    repo.stage_blob("mod.py", MOD.replace(b"# a comment", b"# TODO"))
    r = repo.gate()
    assert [(o.verdict, o.how) for o in r.outcomes if o.stage == "no-todo"] == [("fail", "ran")]


def test_cached_failure_replays_its_output(bad_repo):
    bad_repo.config(bad_repo.path.joinpath(".claude/swarmgate.toml").read_text().replace(
        "! grep -rq BAD data", "grep -rn BAD data && exit 1 || exit 0"))
    bad_repo.stage_blob("data/a.txt", b"BAD line\n")
    first = bad_repo.gate()
    second = bad_repo.gate()
    o = [o for o in second.outcomes if o.stage == "no-bad"][0]
    assert (o.verdict, o.how) == ("fail", "cached")
    assert "data/a.txt:1:BAD line" in o.output and "data/a.txt:1:BAD line" in second.text
    assert first.red and second.red


def test_no_cache_flag_runs_again(py_repo):
    py_repo.gate()
    assert how(py_repo.gate(use_cache=False)) == "ran"


def test_key_changes_with_definition_env_and_tool(py_repo, monkeypatch):
    py_repo.gate()
    py_repo.config(PY_STAGE.replace('inputs = ["*.py"]', 'inputs = ["*.py"]\nenv = ["GATE_TEST_MODE"]'))
    assert how(py_repo.gate()) == "ran"          # the definition changed
    assert how(py_repo.gate()) == "cached"
    monkeypatch.setenv("GATE_TEST_MODE", "fast")
    assert how(py_repo.gate(env=dict(os.environ))) == "ran"   # an allow-listed env value changed
    tools = vcache.ToolVersions(py_repo.state / "gate-cache")
    v = tools.version("python3", None, dict(os.environ))
    assert v["path"].startswith("/") and "Python" in v["version"]


def test_in_tree_program_is_keyed_by_its_blob(repo):
    repo.config("""
[[gate.stages]]
name = "script"
command = "./check.sh"
inputs = ["data/**"]
""")
    repo.write("check.sh", "#!/bin/sh\nexit 0\n", mode=0o755)
    repo.write("data/x", "1\n")
    repo.git("add", ".")
    assert how(repo.gate(), "script") == "ran"
    assert how(repo.gate(), "script") == "cached"
    repo.stage_blob("check.sh", b"#!/bin/sh\nexit 1\n", mode="100755")
    r = repo.gate()
    assert [(o.verdict, o.how) for o in r.outcomes if o.stage == "script"] == [("fail", "ran")]


def test_corrupt_cache_entry_is_ignored(py_repo, capsys):
    py_repo.gate()
    verdict_dir = py_repo.state / "gate-cache" / "verdicts" / "compile"
    (entry,) = list(verdict_dir.glob("*.json"))
    entry.write_text("{ not json")
    fp = next((py_repo.state / "gate-cache").glob("fingerprints-*.json"))
    fp.write_text("[1, 2")
    r = py_repo.gate()
    assert how(r) == "ran" and not r.red
    assert how(py_repo.gate()) == "cached"     # rebuilt
    assert "corrupt" in capsys.readouterr().err


def test_index_changed_during_the_run_is_not_recorded(repo):
    repo.config(f"""
[[gate.stages]]
name = "sneaky"
command = "printf more >> {repo.path}/data.txt && git -C {repo.path} add data.txt"
inputs = ["data.txt"]
""")
    repo.write("data.txt", "x\n")
    repo.git("add", ".")
    r = repo.gate()
    o = [o for o in r.outcomes if o.stage == "sneaky"][0]
    assert o.verdict == "pass"
    assert any("index changed while the stage ran" in n for n in o.notes)
    assert not list((repo.state / "gate-cache" / "verdicts" / "sneaky").glob("*.json"))


def test_timeouts_are_not_cached(repo):
    repo.config("""
[[gate.stages]]
name = "slow"
command = "sleep 5"
inputs = ["**"]
timeout = 1
""")
    r = repo.gate()
    o = [o for o in r.outcomes if o.stage == "slow"][0]
    assert o.verdict == "error" and o.rc == 253 and r.red
    assert not (repo.state / "gate-cache" / "verdicts" / "slow").exists()


def test_cache_entries_are_pruned(tmp_path):
    for i in range(vcache.KEEP_PER_STAGE + 5):
        p = vcache.record(tmp_path, "s", f"{i:064x}", "pass", 0, "", 0.1, "/r")
        os.utime(p, (i, i))
    assert len(list((tmp_path / "verdicts" / "s").glob("*.json"))) == vcache.KEEP_PER_STAGE
    rec = json.loads((tmp_path / "verdicts" / "s" / f"{vcache.KEEP_PER_STAGE + 4:064x}.json").read_text())
    assert rec["verdict"] == "pass"


def test_fingerprints_survive_any_comment_or_blank_line_insertion():
    lines = MOD.decode().splitlines()
    base = python_fingerprints(MOD)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, len(lines) - 1), st.sampled_from(["  # note", "\n", "\n# block\n"])),
                    max_size=8))
    def check(edits):
        out = list(lines)
        for i, what in sorted(edits, reverse=True):
            if what.startswith("  #"):
                if '"""' in out[i]:
                    continue  # a comment after a docstring's quotes is still a comment, but keep it simple
                out[i] = out[i] + what
            else:
                indent = out[i][:len(out[i]) - len(out[i].lstrip())] if out[i].strip() else ""
                out.insert(i, "\n".join(indent + x if x else x for x in what.split("\n")))
        src = "\n".join(out).encode()
        assert python_fingerprints(src) == base, src.decode()

    check()


def test_linked_tool_is_versioned_through_the_worktree(repo):
    repo.config("""
[gate]
link = ["tools"]
[[gate.stages]]
name = "lint"
command = "tools/lint"
inputs = ["*.txt"]
""")
    repo.write(".gitignore", "tools/\n")
    lint = repo.write("tools/lint", '#!/bin/sh\n[ "$1" = --version ] && echo lint 1.0\nexit 0\n', mode=0o755)
    repo.write("a.txt", "x\n")
    repo.git("add", ".")
    assert how(repo.gate(), "lint") == "ran"
    assert how(repo.gate(), "lint") == "cached"
    lint.write_text('#!/bin/sh\n[ "$1" = --version ] && echo lint 2.0\nexit 0\n')   # an upgrade
    os.utime(lint, ns=(1, 1))
    assert how(repo.gate(), "lint") == "ran"
