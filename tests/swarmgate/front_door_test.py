"""One front door for every console tool: one tool list (pyproject's scripts, cli.VERBS and the
self-test suites come from it), and every tool answers a usage or set-up error with one line and 251."""
from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from swarmgate import cli, front_door, selftest, tool_parser, tool_table
from swarmgate.exit_codes import Exit

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _resolve(target: str):
    mod, func = target.split(":")
    return getattr(importlib.import_module(mod), func)


# ---------------------------------------------------------------- one list


def test_pyproject_scripts_are_the_tool_list():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert declared == tool_table.scripts(), (
        "pyproject.toml [project.scripts] and swarmgate/tool_table.py disagree: add the tool to TOOLS "
        "(script=True) and the same line to pyproject.toml")


def test_verbs_and_selftest_suites_come_from_the_tool_list():
    assert cli.VERBS == tool_table.verbs()
    assert selftest.TOOL_SUITES == tool_table.suites()
    names = [t.name for t in tool_table.TOOLS]
    assert len(names) == len(set(names)), "a tool is listed twice"


@pytest.mark.parametrize("tool", tool_table.TOOLS, ids=lambda t: t.name)
def test_every_entry_goes_through_the_front_door(tool):
    func = _resolve(tool.entry)
    assert getattr(func, "tool_name", None) == tool.name, (
        f"{tool.entry} is not wrapped by front_door.entry({tool.name!r})")
    if tool.suite:
        assert callable(_resolve(tool.suite))


# ---------------------------------------------------------------- 251, one line, no traceback


def _argv(tool: tool_table.Tool) -> list[str]:
    if tool.script:
        return [str(BIN / tool.name)]
    return [str(BIN / "swarmgate"), tool.name]


@pytest.fixture
def tool_env() -> dict:
    """The environment the suite's isolation fixture set up (own HOME, state dir, no hosts config)."""
    return dict(os.environ)


def _one_line_251(cp: subprocess.CompletedProcess) -> str:
    err = cp.stderr
    assert "Traceback" not in err, err
    assert cp.returncode == Exit.USAGE, (cp.returncode, err)
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("argv", [[str(BIN / "swarmgate")]] + [_argv(t) for t in tool_table.TOOLS],
                         ids=["swarmgate"] + [t.name for t in tool_table.TOOLS])
def test_unknown_option_is_one_line_and_251(argv, tool_env, tmp_path):
    cp = subprocess.run([*argv, "--no-such-option"], capture_output=True, text=True, env=tool_env,
                        cwd=tmp_path, timeout=120)
    line = _one_line_251(cp)
    name = Path(argv[0]).name if len(argv) == 1 else f"swarmgate {argv[1]}"
    assert line.startswith(name.split()[0]), line


class _Parsed(Exception):
    def __init__(self, parser) -> None:
        super().__init__()
        self.parser = parser


def sub_verbs(tool: tool_table.Tool) -> list[str]:
    """The sub-verbs of a tool (`workspace-lock acquire`), read from the parser its main builds: the
    first parse is stopped and the parser's subcommand choices returned ([] for a tool without)."""
    def stop(self, args=None, namespace=None):
        raise _Parsed(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tool_parser.ToolParser, "parse_known_args", stop)
        try:
            _resolve(tool.entry)([])
        except _Parsed as e:
            parser = e.parser
        else:
            return []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    return []


def test_unknown_option_after_every_sub_verb_is_one_line_and_251(tool_env, tmp_path):
    """Not only the top-level parser: each sub-verb's own parser answers the same way."""
    calls = [(t, verb) for t in tool_table.TOOLS for verb in sub_verbs(t)]
    tools = {t.name for t, _ in calls}
    assert {"workspace-lock", "work-dir-owner", "detached-run", "records", "sop"} <= tools, tools
    for tool, verb in calls:
        cp = subprocess.run([*_argv(tool), verb, "--no-such-option"], capture_output=True, text=True,
                            env=tool_env, cwd=tmp_path, timeout=120)
        line = _one_line_251(cp)
        assert line.startswith(tool.prog), (tool.name, verb, line)


def test_the_umbrella_without_a_verb_is_a_usage_error(tool_env, tmp_path):
    cp = subprocess.run([str(BIN / "swarmgate")], capture_output=True, text=True, env=tool_env, cwd=tmp_path)
    assert "give a VERB" in _one_line_251(cp)
    cp = subprocess.run([str(BIN / "swarmgate"), "no-such-verb"], capture_output=True, text=True, env=tool_env,
                        cwd=tmp_path)
    assert "unknown verb 'no-such-verb'" in _one_line_251(cp)


@pytest.fixture
def bad_config_repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".claude" / "swarmgate.toml").write_text("[no_such_section]\nx = 1\n")
    return repo


SETUP_ERROR_CALLS = [
    ["swarmgate", "records", "current"],
    ["swarmgate", "sop", "check"],
    ["swarmgate", "replay", "no-such.jsonl"],
    ["work-dir-owner", "list"],
    ["dispatch-prompt", "implementer"],
    ["gate-staged", "--list"],
    ["run-with-memory-cap", "64M", "--", "true"],
    ["swarm-watch", "--once", "--session", "s1"],
]


@pytest.mark.parametrize("call", SETUP_ERROR_CALLS, ids=lambda c: " ".join(c[:2]))
def test_a_config_that_cannot_be_used_is_one_line_and_251(call, bad_config_repo, tool_env):
    cp = subprocess.run([str(BIN / call[0]), *call[1:]], capture_output=True, text=True, env=tool_env,
                        cwd=bad_config_repo, timeout=120)
    line = _one_line_251(cp)
    assert "no_such_section" in line and "swarmgate.toml" in line, line


# ---------------------------------------------------------------- built-in --selftest and the refusal


@pytest.mark.parametrize("tool", tool_table.TOOLS, ids=lambda t: t.name)
def test_every_tool_lists_selftest_in_its_help(tool, capsys):
    with pytest.raises(SystemExit) as e:  # argparse ends --help with exit 0
        rc = _resolve(tool.entry)(["--help"])
        raise SystemExit(rc)
    assert e.value.code in (0, None)
    assert "--selftest" in capsys.readouterr().out


@pytest.mark.parametrize("tool", tool_table.TOOLS, ids=lambda t: t.name)
def test_a_break_switch_outside_a_self_test_is_refused_by_every_tool(tool, monkeypatch, capsys):
    monkeypatch.setenv("SWARMGATE_BREAK", "anything")
    assert _resolve(tool.entry)(["--no-such-option"]) == Exit.USAGE
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "outside a self-test" in err, err


def test_selftest_is_intercepted_before_the_tool_parses(monkeypatch):
    """`--selftest` among the options runs the tool's suite (here: a stand-in) whatever else is there."""
    ran = []
    monkeypatch.setattr(selftest, "report", lambda names: ran.append(names) or 0)
    assert _resolve("swarmgate.hosts.detached_run:main")(["--selftest", "--bogus"]) == 0
    assert ran == [["detached-run"]]
    # after `--` it belongs to the command the tool runs, not to the tool
    ran.clear()
    monkeypatch.setattr(front_door, "tool_start", lambda prog: ran.append(prog) or 99)
    assert _resolve("swarmgate.hosts.runner_cli:main")(["1G", "--", "prog", "--selftest"]) == 99
    assert ran == ["run-with-memory-cap"]


def test_a_tool_without_a_suite_says_so(capsys):
    assert _resolve("swarmgate.agents.dispatch_prompt:main")(["--selftest"]) == 0
    assert "no self-test suite of its own" in capsys.readouterr().out


def test_selftest_of_a_tool_runs_its_suite(tool_env, tmp_path):
    cp = subprocess.run([str(BIN / "work-dir-owner"), "--selftest"], capture_output=True, text=True, env=tool_env,
                        cwd=tmp_path, timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "work-dir-owner" in cp.stdout and "0 failed" in cp.stdout


def test_a_reader_that_leaves_early_gets_no_traceback(tool_env, tmp_path):
    """`swarmgate explain --json ... | head -2`: the pipe closes before the tool is done writing; the tool
    stops as a Unix filter does (141, 128 + SIGPIPE), without a traceback."""
    r, w = os.pipe()
    os.close(r)   # nobody reads: the first write fails with EPIPE
    try:
        cp = subprocess.run([str(BIN / "swarmgate"), "explain", "--json", "--", "cargo build"], stdout=w,
                            stderr=subprocess.PIPE, text=True, env=tool_env, cwd=tmp_path, timeout=120)
    finally:
        os.close(w)
    assert "Traceback" not in cp.stderr, cp.stderr
    assert cp.returncode == 141, (cp.returncode, cp.stderr)
