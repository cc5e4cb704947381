"""A Codex CLI and a Gemini CLI main agent paste B01's way-out verbatim and the capped run runs (issue
22), with the machine's ordinary PATH (no .venv/bin on it: the hooks are called by absolute path, the
tools are not).

Codex 0.169.0 and Gemini 0.61.0 give SessionStart no env file, so nothing puts swarmgate's tools'
directory on the agents' PATH as it does under Claude Code: the way-out names the runner by its absolute path
(swarmgate/tools_dir.py, for_agents). The scripted model reads the refusal it got back, takes the
way-out's code span, fills in its <...> as a model would, and runs it; the runner's ledger
(runs.jsonl in the state dir) has the run, and its command wrote its file.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import gemini_api as GA
import responses_api as R
from loopback_api import Conversation

from swarmgate import doctor

pytestmark = pytest.mark.e2e

VENV_BIN = str(Path(sys.executable).parent)
HEAVY = "make check-full"
MAKEFILE = "check-full:\n\t@echo full-suite-ran > ran.txt\n"


def _way_out(text: str) -> str:
    """B01's way-out as the refusal gives it: the code span after its `Way out:`, <...> filled in."""
    m = re.search(r"\[B01\].*?Way out: [^`]*`([^`]+)`", text, re.S)
    assert m, text
    return re.sub(r"<[^>]*>", "the full suite before the commit", m.group(1))


def _client(request, name: str):
    """The repository and the stand-in's module of client ``name`` (its fixture, skipped without its binary)."""
    return request.getfixturevalue(f"{name}_repo"), (R if name == "codex" else GA)


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_a_main_agent_pastes_b01s_way_out_and_the_capped_run_runs(request, client):
    if doctor.cgroup_backend()[0] is None:
        pytest.skip("no cgroup backend here: run-with-memory-cap cannot run")
    repo, api = _client(request, client)
    path = repo.env()["PATH"]
    assert VENV_BIN not in path.split(":"), path                          # the machine's PATH
    assert shutil.which("run-with-memory-cap", path=path) is None, path   # the tools are not on it
    (repo.repo / "Makefile").write_text(MAKEFILE)
    # a verification run as well (B10): the way-out carries the run scope, the model fills it in
    repo.config_set("scope", "verify_patterns", ["pytest", "cargo test", HEAVY])
    pasted: list[str] = []
    shell_tool = "exec_command" if client == "codex" else "run_shell_command"

    def last_output(req) -> str:
        return req.tool_outputs()[-1].text if client == "codex" else req.function_responses()[-1].text

    def paste(req):
        pasted.append(_way_out(last_output(req)))
        return api.shell(pasted[-1])

    run = repo.run(f"script:{client}-paste go", [
        Conversation(f"script:{client}-paste", [api.shell(HEAVY), paste, api.done("ran it")]),
    ])
    refused, ran = run.results_of(shell_tool)
    assert refused.text.startswith(api.BLOCKED) and "[B01]" in refused.text, run.describe()
    print(f"\n[{client}] refusal: {refused.text}\n[{client}] pasted: {pasted[0]}\n[{client}] result: {ran.text}")
    assert "SWARMGATE_RUN_SCOPE=" in pasted[0] and "run-with-memory-cap" in pasted[0], pasted
    assert not ran.text.startswith(api.BLOCKED), run.describe()
    codes = re.findall(r"(?:exit(?:ed)? (?:with )?code:? ?)(\d+)", ran.text, re.I)
    assert "127" not in codes and "command not found" not in ran.text, ran.text
    ledger = repo.state_dir / "runner" / "runs.jsonl"
    runs = [json.loads(ln) for ln in ledger.read_text().splitlines()] if ledger.exists() else []
    mine = [r for r in runs if r.get("command") == HEAVY]
    assert mine, (ran.text, runs, run.describe())
    print(f"[{client}] runs.jsonl: {mine[-1]}")
    assert mine[-1]["exit"] == 0 and (repo.repo / "ran.txt").read_text() == "full-suite-ran\n", ran.text
