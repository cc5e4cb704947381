"""Records with verify and order: depends_on and batch order validated before anything is written,
`records verify` running a task's verify (pass, a failing retry, a real OOM under a cgroup cap,
a timeout, a refused heavy run) into exit classes S01 reads."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from swarmgate.agents import record_verify as V
from swarmgate.agents import records as R
from swarmgate.hosts.runner_selftest import Sandbox
from tests.agents.support import tool
from tests.hosts.cgroups import cgroups_writable, need_real

PLAN = """# Round r1

goal: ship the parser
exit: its tests pass

## Tasks

| id | description | deps | inputs ready | batch | verdict |
|----|-------------|------|--------------|-------|---------|
| t1 | write the parser | - | yes | 1 | |
| t2 | wire it in | t1 | no | 2 | |

## Notes
why: keep it small
"""


@pytest.fixture
def planned(repo, sg):
    (repo / "records").mkdir()
    path = repo / "records" / "r1.md"
    path.write_text(PLAN)
    assert sg(repo, "validate", "r1").returncode == 0
    return path


# --- order: validated before it is written ---------------------------------------------------

@pytest.mark.parametrize("args, problem", [
    (("add-task", "r1", "t3", "-d", "docs", "--deps", "t9"), "depends on t9, which is not in the table"),
    (("add-task", "r1", "t3", "-d", "docs", "--depends-on", "t2", "--batch", "2"),
     "task t3 (batch 2) depends on t2 (batch 2)"),
    (("update", "r1", "t1", "--deps", "t2"), "dependency cycle"),
    (("update", "r1", "t2", "--deps", "t2"), "depends on itself"),
    (("update", "r1", "t2", "--batch", "1"), "task t2 (batch 1) depends on t1 (batch 1)"),
])
def test_an_edit_that_adds_a_problem_leaves_the_record_byte_identical(repo, sg, planned, args, problem):
    before = planned.read_bytes()
    snap_before = open(R.snapshot_path(planned), "rb").read()
    p = sg(repo, *args)
    assert p.returncode == 251, p.stderr
    assert planned.read_bytes() == before
    assert open(R.snapshot_path(planned), "rb").read() == snap_before
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and "the record was not changed" in lines[0], p.stderr


def test_the_break_switch_lets_the_bad_row_through():
    """records-write-before-validate turns the byte-identical cell red (checked through --selftest)."""
    p = subprocess.run([tool("swarmgate"), "records", "--selftest"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    (line,) = [x for x in p.stdout.splitlines()
               if "records-write-before-validate -> bad-edit-leaves-the-record-unchanged" in x]
    assert line.startswith("ok") and " red: " in line and line.endswith("(want red)"), line


def test_a_record_already_broken_by_hand_still_takes_an_unrelated_edit(repo, sg, planned):
    planned.write_text(PLAN.replace("| t2 | wire it in | t1 |", "| t2 | wire it in | t7 |"))
    p = sg(repo, "verdict", "r1", "t1", "close")
    assert p.returncode == 1 and "depends on t7" in p.stderr  # still reported, not blocking
    assert "| t1 | write the parser | - | yes | 1 | close |" in planned.read_text()


def test_batch_defaults_to_one_after_the_latest_dependency(repo, sg, planned):
    assert sg(repo, "add-task", "r1", "t3", "-d", "docs", "--deps", "t1,t2").returncode == 0
    assert R.task_by_id(R.load_record(planned), "t3")["batch"] == 3
    assert sg(repo, "add-task", "r1", "t4", "-d", "notes").returncode == 0
    assert R.task_by_id(R.load_record(planned), "t4")["batch"] == 1


def test_batch_order_is_checked_for_open_tasks_only():
    text = PLAN.replace("| t1 | no | 2 | |", "| t1 | no | 1 | |")
    assert any("task t2 (batch 1) depends on t1 (batch 1)" in p
               for p in R.validate(R.parse_record(text, "records/r1.md")))
    done = text.replace("| t1 | no | 1 | |", "| t1 | no | 1 | close |")  # a finished task's row is history
    assert R.validate(R.parse_record(done, "records/r1.md")) == []


def test_every_cycle_is_found():
    rows = ("| t1 | a | t2 | no | 1 | |\n| t2 | b | t1 | no | 2 | |\n"
            "| t3 | c | t4 | no | 3 | |\n| t4 | d | t3 | no | 4 | |\n| t5 | e | t1 | no | 5 | |\n")
    text = PLAN.replace("| t1 | write the parser | - | yes | 1 | |\n| t2 | wire it in | t1 | no | 2 | |\n", rows)
    rec = R.parse_record(text, "records/r1.md")
    assert len(rec["tasks"]) == 5
    found = sorted(sorted(c) for c in R.cycles({t["id"]: t for t in rec["tasks"]}))
    assert found == [["t1", "t2"], ["t3", "t4"]], found
    assert sum("dependency cycle" in p for p in R.validate(rec)) == 2


def test_open_dependencies_name_each_state():
    text = PLAN + ""
    rec = R.parse_record(text.replace("| t2 | wire it in | t1 |", "| t2 | wire it in | t1, t0 |"), "r")
    t2 = R.task_by_id(rec, "t2")
    assert R.open_dependencies(rec, t2) == [("t1", "open"), ("t0", "not in the table")]
    rec = R.parse_record(text.replace("| 1 | |", "| 1 | next-round |"), "r")
    assert R.open_dependencies(rec, R.task_by_id(rec, "t2")) == [("t1", "next-round")]
    rec = R.parse_record(text.replace("| 1 | |", "| 1 | close |"), "r")
    assert R.open_dependencies(rec, R.task_by_id(rec, "t2")) == []


# --- the verify table ------------------------------------------------------------------------------

def test_verify_is_written_read_changed_and_removed(repo, sg, planned):
    assert sg(repo, "update", "r1", "t1", "--verify", "pytest -q tests/a | tee out.txt",
              "--max-retries", "2").returncode == 0
    text = planned.read_text()
    assert ("## Verify\n\n| task | command | expect exit | max retries |\n|----|----|----|----|\n"
            "| t1 | pytest -q tests/a \\| tee out.txt | 0 | 2 |\n\n## Notes\nwhy: keep it small\n") in text, text
    rec = R.load_record(planned)
    assert rec["verify"]["t1"]["command"] == "pytest -q tests/a | tee out.txt"
    assert (rec["verify"]["t1"]["expect_exit"], rec["verify"]["t1"]["max_retries"]) == (0, 2)
    assert sg(repo, "add-task", "r1", "t3", "-d", "docs", "--verify", "make docs", "--expect-exit", "2",
              "--cap", "512M").returncode == 0
    rec = R.load_record(planned)
    assert rec["verify"]["t3"] == {"command": "make docs", "expect_exit": 2, "max_retries": 0, "cap": 512 << 20,
                                   "line": rec["verify"]["t3"]["line"]}
    assert "| task | command | expect exit | max retries | cap |" in planned.read_text()
    assert sg(repo, "update", "r1", "t1", "--no-verify").returncode == 0
    assert set(R.load_record(planned)["verify"]) == {"t3"}
    assert sg(repo, "validate", "r1").returncode == 0


@pytest.mark.parametrize("row, problem", [
    ("| t9 | make | 0 | 0 |", "the verify row of t9 names no task"),
    ("| t1 | make | zero | 0 |", "expect exit = 'zero'"),
    ("| t1 | make | 0 | 99 |", "max retries = '99'"),
    ("| t1 | | 0 | 0 |", "the verify command is empty"),
    ("| t1 | make | 0 |", "a verify row needs 4 cells"),
])
def test_verify_table_problems(row, problem):
    text = PLAN.replace("## Notes", f"## Verify\n\n| task | command | expect exit | max retries |\n|-|-|-|-|\n{row}\n\n"
                                    "## Notes")
    assert any(problem in p for p in R.validate(R.parse_record(text, "records/r1.md"))), problem


def test_a_verdict_carries_a_reason(repo, sg, planned):
    assert sg(repo, "verdict", "r1", "t1", "close", "--reason", "checked by the gate run").returncode == 0
    assert "| close: checked by the gate run |" in planned.read_text()
    t1 = R.task_by_id(R.load_record(planned), "t1")
    assert (t1["verdict"], t1["note"]) == ("close", "checked by the gate run")


# --- records verify ----------------------------------------------------------------------------------

def _verify(repo, task, *extra, env=None, timeout=120):
    return subprocess.run([tool("swarmgate"), "records", "--repo", str(repo), "verify", task, *extra],
                          cwd=repo, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_pass_and_a_failing_retry_are_recorded(repo, sg, planned):
    counter = repo / "count"
    # fails on its first run, passes on the second
    flaky = f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; [ $n -ge 1 ]"
    assert sg(repo, "update", "r1", "t1", "--verify", "test -f records/r1.md").returncode == 0
    assert sg(repo, "update", "r1", "t2", "--verify", flaky, "--max-retries", "1").returncode == 0
    p = _verify(repo, "t1")
    assert p.returncode == 0, p.stderr
    p = _verify(repo, "t2")
    assert p.returncode == 0 and "attempt 1: fail (exit 1" in p.stderr and "attempt 2: pass" in p.stderr, p.stderr
    attempts = V.read_results(str(planned))
    assert [(a["task"], a["attempt"], a["class"], a["exit"]) for a in attempts] == [
        ("t1", 1, "pass", 0), ("t2", 1, "fail", 1), ("t2", 2, "pass", 0)]
    assert all(a["duration_s"] >= 0 and a["ended"] >= a["started"] for a in attempts)
    # the retries run out: a failure after max retries is "fail", exit 1
    assert sg(repo, "update", "r1", "t2", "--verify", "exit 3", "--max-retries", "2").returncode == 0
    p = _verify(repo, "t2")
    assert p.returncode == 1 and p.stderr.count(": fail (exit 3") == 3, p.stderr
    assert V.latest_results(str(planned))["t2"]["class"] == "fail"
    # an expected non-zero exit is a pass
    assert sg(repo, "update", "r1", "t2", "--expect-exit", "3", "--max-retries", "0").returncode == 0
    assert _verify(repo, "r1/t2").returncode == 0


def test_a_timeout_stops_the_whole_verify(repo, sg, planned):
    pidfile = repo / "pid"
    assert sg(repo, "update", "r1", "t1", "--verify", f"echo $$ > {pidfile}; exec sleep 60").returncode == 0
    p = _verify(repo, "t1", "--timeout", "1")
    assert p.returncode == 253, p.stderr
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), "the verify outlived its timeout"
    assert V.latest_results(str(planned))["t1"]["class"] == "timeout"


def test_a_heavy_verify_without_the_prefix_is_refused_and_nothing_runs(repo, sg, planned):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text('[heavy]\npatterns = ["make check-full"]\n')
    marker = repo / "ran"
    assert sg(repo, "update", "r1", "t1", "--verify", f"touch {marker} && make check-full").returncode == 0
    p = _verify(repo, "t1", env={"SWARMGATE_HEAVY": ""})
    assert p.returncode == 78 and "refused (78), nothing ran" in p.stderr and "SWARMGATE_HEAVY=commit" in p.stderr
    assert not marker.exists()
    assert V.latest_results(str(planned))["t1"]["class"] == "refused"


def test_no_verify_and_unknown_task_are_usage_errors(repo, sg, planned):
    p = _verify(repo, "t1")
    assert p.returncode == 251 and "has no verify" in p.stderr and "--verify" in p.stderr
    p = _verify(repo, "t9")
    assert p.returncode == 251 and "no task t9" in p.stderr


def test_exit_classes():
    assert V.exit_class(0, 0) == "pass" and V.exit_class(3, 3) == "pass"
    assert V.exit_class(1, 0) == "fail" and V.exit_class(None, 0) == "fail"
    assert V.exit_class(250, 0) == "fail"  # uncapped: 250 is just a failure
    assert [V.exit_class(c, 0, capped=True) for c in (250, 254, 253, 252, 251, 78, 2)] == [
        "oom", "pushed-out", "timeout", "refused", "refused", "refused", "fail"]
    assert V.exit_class(0, 0, timed_out=True) == "timeout"
    assert set(V.EXIT_OF) == set(V.CLASSES) and len(set(V.EXIT_OF.values())) == len(V.CLASSES)


# --- a real OOM under the cap (cgroup v1 here) ---------------------------------------------------------

HOG = "import sys, time\nb = bytearray(int(sys.argv[1]) << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n"


def test_oom_pass_and_fail_are_different_classes_under_a_real_cap(monkeypatch):
    need_real(cgroups_writable())

    sb = Sandbox(prefix="sgverify")
    try:
        sb.write_config('[heavy]\npatterns = ["python3 hog.py"]\n')
        repo = sb.repo
        with open(os.path.join(repo, "hog.py"), "w") as f:
            f.write(HOG)
        env = sb.env(SWARMGATE_HEAVY="commit")

        def records(*args):
            return subprocess.run([sys.executable, "-m", "swarmgate", "records", "--repo", repo, *args], cwd=repo,
                                  env=env, capture_output=True, text=True, timeout=120)

        assert records("new", "r1", "--goal", "g", "--exit", "e").returncode == 0
        for tid, mib in (("small", 16), ("big", 200)):
            p = records("add-task", "r1", tid, "-d", f"allocate {mib}M", "--verify", f"python3 hog.py {mib}",
                        "--cap", "64M", "--max-retries", "1")
            assert p.returncode == 0, p.stderr
        assert records("add-task", "r1", "bad", "-d", "fails", "--verify", "python3 hog.py x",
                       "--cap", "64M").returncode == 0
        small, big, bad = records("verify", "small"), records("verify", "big"), records("verify", "bad")
        assert small.returncode == 0, small.stderr
        assert big.returncode == 250, big.stderr
        assert "hit its own memory cap" in big.stderr and big.stderr.count("attempt 1/2") == 1
        assert "attempt 2/2" not in big.stderr  # an OOM is not retried: the same cap would hit again
        assert bad.returncode == 1, bad.stderr
        results = sb._with_state(lambda: V.latest_results(os.path.join(repo, "records", "r1.md")))
        assert {t: (r["class"], r["exit"]) for t, r in results.items()} == {
            "small": ("pass", 0), "big": ("oom", 250), "bad": ("fail", 1)}
        assert results["big"]["cap"] == 64 << 20 and results["big"]["heavy"].startswith("`python3 hog.py`")
    finally:
        sb.cleanup()
