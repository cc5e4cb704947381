"""Shell commands inside interpreter code (hooks/embedded_shell.py), and the reader walking them for
every guard (bash_walker_rare ``_embedded_commands``): W01 sees ``os.system("rm -rf docs")``."""
from __future__ import annotations

import subprocess

import pytest

from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.embedded_shell import VALUE, shell_calls, shell_texts

V = VALUE


@pytest.mark.parametrize("interp,code,want", [
    # python
    ("python3", 'import os; os.system("rm -rf docs")', [("os.system", "rm -rf docs")]),
    ("python3", 'import os; print(os.popen("ls -l").read())', [("os.popen", "ls -l")]),
    ("python3", 'import subprocess; subprocess.run("make clean", shell=True)', [("subprocess.run", "make clean")]),
    ("python3", 'import subprocess; subprocess.check_call(["rm", "-rf", "a b"])',
     [("subprocess.check_call", "rm -rf 'a b'")]),
    ("python3", 'import subprocess as sp; sp.Popen("ls | wc -l", shell=True)', [("subprocess.Popen", "ls | wc -l")]),
    ("python3", 'import subprocess; print(subprocess.getoutput("git status"))',
     [("subprocess.getoutput", "git status")]),
    ("python3", 'from os import system; system("make clean")', [("os.system", "make clean")]),
    ("python3", 'from subprocess import run as sh; sh(["cargo", "test"])', [("subprocess.run", "cargo test")]),
    ("python3", '__import__("os").system("rm -rf a")', [("os.system", "rm -rf a")]),
    ("python3", 'import pty; pty.spawn(["bash", "-c", "rm -rf d"])', [("pty.spawn", "bash -c 'rm -rf d'")]),
    ("python3", 'import os; os.execvp("rm", ["rm", "-rf", "docs"])', [("os.execvp", "rm -rf docs")]),
    ("python3", 'import subprocess; subprocess.run("rm -rf docs".split())', [("subprocess.run", "rm -rf docs")]),
    ("python3", 'import os; os.system("rm " "-rf " + "docs")', [("os.system", "rm -rf docs")]),
    ("python3", 'import os; os.system(f"rm -rf {d}/x")', [("os.system", f"rm -rf {V}/x")]),
    ("python3", 'import os; os.system("rm -rf %s" % d)', [("os.system", f"rm -rf {V}")]),
    ("python3", 'import os; os.system("rm -rf {}".format(d))', [("os.system", f"rm -rf {V}")]),
    ("python3", 'import os; os.system("rm -rf " + d + "/x")', [("os.system", f"rm -rf {V}/x")]),
    # node
    ("node", 'require("child_process").execSync("rm -rf docs")', [("child_process.execSync", "rm -rf docs")]),
    ("node", 'const cp = require("child_process"); cp.spawnSync("rm", ["-rf", "docs"])',
     [("child_process.spawnSync", "rm -rf docs")]),
    ("node", 'const { exec } = require("child_process"); exec(`rm -rf ${d}`)', [("child_process.exec", f"rm -rf {V}")]),
    ("node", 'import { execFile } from "node:child_process"; execFile("git", ["status"])',
     [("child_process.execFile", "git status")]),
    ("bun", 'import { $ } from "bun"; await $`rm -rf docs`', [("Bun.$", "rm -rf docs")]),
    # perl
    ("perl", 'system("rm -rf docs")', [("system", "rm -rf docs")]),
    ("perl", 'system "rm", "-rf", "docs"; print "done\\n"', [("system", "rm -rf docs")]),
    ("perl", 'exec "make clean"', [("exec", "make clean")]),
    ("perl", 'my $x = `rm -rf docs`; print $x', [("backticks", "rm -rf docs")]),
    ("perl", 'my @l = qx{ls -l docs}; my $y = qx(git status);', [("qx", "ls -l docs"), ("qx", "git status")]),
    # ruby
    ("ruby", 'system("rm", "-rf", "docs")', [("system", "rm -rf docs")]),
    ("ruby", 'system "make clean"', [("system", "make clean")]),
    ("ruby", 'x = `rm -rf #{d}`', [("backticks", f"rm -rf {V}")]),
    ("ruby", 'x = %x(ls -l)', [("%x", "ls -l")]),
    ("ruby", 'require "open3"; o, s = Open3.capture2("git status")', [("Open3.capture2", "git status")]),
    ("ruby", 'IO.popen(["ls", "-l"]).read', [("IO.popen", "ls -l")]),
    ("ruby", 'exec({"A" => "1"}, "make")', [("exec", "make")]),
    # php
    ("php", '$o = shell_exec("rm -rf docs"); echo `ls`;', [("shell_exec", "rm -rf docs"), ("backticks", "ls")]),
    ("php", 'passthru("make"); system("git status");', [("passthru", "make"), ("system", "git status")]),
])
def test_commands_the_code_hands_to_a_shell(interp, code, want):
    assert shell_calls(interp, code) == want
    assert shell_texts(interp, code) == [t for _, t in want]


@pytest.mark.parametrize("interp,code", [
    # printed, or data: a sink word inside a literal is no call
    ("python3", 'print("rm -rf docs")'),
    ("python3", 'print("os.system(\'rm -rf docs\')")'),
    ("python3", 'x = ["rm", "-rf", "docs"]; print(x)'),
    ("python3", '# os.system("rm -rf docs")\nprint(1)'),
    ("python3", 'import asyncio; asyncio.run(main())'),          # run of another module
    ("python3", 'session.run("rm", "-rf", "docs")'),               # not subprocess
    ("python3", 'import os; f = os.system'),                       # named, not called
    ("python3", 'import os; os.system(cmd)'),                      # nothing literal to read
    ("python3", 'exec("print(1)")'),                               # python's exec runs python
    # JavaScript: a template string is no command, a regex's exec is no child process
    ("node", 'console.log(`rm -rf docs`)'),
    ("node", 'const s = `rm -rf ${d}`; console.log(s)'),
    ("node", 'const r = /x/.exec("rm -rf docs")'),
    ("node", 'exec("rm -rf docs")'),                               # no child_process in sight
    # perl, ruby, php
    ("perl", 'print "rm -rf docs\\n"'),
    ("perl", 'my $s = "system(\'rm -rf docs\')"; print $s'),
    ("perl", '$obj->system("rm -rf docs")'),
    ("ruby", 'puts "system(rm -rf docs)"'),
    ("ruby", 'obj.system("rm -rf docs")'),
    ("php", '$pdo->exec("DELETE FROM t");'),
    ("php", 'echo "shell_exec(rm)";'),
    # no sink word at all, or a language without a reader here
    ("python3", "import json; json.dumps({'a': 1})"),
    ("awk", '{ system("rm -rf docs") }'),
    ("lua", 'os.execute("rm -rf docs")'),
])
def test_nothing_where_the_code_runs_no_shell_command(interp, code):
    assert shell_texts(interp, code) == []


def _walked(an):
    return [(" ".join(c.words), c.via) for c in an.commands]


@pytest.mark.parametrize("command,words,via", [
    ("python3 -c 'import os; os.system(\"rm -rf docs\")'", "rm -rf docs", ("python3 os.system",)),
    ("node -e 'require(\"child_process\").execSync(\"touch x\")'", "touch x", ("node child_process.execSync",)),
    ("perl -e 'my $o = `git status`'", "git status", ("perl backticks",)),
    ("ruby -e 'system(\"rm\", \"-rf\", \"d\")'", "rm -rf d", ("ruby system",)),
    ("python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['make', 'clean'])\nEOF", "make clean",
     ("python3 subprocess.run",)),
    ("bash -c \"python3 -c 'import os; os.system(\\\"rm x\\\")'\"", "rm x", ("bash -c", "python3 os.system")),
    ("timeout 5 python3 -c 'import os; os.system(\"rm x\")'", "rm x", None),
])
def test_the_reader_walks_the_commands_in_interpreter_code(command, words, via):
    an = analyze(command, cwd="/tmp")
    got = [v for w, v in _walked(an) if w == words]
    assert got, _walked(an)
    if via is not None:
        assert got[0] == via
    else:
        assert got[0][-1] == "python3 os.system"


def test_an_embedded_command_comes_right_after_its_program_in_its_directory(tmp_path):
    (tmp_path / "sub").mkdir()
    an = analyze(f"cd {tmp_path}/sub && python3 -c 'import os; os.system(\"rm -rf x\")' && ls", cwd=str(tmp_path))
    names = [c.name for c in an.commands]
    assert names == ["cd", "python3", "rm", "ls"]
    assert an.commands[2].cwd == str(tmp_path / "sub")


def test_an_embedded_shell_is_a_shell_of_its_own(tmp_path):
    """A `cd` or a variable set inside os.system's shell does not outlive it."""
    (tmp_path / "sub").mkdir()
    an = analyze("python3 -c 'import os; os.system(\"cd sub; X=1\")'; ls", cwd=str(tmp_path))
    assert [c.name for c in an.commands][-1] == "ls"
    assert an.commands[-1].cwd == str(tmp_path)


def test_a_printed_command_and_a_template_string_are_not_walked():
    for command in ("python3 -c 'print(\"rm -rf docs\")'", "node -e 'console.log(`rm -rf docs`)'"):
        assert [c.name for c in analyze(command, cwd="/tmp").commands] == [command.split()[0]]


def test_a_script_file_is_read_too(tmp_path):
    (tmp_path / "tool.py").write_text('import subprocess\nsubprocess.check_call(["rm", "-rf", "docs"])\n')
    an = analyze("python3 tool.py", cwd=str(tmp_path))
    assert ("rm -rf docs", ("python3 subprocess.check_call",)) in _walked(an)


# -- the guards judge them: W01 -------------------------------------------------------------------

WRITE = '[write]\nmain = ["**"]\nimplementer = ["src/**", "tests/**"]\n'


@pytest.fixture
def w01(judge):
    subprocess.run(["git", "init", "-q", judge.repo], check=True)
    judge.config_text = WRITE
    return judge


@pytest.mark.parametrize("command", [
    "python3 -c 'import os; os.system(\"rm -rf docs\")'",
    "python3 -c 'import subprocess; subprocess.run([\"rm\", \"-rf\", \"docs\"])'",
    "node -e 'require(\"child_process\").execSync(\"rm -rf docs\")'",
    "perl -e '`rm -rf docs`'",
    "ruby -e 'system(\"touch docs/x.md\")'",
])
def test_w01_refuses_a_subagents_write_inside_interpreter_code(w01, command):
    f = [x for x in w01.findings(command, subagent=True) if x.code == "W01"]
    assert f and "docs" in f[0].message and "src/**" in f[0].message


@pytest.mark.parametrize("command", [
    "python3 -c 'import os; os.system(\"rm -rf src/x\")'",
    "python3 -c 'print(\"rm -rf docs\")'",
    "node -e 'console.log(`rm -rf docs`)'",
])
def test_w01_lets_a_write_inside_its_row_or_a_printed_one_go(w01, command):
    assert "W01" not in w01.codes(command, subagent=True)


def test_w01_lets_the_main_agent_write_anywhere_its_row_allows(w01):
    assert "W01" not in w01.codes("python3 -c 'import os; os.system(\"rm -rf docs\")'")
