"""G01 on what a command does to swarmgate's variables and files (issue 11), firing and not
firing, for a subagent and for the main agent; and the workarounds a refused agent tries next."""
from __future__ import annotations

import os
import sys

import pytest

import swarmgate
from swarmgate.hooks.env_changes import changes
from swarmgate.hooks.protected_paths import protected_reason
from swarmgate.state_paths import selftest_marker_dir


def g01(judge, command: str, *, subagent: bool) -> list:
    return [f for f in judge.findings(command, subagent=subagent) if f.code == "G01" and f.decision == "deny"]


# a subagent changing a SWARMGATE_* variable, in every form bash has
SUBAGENT_REFUSED = [
    "SWARMGATE_STATE_DIR=/tmp/x",                                   # bare assignment, alone
    "SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap 1G -- make",    # ... in front of a command
    "set -a; SWARMGATE_BREAK=no-long-job-check; host-dispatch -- make",
    "set -a\nSWARMGATE_HOSTS_CONFIG=/tmp/h.toml\nmulti-host-run --peer b -- make",
    "export SWARMGATE_STATE_DIR=/tmp/x",
    "SWARMGATE_X=1; export SWARMGATE_X",
    "declare -x SWARMGATE_STATE_DIR=/tmp/x", "typeset -gx SWARMGATE_X=1", "local SWARMGATE_X=1",
    "readonly SWARMGATE_STATE_DIR", "declare -n ref=SWARMGATE_STATE_DIR; ref=/tmp/x",
    "env -u SWARMGATE_STATE_DIR run-with-memory-cap 1G -- make", "env --unset=SWARMGATE_HOSTS_CONFIG ls",
    "env SWARMGATE_STATE_DIR=/tmp/x make", "unset SWARMGATE_STATE_DIR", "unset -v SWARMGATE_HOSTS_CONFIG",
    "printf -v SWARMGATE_HEAVY %s commit", "read SWARMGATE_STATE_DIR <<< /tmp/x",
    "read -r -p '' SWARMGATE_X < f", "mapfile -t SWARMGATE_L < f", "getopts ab SWARMGATE_O",
    "let SWARMGATE_N=1", ": ${SWARMGATE_STATE_DIR:=/tmp/x}", "((SWARMGATE_N=2))", "echo $((SWARMGATE_N+=1))",
    "for SWARMGATE_STATE_DIR in /tmp/x; do make; done",
    "eval 'SWARMGATE_STATE_DIR=/tmp/x'", 'eval "export SWARMGATE_X=1"',
    'bash -c "export SWARMGATE_STATE_DIR=/tmp/x; make"', "sh -c 'unset SWARMGATE_HOSTS_CONFIG'",
    "x=$(SWARMGATE_Q=1 true)", 'export "$name=1"',
    "python3 -c \"import os; os.environ['SWARMGATE_BREAK']='x'; os.execvp('make', ['make'])\"",
    "node -e \"process.env.SWARMGATE_STATE_DIR='/tmp/x'; require('child_process').execSync('make')\"",
    "perl -e '$ENV{SWARMGATE_STATE_DIR}=\"/tmp/x\"; system(\"make\")'",
    "python3 -c \"import subprocess, os; subprocess.run(['make'], env=dict(os.environ, SWARMGATE_STATE_DIR='/x'))\"",
]


@pytest.mark.parametrize("command", SUBAGENT_REFUSED)
def test_a_subagent_changing_a_swarmgate_variable_is_refused(judge, command):
    found = g01(judge, command, subagent=True)
    assert found, command
    assert "SWARMGATE_" in found[0].message or "variable" in found[0].message


SUBAGENT_ALLOWED = [
    "echo \"SWARMGATE_HEAVY=commit\"", "grep -rn 'SWARMGATE_STATE_DIR=' docs", "echo $SWARMGATE_STATE_DIR",
    "git commit -m 'document SWARMGATE_STATE_DIR=/tmp/x for tests'", "printf '%s\\n' SWARMGATE_X",
    "SWARMGATE_RUN_SCOPE='kind=items; target=tests/x; range=one file; reason=only this parser changed' pytest tests/x",
    "export SWARMGATE_RUN_SCOPE='kind=target; target=lib; range=crate lib; reason=only lib changed here'; "
    "cargo test -p lib",
    "python3 -c \"import os; print(os.environ.get('SWARMGATE_STATE_DIR'))\"",
    "A=1 B=2 make && export CFLAGS=-O2", "for f in src/*.rs; do wc -l $f; done", "read -r line < notes.txt",
]


@pytest.mark.parametrize("command", SUBAGENT_ALLOWED)
def test_a_subagent_reading_or_mentioning_a_variable_passes(judge, command):
    assert not g01(judge, command, subagent=True), command


# any agent: swarmgate's tools pointed at another state dir, hosts config or home
LOCATION_REFUSED = [
    "SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap 8G -- make",
    "env SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap 8G -- make",
    "export SWARMGATE_STATE_DIR=/tmp/x; host-dispatch --mem 2G -- make",
    "SWARMGATE_HOSTS_CONFIG=/tmp/h.toml multi-host-run --peer b -- make",
    "HOME=/tmp/h host-dispatch -- make", "HOME=/tmp/h; run-with-memory-cap 1G -- make",
    "XDG_CONFIG_HOME=/tmp/c host-resources", "env -u HOME swarmgate status",
    "SWARMGATE_CGROUP_ROOT=/tmp/fake run-with-memory-cap 1G -- make",
    "cd /tmp && SWARMGATE_STATE_DIR=/tmp/x timeout 60 run-with-memory-cap 1G -- make",
    "bash -c 'SWARMGATE_STATE_DIR=/tmp/x run-with-memory-cap 1G -- make'",
    "python3 -c \"import subprocess, os; subprocess.run(['run-with-memory-cap', '1G', '--', 'make'], "
    "env={**os.environ, 'SWARMGATE_STATE_DIR': '/tmp/x'})\"",
]


@pytest.mark.parametrize("command", LOCATION_REFUSED)
@pytest.mark.parametrize("subagent", [False, True])
def test_pointing_swarmgates_tools_elsewhere_is_refused_for_every_agent(judge, command, subagent):
    assert g01(judge, command, subagent=subagent), command


MAIN_ALLOWED = [
    "HOME=/tmp/h git status && run-with-memory-cap 1G -- make",
    "SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; target=all; range=everything; reason=commit gate' "
    "run-with-memory-cap 8G -- cargo test --workspace",
    "export HOME=/tmp/h; make", "SWARMGATE_STATE_DIR=/tmp/x ls",
]


@pytest.mark.parametrize("command", MAIN_ALLOWED)
def test_the_main_agent_may_set_what_reaches_no_swarmgate_tool(judge, command):
    assert not g01(judge, command, subagent=False), command


INTERPRETER_WRITES = [
    "python3 -c \"open('.claude/settings.json','w').write('{}')\"",
    "python3 -c \"import os; open(os.path.join('.claude', 'settings.json'), 'w')\"",
    "python3 -c \"from pathlib import Path; Path('.claude/swarmgate.toml').write_text('')\"",
    "perl -e 'open(F, \">.claude/settings.local.json\"); print F \"{}\"'",
    "node -e \"require('fs').writeFileSync('.claude/settings.json', '{}')\"",
    "python3 - <<'EOF'\nopen('.swarmgate/log/decisions.jsonl', 'w')\nEOF",
    "bash -c \"python3 -c \\\"open('.claude/settings.json','a')\\\"\"",
]


@pytest.mark.parametrize("command", INTERPRETER_WRITES)
@pytest.mark.parametrize("subagent", [False, True])
def test_interpreters_writing_protected_paths_are_refused(judge, command, subagent):
    assert g01(judge, command, subagent=subagent), command


@pytest.mark.parametrize("command", [
    "python3 -c \"import json; print(json.load(open('.claude/settings.json'))['hooks'].keys())\"",
    "python3 -c \"import sys; sys.stdout.write(open('.claude/swarmgate.toml').read())\"",
    "python3 -c \"open('notes.txt', 'w').write('x')\"",
])
def test_interpreters_reading_protected_paths_pass(judge, command):
    assert not g01(judge, command, subagent=True), command


@pytest.mark.parametrize("command", ["SWARMGATE_BREAK=x ls", "set -a; SWARMGATE_BREAK=x; ls",
                                     "export SWARMGATE_SELFTEST_TOKEN=" + "a" * 32, "SWARMGATE_SELFTEST_CASE=1 ls",
                                     "python3 -c \"import os; os.environ['SWARMGATE_BREAK']='x'\""])
def test_break_switch_and_self_test_variables_are_refused_for_the_main_agent_too(judge, command):
    assert g01(judge, command, subagent=False), command


def test_a_script_that_sets_the_variable_is_read_and_refused(judge):
    """The next workaround after a refused one-liner: put the assignment in a script and run it."""
    judge.write({"tools/env.sh": "#!/bin/bash\nset -a\nSWARMGATE_STATE_DIR=/tmp/x\n",
                 "tools/run.sh": "#!/bin/bash\nsource tools/env.sh\nrun-with-memory-cap 1G -- make\n"})
    assert g01(judge, "bash tools/run.sh", subagent=True)
    assert g01(judge, "bash tools/run.sh", subagent=False)  # the runner would see the private state dir


def test_env_i_drops_swarmgate_variables_only_when_some_are_set(judge, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", "/var/tmp/swarmgate-test")
    assert g01(judge, "env -i PATH=/usr/bin make", subagent=True)
    assert g01(judge, "env -i PATH=/usr/bin run-with-memory-cap 1G -- make", subagent=False)
    for k in [k for k in os.environ if k.startswith("SWARMGATE_")]:
        monkeypatch.delenv(k)
    assert not g01(judge, "env -i PATH=/usr/bin make", subagent=True)


def test_env_i_running_a_program_that_starts_nothing_changes_nothing_swarmgate_reads(judge, monkeypatch):
    """The narrowest sound rule (real-world: `env --ignore-environment ls`): clearing the environment
    of ls, printenv, id... reaches no program that reads SWARMGATE_*; a program that may start
    others (make, a shell, an interpreter, swarmgate's tools, an unknown one) is still refused."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", "/var/tmp/swarmgate-test")
    for cmd in ("env --ignore-environment ls", "env -i ls -la", "env -i FOO=1 printenv", "env -i", "env -i -- id"):
        assert not g01(judge, cmd, subagent=True), cmd
    for cmd in ("env -i sh -c 'run-with-memory-cap 1G -- make'", "env -i python3 tool.py", "env -i ./ls",
                "env -i mytool", "env -i -S 'ls; make'", "env --ignore-environment bash"):
        assert g01(judge, cmd, subagent=True), cmd
    assert changes("env -i ls") == []


def test_the_marker_directory_is_protected(judge):
    assert g01(judge, f"echo tok > {selftest_marker_dir()}/marker-{'a' * 32}", subagent=False)


def test_the_reader_of_variable_changes_names_each_form():
    assert changes("set -a; SWARMGATE_X=1") == [("SWARMGATE_X", "assignment")]
    assert changes("SWARMGATE_X=1 make") == [("SWARMGATE_X", "prefix")]
    assert ("*", "env -i") in changes("env -i make")
    assert changes("echo 'SWARMGATE_X=1'") == []


def test_the_swarmgate_that_runs_the_hooks_is_protected(judge):
    """Its venv (the entry point settings.json calls: `exit 0` there and every hook allows) and, from
    another repository, its code."""
    entry = os.path.join(sys.prefix, "bin", "swarmgate")
    code = os.path.join(os.path.dirname(os.path.abspath(swarmgate.__file__)), "hook_engine.py")
    for cmd in (f"printf '#!/bin/sh\\nexit 0\\n' > {entry}", f"sed -i 's/deny/allow/' {code}", f"rm -rf {sys.prefix}"):
        for subagent in (False, True):
            assert g01(judge, cmd, subagent=subagent), cmd
    from swarmgate.hooks.file_guards import check_g01_files  # noqa: PLC0415 - the file-tool side, not Judge's
    found = check_g01_files(judge.event(tool="Write", tool_input={"file_path": entry, "content": "x"}), judge.config)
    assert [f.code for f in found] == ["G01"] and "runs the hooks" in found[0].message


def test_swarmgates_own_checkout_may_edit_its_code_but_not_its_venv(tmp_path):
    """Developing swarmgate in its checkout: the code is the work; the venv running the hooks is not."""
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(swarmgate.__file__)))
    code = os.path.join(checkout, "hooks", "heavy_guards.py")
    if not os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        return  # a regular install: there is no checkout to develop in
    assert protected_reason(code, cwd=checkout, repo=checkout, state_dir=str(tmp_path)) is None
    assert protected_reason(code, cwd=str(tmp_path), repo=str(tmp_path), state_dir=str(tmp_path))
    assert protected_reason(os.path.join(sys.prefix, "bin", "swarmgate"), cwd=checkout, repo=checkout,
                            state_dir=str(tmp_path))
