"""What runs a string it was given (hooks/string_runners.py, issue 24 item 4), and Python's own module
runners, the dynamic loader and the file find runs (hooks/bash_wrappers.py, bash_walker): each HEAVY
command is refused under B01 for a subagent, each CONTROL passes B01. The same classes run for real
in the execution harness (tests/exec/corpus/exec_corpus.py: bash-callbacks, programs-running-a-string,
git-configured-programs, python-module-runners, find-runs-what-it-finds)."""
from __future__ import annotations

import pytest

from swarmgate import guard as G
from swarmgate.hooks.code_scan import scan_code
from swarmgate.hooks.string_runners import found

CONFIG = '[heavy]\npatterns = ["cargo test --workspace", "make check-full", "pytest tests/heavy*"]\n'

HEAVY = [
    # bash builtins that evaluate a string
    "mapfile -t -C 'cargo test --workspace #' -c 1 a <<< x",
    "readarray -C 'make check-full #' -c 1 a < README.md",
    "compgen -C 'cargo test --workspace' x",
    "complete -C 'make check-full' mytool",
    "mapfile -C'cargo test --workspace #' a <<< x",
    "x='$(cargo test --workspace)'; : \"${x@P}\"",
    "x='`make check-full`'; echo ${x@P}",
    # programs with an option, an argument or a variable that names a command
    "sqlite3 :memory: '.shell cargo test --workspace'",
    "sqlite3 -cmd '.system make check-full' db 'select 1'",
    "zip -T -TT 'cargo test --workspace #' x.zip",
    "zip -T --unzip-command='make check-full #' x.zip",
    "rsync -e 'cargo test --workspace' a h:b",
    "rsync --rsh='make check-full' a h:b",
    "ssh -o ProxyCommand='cargo test --workspace' h true",
    "ssh -o 'ProxyCommand make check-full' h true",
    "scp -o ProxyCommand='cargo test --workspace' a h:b",
    "socat - EXEC:'cargo test --workspace',pty",
    "socat - SYSTEM:'make check-full'",
    "dc -e '1 p !cargo test --workspace'",
    "LESSOPEN='|cargo test --workspace %s' less README.md",
    "man -P 'make check-full' ls",
    # git starting a configured program
    "git -c core.editor='cargo test --workspace #' commit --allow-empty",
    "git -c CORE.EDITOR='make check-full' commit",
    "GIT_EDITOR='cargo test --workspace #' git commit",
    "EDITOR='make check-full' git commit",
    "GIT_SEQUENCE_EDITOR='cargo test --workspace #' git rebase -i HEAD",
    "GIT_EXTERNAL_DIFF='make check-full' git diff",
    "git -c diff.external='cargo test --workspace' diff",
    "git -c core.fsmonitor='make check-full' status",
    "export GIT_EDITOR='cargo test --workspace #'; git commit",
    "EDITOR='make check-full #' crontab -e",
    # Python's module runners around pytest, the loader, terminals
    "python3 -m cProfile -o /dev/null -m pytest tests/heavy",
    "python3 -m profile -m pytest tests/heavy",
    "python3 -m trace --count --module pytest tests/heavy",
    "python3 -m pdb -c continue -m pytest tests/heavy",
    "coverage run -m pytest tests/heavy",
    "python3 -m coverage run --source=src -m pytest tests/heavy",
    "/lib64/ld-linux-x86-64.so.2 /usr/bin/make check-full",
    "/lib64/ld-linux-x86-64.so.2 --library-path /x /root/.cargo/bin/cargo test --workspace",
    "xterm -e cargo test --workspace",
    # find running each file it finds
    "find /usr/bin -name make -exec {} check-full \\;",
    "find / -path '*/bin/cargo' -exec {} test --workspace \\;",
    "find / -name 'c[a]rgo' -exec {} test --workspace \\;",
]

CONTROLS = [
    "mapfile -t lines < README.md",
    "readarray -t -C 'echo' -c 10 a < README.md",
    "compgen -A file REA",
    "complete -F _git git",
    "x=hi; echo \"${x@P}\"",
    "sqlite3 :memory: 'select 1'",
    "sqlite3 db '.tables'",
    "zip -q x.zip README.md",
    "zip -T -TT 'unzip -tqq' x.zip",
    "rsync -e 'ssh -p 2222' a h:b",
    "ssh -o ProxyCommand='ssh -W %h:%p bastion' h true",
    "socat - TCP:localhost:80",
    "dc -e '2 3 + p'",
    "LESSOPEN='|lesspipe %s' less README.md",
    "git -c core.editor=vim commit",
    "GIT_EDITOR=true git commit -m x",
    "EDITOR=nano git rebase -i HEAD~2",
    "git -c user.name=x commit -m y",
    "python3 -m cProfile -o /dev/null src/main.py",
    "python3 -m trace --count src/main.py",
    "python3 -m timeit -n 1 pass",
    "coverage report",
    "coverage run -m pytest tests/unit",
    "/lib64/ld-linux-x86-64.so.2 --list /usr/bin/make",
    "xterm -e htop",
    "find . -name '*.py' -exec wc -l {} +",
    "find /usr/bin -name make -exec {} --version \\;",
    "python3 -c \"import pytest; pytest.main(['-q', 'tests/unit'])\"",
]


@pytest.fixture
def sjudge(judge):
    judge.config_text = CONFIG
    judge.write({"README.md": "x\n", "tests/heavy/test_h.py": "", "tests/unit/test_u.py": ""})
    return judge


def b01(j, command: str) -> list:
    return [f for f in j.findings(command, subagent=True) if f.code == "B01"]


@pytest.mark.parametrize("command", HEAVY)
def test_a_command_run_from_a_string_is_read(sjudge, command):
    got = b01(sjudge, command)
    assert got and all(f.decision == G.DENY for f in got), f"B01 missed {command!r}"


@pytest.mark.parametrize("command", CONTROLS)
def test_what_runs_nothing_heavy_passes(sjudge, command):
    assert b01(sjudge, command) == [], command


def test_a_value_that_cannot_be_read_is_named():
    """A dynamic value is left unverifiable (None text), with the program and option that run it."""
    got = found("zip", ["-T", "-TT", "$CMD", "x.zip"], [-1, -1, 3, -1], {}, {})
    assert got == [("zip -TT", None, "$CMD")]
    assert found("git", ["commit"], [-1], {"GIT_EDITOR": "vim"}, {}) == [("git GIT_EDITOR", "vim", "vim")]
    assert found("git", ["commit"], [-1], {}, {"EDITOR": None})[0][1] is None   # set to what we cannot read
    assert found("socat", ["-", "EXEC:make check-full,pty"], [-1, -1], {}, {}) == [
        ("socat EXEC:", "make check-full", "EXEC:make check-full,pty")]
    assert found("dc", ["-e", "2 p"], [-1, -1], {}, {}) == []


def test_a_glob_pattern_word_needs_its_stem_in_the_code():
    """The one-liner scan's last resort (the words are there and the code can run commands): a glob word
    must leave its text before the wildcard, so `pytest.main(['tests/unit'])` is not `pytest tests/heavy*`."""
    assert scan_code("import pytest; pytest.main(['-q', 'tests/unit'])", ["pytest tests/heavy*"]) is None
    assert scan_code("import pytest; pytest.main(['tests/heavy'])", ["pytest tests/heavy*"]) == "pytest tests/heavy*"
