"""Scheduling records: the format, the command, and that no task vanishes without a verdict."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from swarmgate.agents import records as R
from swarmgate.config import defaults
from tests.agents.support import tool

GOOD = """# Round r7

goal: wire the hooks
exit: every guard fires in a real session
session: sess-1

## Tasks

| id | description | deps | inputs ready | batch | verdict |
|----|-------------|------|--------------|-------|---------|
| t1 | parse the config \\| schema | - | yes | 1 | close |
| t2 | write the hook | t1 | no | 2 | |
| t3 | docs | t1, t2 | no | 2 | next-round |

## Notes
why we split t2 from t3: ...
"""


def test_the_console_entry_works(repo):
    p = subprocess.run([tool("swarmgate"), "records", "--repo", str(repo), "new", "r0", "--goal", "g",
                        "--exit", "e"], capture_output=True, text=True)
    assert p.returncode == 0 and (repo / "records" / "r0.md").is_file(), p.stderr


def test_parse_the_documented_format():
    rec = R.parse_record(GOOD, "records/r7.md")
    assert rec["problems"] == []
    assert (rec["round"], rec["goal"], rec["exit"], rec["session"]) == (
        "r7", "wire the hooks", "every guard fires in a real session", "sess-1")
    assert [(t["id"], t["deps"], t["inputs_ready"], t["batch"], t["verdict"]) for t in rec["tasks"]] == [
        ("t1", [], True, 1, "close"), ("t2", ["t1"], False, 2, None), ("t3", ["t1", "t2"], False, 2, "next-round")]
    assert rec["tasks"][0]["description"] == "parse the config | schema"
    assert [t["id"] for t in R.open_tasks(rec)] == ["t2"]
    assert R.validate(rec) == []


def test_the_repositorys_own_example_record_is_valid():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "records")
    examples = [p for p in os.listdir(root) if p.endswith(".md") and p != "README.md"]
    assert examples, "records/ of this repository holds an example round"
    for name in examples:
        rec = R.load_record(os.path.join(root, name))
        assert R.validate(rec) == [], name


@pytest.mark.parametrize("mutate, problem", [
    (lambda t: t.replace("goal: wire the hooks\n", ""), "no `goal:` line"),
    (lambda t: t.replace("exit: every guard fires in a real session\n", ""), "no `exit:` line"),
    (lambda t: t.replace("| t2 | write the hook | t1 |", "| t2 | write the hook | t9 |"), "depends on t9"),
    (lambda t: t.replace("| t1 | parse the config \\| schema | - |", "| t1 | parse | t3 |"), "dependency cycle"),
    (lambda t: t.replace("| 2 | |\n", "| 2 | maybe |\n"), "verdict = 'maybe'"),
    (lambda t: t.replace("| no | 2 | |", "| perhaps | 2 | |"), "inputs ready = 'perhaps'"),
    (lambda t: t.replace("| t2 | write the hook | t1 | no | 2 |", "| t2 | write the hook | t1 | no | zero |"),
     "batch = 'zero'"),
    (lambda t: t.replace("| t3 | docs |", "| t1 | docs |"), "used twice"),
    (lambda t: t.replace("| id | description |", "| key | description |"), "header must be"),
    (lambda t: t.replace("| t3 | docs | t1, t2 | no | 2 | next-round |", "| t3 | docs | no |"), "needs 6 cells"),
    (lambda t: t.replace("## Tasks", "## Work"), "no task table"),
])
def test_problems_name_the_file_and_the_fix(mutate, problem):
    rec = R.parse_record(mutate(GOOD), "records/r7.md")
    problems = R.validate(rec)
    assert any(problem in p for p in problems), problems
    assert all(p.startswith("records/r7.md") for p in problems)


def test_command_round_trip(repo, sg):
    p = sg(repo, "new", "r1", "--goal", "ship it", "--exit", "tests green", "--session", "s1")
    assert p.returncode == 0, p.stderr
    path = repo / "records" / "r1.md"
    assert p.stdout.strip() == str(path)
    assert sg(repo, "new", "r1", "--goal", "g", "--exit", "e").returncode == 251
    assert sg(repo, "add-task", "r1", "t1", "-d", "a | b", "--batch", "1", "--inputs-ready", "yes").returncode == 0
    assert sg(repo, "add-task", "r1", "t2", "-d", "hook", "--deps", "t1", "--batch", "2").returncode == 0
    p = sg(repo, "add-task", "r1", "t1", "-d", "again")
    assert p.returncode == 251 and "already" in p.stderr
    assert sg(repo, "update", "r1", "t2", "--inputs-ready", "yes").returncode == 0
    p = sg(repo, "verdict", "r1", "t1", "close")
    assert p.returncode == 0 and "open: t2" in p.stdout
    rec = R.load_record(path)
    assert [(t["id"], t["description"], t["inputs_ready"], t["verdict"]) for t in rec["tasks"]] == [
        ("t1", "a | b", True, "close"), ("t2", "hook", True, None)]
    assert rec["session"] == "s1" and rec["created"]
    p = sg(repo, "add-task", "r1", "t3", "-d", "x", "--deps", "t9")
    assert p.returncode == 251 and "depends on t9" in p.stderr
    p = sg(repo, "current")
    assert p.returncode == 0 and "round r1" in p.stdout and "t2" in p.stdout
    assert sg(repo, "verdict", "r1", "nosuch", "drop").returncode == 251


def test_edits_keep_everything_outside_the_table(repo, sg):
    (repo / "records").mkdir()
    path = repo / "records" / "r7.md"
    path.write_text(GOOD)
    assert sg(repo, "verdict", "r7", "t2", "drop").returncode == 0
    text = path.read_text()
    assert text.startswith("# Round r7\n\ngoal: wire the hooks\n") and text.endswith("why we split t2 from t3: ...\n")
    assert "| t2 | write the hook | t1 | no | 2 | drop |" in text


def test_a_task_removed_without_a_verdict_is_an_error_until_restored_or_judged(repo, sg):
    (repo / "records").mkdir()
    path = repo / "records" / "r7.md"
    path.write_text(GOOD)
    assert sg(repo, "validate", "r7").returncode == 0  # takes the snapshot
    # the agent deletes the open task t2 by hand
    path.write_text(GOOD.replace("| t2 | write the hook | t1 | no | 2 | |\n", "")
                    .replace("| t1, t2 |", "| t1 |"))
    p = sg(repo, "validate", "r7")
    assert p.returncode == 1 and "task t2 (write the hook) was removed without a verdict" in p.stderr
    assert "swarmgate records restore r7" in p.stderr
    # it is not forgotten by validating again, nor by an unrelated edit
    assert sg(repo, "validate").returncode == 1
    assert sg(repo, "verdict", "r7", "t3", "close").returncode == 1
    assert sg(repo, "validate", "r7").returncode == 1
    # a verdict on the removed id brings its row back with the verdict
    p = sg(repo, "verdict", "r7", "t2", "next-round")
    assert p.returncode == 0, p.stderr
    assert "| t2 | write the hook | t1 | no | 2 | next-round |" in path.read_text()
    assert sg(repo, "validate", "r7").returncode == 0


def test_restore_puts_back_the_rows(repo, sg):
    (repo / "records").mkdir()
    path = repo / "records" / "r7.md"
    path.write_text(GOOD)
    sg(repo, "validate")
    path.write_text(GOOD.replace("| t2 | write the hook | t1 | no | 2 | |\n", "").replace("| t1, t2 |", "| t1 |"))
    p = sg(repo, "restore", "r7")
    assert p.returncode == 0 and "restored t2" in p.stdout
    assert [t["id"] for t in R.load_record(path)["tasks"]] == ["t1", "t3", "t2"]


def test_a_judged_task_may_leave(repo, sg):
    (repo / "records").mkdir()
    path = repo / "records" / "r7.md"
    path.write_text(GOOD)
    sg(repo, "validate")
    path.write_text(GOOD.replace("| t1 | parse the config \\| schema | - | yes | 1 | close |\n", "")
                    .replace("| t1 | no | 2 | |", "| - | no | 2 | |").replace("| t1, t2 |", "| t2 |"))
    p = sg(repo, "validate", "r7")
    assert p.returncode == 0, p.stderr


def test_removed_tasks_pure_api():
    rec = R.parse_record(GOOD, "r7.md")
    snap = R.next_snapshot(rec, {})
    smaller = R.parse_record(GOOD.replace("| t2 | write the hook | t1 | no | 2 | |\n", ""), "r7.md")
    assert [r["id"] for r in R.removed_tasks(smaller, snap)] == ["t2"]
    assert "t2" in R.next_snapshot(smaller, snap)  # kept until judged or restored


def test_current_record_prefers_the_newest_open_round_of_this_session(repo):
    d = repo / "records"
    d.mkdir()
    (d / "README.md").write_text("not a record\n")
    closed = GOOD.replace("| 2 | |\n", "| 2 | drop |\n")
    (d / "old.md").write_text(GOOD)                                   # open, session sess-1
    (d / "mine.md").write_text(GOOD.replace("session: sess-1", "session: sess-2"))  # open, sess-2
    (d / "done.md").write_text(closed)                                # closed, newest
    now = time.time()
    for i, name in enumerate(("old.md", "mine.md", "done.md")):
        os.utime(d / name, (now + i, now + i))
    cfg = defaults()
    assert R.current_record(str(repo), cfg) == str(d / "mine.md")
    assert R.current_record(str(repo), cfg, session="sess-1") == str(d / "old.md")
    (d / "old.md").write_text(closed)
    os.utime(d / "old.md", (now, now))
    assert R.current_record(str(repo), cfg, session="sess-1") == str(d / "done.md")
    assert R.current_record(str(repo / "nowhere"), cfg) is None


def test_unreadable_record_is_a_clear_error(repo, sg):
    p = sg(repo, "validate", "nosuch")
    assert p.returncode == 251 and "no such record" in p.stderr
    p = sg(repo, "add-task", "../../etc", "t1", "-d", "x")
    assert p.returncode == 251 and "round name" in p.stderr


def test_selftest_switch_turns_the_cell_red():
    p = subprocess.run([tool("swarmgate"), "records", "--selftest"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    (line,) = [x for x in p.stdout.splitlines() if "records-forget-removed -> removed-task-is-an-error" in x]
    assert line.startswith("ok") and " red: " in line and line.endswith("(want red)"), line


def test_break_switch_outside_a_selftest_refuses(repo, monkeypatch, sg):
    monkeypatch.setenv("SWARMGATE_BREAK", "records-forget-removed")
    r = sg(repo, "validate")
    assert r.returncode == 251 and "outside a self-test" in r.stderr


def test_observe_record_watches_a_record_edited_only_by_hand(repo):
    (repo / "records").mkdir()
    path = repo / "records" / "r7.md"
    path.write_text(GOOD)
    assert R.observe_record(path) == []
    path.write_text(GOOD.replace("| t2 | write the hook | t1 | no | 2 | |\n", "").replace("| t1, t2 |", "| t1 |"))
    problems = R.observe_record(path)
    assert len(problems) == 1 and "t2" in problems[0] and "removed without a verdict" in problems[0]
    assert R.removed_tasks(R.load_record(path), R.read_snapshot(path))[0]["id"] == "t2"
