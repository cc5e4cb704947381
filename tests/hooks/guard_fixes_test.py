"""Guard-side fixes of issue 11: dry-run words per program, B30 judging the parsed condition,
W01 not reading perl's expression as a file, T01 not refusing a sleep before real work."""
from __future__ import annotations

import pytest

from swarmgate.hooks.writers_text import perl_inplace_files

CONFIG = """\
[heavy]
patterns = ["cargo test --workspace", "cargo test --all", "make check-full", "bash .claude/gate.d/*"]
[write]
main = ["**"]
implementer = ["src/**", "tests/**"]
"""


@pytest.fixture
def cjudge(judge):
    judge.config_text = CONFIG
    return judge


@pytest.mark.parametrize("command", [
    "npm run test:e2e --list",
    "npm run ci --list",
    "bash .claude/gate.d/replay.sh --help",
    "npm test --list",
])
def test_dry_run_words_of_another_program_run_it(cjudge, command):
    cjudge.write({"package.json": '{"scripts": {"test:e2e": "cargo test --workspace", '
                                  '"ci": "cargo test --workspace", "test": "cargo test --workspace"}}',
                  ".claude/gate.d/replay.sh": "#!/bin/bash\ncargo run --bin replay\n"})
    assert "B01" in cjudge.codes(command, subagent=True), command


@pytest.mark.parametrize("command", [
    "cargo test --workspace --no-run",
    "cargo test --workspace -- --list",
    "pytest --collect-only -q",
    "python3 -m pytest --co",
    "make -n check-full",
    "just --list",
])
def test_dry_run_words_of_the_program_itself_are_not_runs(cjudge, command):
    cjudge.write({"justfile": "default:\n    cargo test --workspace\n"})
    assert "B01" not in cjudge.codes(command, subagent=True), command


@pytest.mark.parametrize("loop", [
    "while [ 1 -eq 1 ]; do sleep 5; done",
    "until [ 0 -eq 1 ]; do sleep 5; done",
    "while true; do sleep 5; done",
    "while :; do curl -s localhost:8080 && break; sleep 5; done",
    "while (( 1 < 2 )); do sleep 1; done",
    "n=0; while [ $n -lt 10 ]; do sleep 1; done",
    "until [ \"$(curl -so /dev/null -w '%{http_code}' x)\" -eq 200 ]; do sleep 2; done",
])
def test_b30_constant_or_unchanging_conditions_do_not_bound(cjudge, loop):
    assert "B30" in cjudge.codes(loop, subagent=True), loop


@pytest.mark.parametrize("loop", [
    "n=0; while [ $n -lt 10 ]; do sleep 1; n=$((n+1)); done",
    "i=0; while (( i < 30 )); do sleep 1; ((i++)); done",
    "end=$((SECONDS+60)); while [ $SECONDS -lt $end ]; do sleep 1; done",
    "tries=0; until curl -s x || [ $tries -ge 20 ]; do sleep 3; tries=$((tries+1)); done",
    "while read -r f; do sleep 1; done < list.txt",
])
def test_b30_moving_counters_bound(cjudge, loop):
    assert "B30" not in cjudge.codes(loop, subagent=True), loop


@pytest.mark.parametrize("args, files", [
    (["-i", "-pe", "s/a/b/", "src/x.rs"], ["src/x.rs"]),
    (["-pi", "-e", "s/a/b/", "a", "b"], ["a", "b"]),
    (["-pi.bak", "-e", "s/a/b/", "f"], ["f"]),
    (["-i.orig", "-p", "fix.pl", "f"], ["f"]),
    (["-ne", "print", "f"], []),
])
def test_perl_inplace_files(args, files):
    assert perl_inplace_files(args) == files


def test_w01_does_not_read_perls_expression_as_a_file(cjudge):
    codes = cjudge.codes("perl -i -pe 's/old/new/g' src/lib.rs", subagent=True)
    assert "W01" not in codes
    codes = cjudge.codes("perl -i -pe 's/old/new/g' README.md", subagent=True)
    assert "W01" in codes   # the file itself is still judged (implementers write src/ and tests/)


@pytest.mark.parametrize("command, fires", [
    ("sleep 90; make build; echo built", False),
    ("sleep 120 && cargo build && echo done", False),
    ("sleep 300; echo 'check CI'", True),
    ("sleep 300 && date && echo 'look at the run'", True),
])
def test_t01_sleep_before_real_work_is_a_wait(cjudge, command, fires):
    assert ("T01" in cjudge.codes(command, subagent=True)) is fires, command
