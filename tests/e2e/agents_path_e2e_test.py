"""swarmgate's tools reach the agents, and the main agent gets its rules, in the real client (issue 22).

The repository is wired by the real installer; the client is started with the machine's ordinary
PATH (the harness takes this checkout's .venv/bin off it: the hooks are called by absolute path,
the tools are not). The main agent types the tools by name, as the rule texts and way-outs give
them: SessionStart's env-file line has put swarmgate's tools' directory (only its console scripts)
on the commands' PATH after the exec-time shims, so they run, the main agent's and a subagent's. A
line of main-agent.md is in the main agent's first request (the `@.claude/main-agent.md` import
install put in CLAUDE.md).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from messages_api import Conversation, bash, dispatch, done

from swarmgate import doctor
from swarmgate.tools_dir import script_names

pytestmark = pytest.mark.e2e

VENV_BIN = str(Path(sys.executable).parent)
TOOLS = str(Path(sys.executable).parent.parent / "swarmgate-tools")
RULE_LINE = "Every task enters here. You schedule and judge"   # rules/main-agent.md, its first paragraph


def test_the_main_agent_runs_swarmgate_tools_by_name_and_reads_its_rules(claude_repo):
    env_path = claude_repo.env()["PATH"].split(os.pathsep)
    assert VENV_BIN not in env_path and TOOLS not in env_path, env_path   # the machine's PATH, not the venv's
    capped = doctor.cgroup_backend()[0] is not None
    where = "for p in " + " ".join(script_names()) + "; do command -v $p || echo \"missing $p\"; done"
    script = [bash(where, "where the tools are"),
              bash("command -v python3; command -v pip || echo no-pip", "no venv python on PATH"),
              bash("echo \"$PATH\"", "the PATH")]
    if capped:
        script.append(bash("run-with-memory-cap 64M -- sh -c 'echo capped > capped.txt'", "a capped run"))
    script += [bash("swarmgate doctor | grep -F 'programs resolve'", "doctor in the session"),
               done("done")]
    run = claude_repo.run("script:tools go", [Conversation("script:tools", script)])
    why = run.describe()
    results = run.results_of("Bash", "script:tools")
    assert len(results) == len(script) - 1, why

    found = results[0].text.splitlines()
    assert found == [os.path.join(TOOLS, n) for n in script_names()], why     # each one, from the tools' dir
    assert not any(line.startswith(VENV_BIN) for line in results[1].text.splitlines()), results[1].text
    assert "no-pip" in results[1].text or not results[1].text.startswith(TOOLS), results[1].text
    entries = results[2].text.strip().split(os.pathsep)
    assert entries[0].endswith("/shims") and entries[1] == TOOLS, entries      # the shims, then the tools
    assert VENV_BIN not in entries, entries
    if capped:
        assert not results[3].is_error, why
        assert (claude_repo.repo / "capped.txt").read_text() == "capped\n", why
    assert "ok   swarmgate's" in results[-1].text and "resolve on this session's PATH" in results[-1].text, why

    first = run.conversation("script:tools")[0]
    assert RULE_LINE in first.all_text, first.all_text[:3000]


def test_a_subagent_gets_the_tools_too(claude_repo):
    run = claude_repo.run("script:tools-main go", [
        Conversation("script:tools-main", [
            dispatch("implementer", "script:tools-sub\nSay where the tools are.\nheavy test: do not run"),
            done("dispatched")]),
        Conversation("script:tools-sub", [
            bash("command -v work-dir-owner agent-handover; echo \"$PATH\"", "where the tools are"),
            done("reported")]),
    ])
    why = run.describe()
    (res,) = run.results_of("Bash", "script:tools-sub")
    lines = res.text.splitlines()
    assert lines[:2] == [os.path.join(TOOLS, "work-dir-owner"), os.path.join(TOOLS, "agent-handover")], why
    entries = lines[2].split(os.pathsep)
    assert entries[0].endswith("/shims") and entries[1] == TOOLS and VENV_BIN not in entries, entries
    # the client gives a subagent CLAUDE.md too (measured: main-agent.md's text is in its first
    # request), so the line before the import tells it those rules are not its own
    sub_first = run.conversation("script:tools-sub")[0].all_text
    assert RULE_LINE in sub_first and "a subagent follows the rules it was given at its start instead" in sub_first
