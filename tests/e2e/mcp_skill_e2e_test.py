"""MCP tools and skills' shell commands through the real client.

- `[mcp] tools`: an MCP tool listed as a writer is judged as Write (W01, G01), one listed as a
  runner as Bash (B01 and the other shell guards); an unlisted one runs and is logged.
- PreSkillShellCommand: the shell commands a skill runs when it loads (`!`cmd`` in SKILL.md,
  outside the Bash tool) go through the Bash guards; a refused one is blocked and the skill gets
  the reason in its place.
"""
from __future__ import annotations

import pytest

from dialog_e2e_test import list_mcp, mcp_calls, mcp_config
from messages_api import Conversation, dispatch, done, tool

pytestmark = pytest.mark.e2e

HEAVY_LINE = "heavy test: do not run"
SELECT = {"query": "select:mcp__notes__write_note,mcp__notes__run"}


def test_mcp_writers_and_runners_are_judged_as_what_they_do(claude_repo):
    claude_repo.add_agent("implementer")
    claude_repo.config_set("write", "implementer", ["src/**"])
    list_mcp(claude_repo, '{ "mcp__notes__write_note" = { writes = "path" }, '
                          '"mcp__notes__run" = { runs = "command" } }')
    repo = claude_repo.repo
    (repo / "src").mkdir()
    run = claude_repo.run("script:mcp", [
        Conversation("script:mcp", [dispatch("implementer", f"script:mcp-sub\nWrite the notes.\n{HEAVY_LINE}"),
                                    done("x")]),
        Conversation("script:mcp-sub", [
            tool("ToolSearch", SELECT),
            tool("mcp__notes__write_note", {"path": str(repo / "src" / "notes.txt"), "content": "in scope\n"}),
            tool("mcp__notes__write_note", {"path": str(repo / "docs.md"), "content": "out of scope\n"}),
            tool("mcp__notes__write_note", {"path": str(repo / ".claude" / "settings.json"), "content": "{}"}),
            tool("mcp__notes__run", {"command": "cargo test --workspace"}),
            tool("mcp__notes__run", {"command": "echo hello-from-mcp"}),
            done("done")]),
    ], args=("--mcp-config", mcp_config(claude_repo, "notes")))
    why = run.describe()
    assert run.returncode == 0, why
    ok, docs, settings = run.results_of("mcp__notes__write_note", "script:mcp-sub")
    heavy, echo = run.results_of("mcp__notes__run", "script:mcp-sub")
    assert not ok.is_error, why
    assert docs.is_error and "[W01]" in docs.text and "docs.md" in docs.text, why
    assert settings.is_error and "[G01]" in settings.text, why
    assert heavy.is_error and "[B01]" in heavy.text, why
    assert not echo.is_error and "hello-from-mcp" in echo.text, why
    # only what the guards let through reached the server
    ran = [(c["tool"], c["args"].get("path") or c["args"].get("command")) for c in mcp_calls(claude_repo)]
    assert ran == [("write_note", str(repo / "src" / "notes.txt")), ("run", "echo hello-from-mcp")], ran
    # and the server ran them unchanged (no rewrite of an MCP call's arguments)
    assert (repo / "src" / "notes.txt").read_text() == "in scope\n"
    logged = run.decisions(event="PreToolUse", agent_type="implementer")
    assert {d["client_tool"] for d in logged if d.get("tool") in ("Write", "Bash")} == {
        "mcp__notes__write_note", "mcp__notes__run"}, why


def test_an_unlisted_mcp_tool_runs_and_is_logged(claude_repo):
    run = claude_repo.run("script:mcp-free", [
        Conversation("script:mcp-free", [tool("ToolSearch", {"query": "select:mcp__notes__run"}),
                                         tool("mcp__notes__run", {"command": "echo unlisted"}), done("x")]),
    ], args=("--mcp-config", mcp_config(claude_repo, "notes")))
    why = run.describe()
    (res,) = run.results_of("mcp__notes__run", "script:mcp-free")
    assert not res.is_error and "unlisted" in res.text, why
    (rec,) = run.decisions(event="PreToolUse", tool="mcp__notes__run")
    assert rec["decision"] == "allow", why


def test_a_skills_shell_command_goes_through_the_bash_guards(claude_repo):
    skill = claude_repo.repo / ".claude" / "skills" / "stats"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: stats\ndescription: repository stats\n---\n\n"
                                    "Files: !`ls | wc -l`\nTests: !`cargo test --workspace`\n")
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "a skill")
    run = claude_repo.run("script:skill", [
        Conversation("script:skill", [tool("Skill", {"skill": "stats"}), done("x")])])
    why = run.describe()
    assert run.returncode == 0, why
    loaded = run.conversation("script:skill")[-1].all_text
    assert "Files: 1" in loaded or "Files: 2" in loaded, why      # the harmless command ran
    assert "[B01]" in loaded and "blocked by hook" in loaded, why  # the heavy one did not
    recs = run.decisions(event="PreToolUse", tool="Bash")
    assert sorted((r["decision"], r.get("client_tool")) for r in recs) == [   # the client runs them at once
        ("allow", "PreSkillShellCommand"), ("deny", "PreSkillShellCommand")], why
