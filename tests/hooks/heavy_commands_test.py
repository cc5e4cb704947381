"""Which commands of a shell call are heavy (hooks/heavy_commands.py): a run reached *as* `make TARGET`
or `npm run NAME` is judged as that run.

A makefile fed on stdin (`make -f - x`) that names the heavy target as a prerequisite runs that target's
recipe, whose lines need not look heavy (`touch marker; echo ran`): the exec-time shim cannot read the
makefile (stdin is gone by then), so reading has to see it. Found running the exec corpus
(makefiles-on-stdin) with the guards on.
"""
from __future__ import annotations

import pytest

from swarmgate import guard as G
from swarmgate.hooks.heavy_commands import via_argvs

CONFIG = '[heavy]\npatterns = ["make check-full", "npm run e2e"]\n'
FILES = {
    "Makefile": "check-full:\n\t@touch done; echo full checks ran\nbuild:\n\t@echo built\n",
    "package.json": '{"scripts": {"e2e": "node -e 1", "ci": "npm run e2e", "build": "echo b"}}\n',
}

HEAVY = [
    "printf 'include Makefile\\nx: check-full\\n' | make -f - x",
    "make -f /dev/stdin y <<< $'include Makefile\\ny: check-full'",
    "make --eval='z: check-full' z",
    "make check-full",
    "npm run ci",
]
CONTROLS = [
    "printf 'include Makefile\\nx: build\\n' | make -f - x",
    "make -n check-full",
    "make build",
    "npm run build",
]


@pytest.fixture
def hjudge(judge):
    judge.config_text = CONFIG
    judge.write(FILES)
    return judge


def b01(j, command: str) -> list:
    return [f for f in j.findings(command, subagent=True) if f.code == "B01"]


@pytest.mark.parametrize("command", HEAVY)
def test_a_run_reached_as_a_heavy_target_is_heavy(hjudge, command):
    found = b01(hjudge, command)
    assert found and all(f.decision == G.DENY for f in found), command
    assert "heavy test refused" in found[0].message and "`make check-full`" in found[0].message \
        or "npm run e2e" in found[0].message


@pytest.mark.parametrize("command", CONTROLS)
def test_a_run_reached_as_a_light_target_is_not(hjudge, command):
    assert b01(hjudge, command) == [], command


def test_one_refusal_per_target_reached():
    class C:
        via = ("pipeline", "make:x", "make:check-full", "list")

    assert via_argvs(C) == [(("pipeline", "make:x"), ["make", "x"]),
                            (("pipeline", "make:x", "make:check-full"), ["make", "check-full"])]


def test_the_stdin_makefile_case_is_refused_once(hjudge):
    assert len(b01(hjudge, "printf 'include Makefile\\nx: check-full\\n' | make -f - x")) == 1
