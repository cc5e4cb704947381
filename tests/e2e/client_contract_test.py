"""Contract drift: each pinned client still honours swarmgate's refusal.

A client that changes its hook contract (a new output field, a renamed tool, another exit-code
rule) makes swarmgate fail open without a word: the call runs. So, per client, against the
pinned binary (swarmgate/client_pins.json), a command with a visible side effect that
swarmgate refuses (G01: a write into .swarmgate/) must not run, and the refusal must reach the
model; and for Codex and Gemini, which have no onFailure, a hook that cannot run at all (its
entry point gone) must refuse through the installed fallback (exit 2, reason on stderr).
When one of these fails after a pin moved, read docs/clients.md "Contract drift".
"""
from __future__ import annotations

import json
import os
import shlex

import gemini_api as GA
import pytest
import responses_api as R
from loopback_api import Conversation
from messages_api import bash, done

pytestmark = pytest.mark.e2e

MARK = ".swarmgate/contract-drift-marker"
TOUCH = f"touch {MARK}"


def test_claude_code_honours_the_deny(claude_repo):
    run = claude_repo.run("script:contract", [
        Conversation("script:contract", [bash(TOUCH), done()])])
    (res,) = run.results_of("Bash")
    assert res.is_error and "[G01]" in res.text, run.describe()
    assert not (claude_repo.repo / MARK).exists()


def test_codex_honours_the_deny(codex_repo):
    run = codex_repo.run("script:contract go", [Conversation("script:contract", [R.shell(TOUCH), R.done()])])
    (out,) = run.results_of("exec_command")
    assert out.text.startswith(R.BLOCKED) and "[G01]" in out.text, run.describe()
    assert not (codex_repo.repo / MARK).exists()


def test_gemini_honours_the_deny(gemini_repo):
    run = gemini_repo.run("script:contract go", [Conversation("script:contract", [GA.shell(TOUCH), GA.done()])])
    (fr,) = run.results_of("run_shell_command")
    assert fr.text.startswith(GA.BLOCKED) and "[G01]" in fr.text, run.describe()
    assert not (gemini_repo.repo / MARK).exists()


def _break_entry_point(path, client_repo) -> None:
    """Point every swarmgate hook at a program that is gone (a deleted virtualenv)."""
    text = path.read_text()
    hooks = json.loads(text)["hooks"]
    program = next(shlex.split(h["command"])[0] for groups in hooks.values() if isinstance(groups, list)
                   for g in groups for h in g["hooks"] if "--client" in h["command"])
    assert os.path.isabs(program)
    path.write_text(text.replace(json.dumps(program)[1:-1], str(client_repo.root / "gone" / "python3")))


def test_codex_refuses_through_the_fallback_when_the_hook_cannot_run(codex_repo):
    _break_entry_point(codex_repo.repo / ".codex" / "hooks.json", codex_repo)
    run = codex_repo.run("script:contract-fb go", [
        Conversation("script:contract-fb", [R.shell("touch ran-anyway"), R.done()])])
    (out,) = run.results_of("exec_command")
    assert out.text.startswith(R.BLOCKED) and "the hook failed (exit 127)" in out.text, run.describe()
    assert not (codex_repo.repo / "ran-anyway").exists()


def test_gemini_refuses_through_the_fallback_when_the_hook_cannot_run(gemini_repo):
    _break_entry_point(gemini_repo.repo / ".gemini" / "settings.json", gemini_repo)
    run = gemini_repo.run("script:contract-fb go", [
        Conversation("script:contract-fb", [GA.shell("touch ran-anyway"), GA.done()])])
    (fr,) = run.results_of("run_shell_command")
    assert fr.text.startswith(GA.BLOCKED) and "the hook failed (exit 127)" in fr.text, run.describe()
    assert not (gemini_repo.repo / "ran-anyway").exists()
