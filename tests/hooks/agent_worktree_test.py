"""Worktree subagents (isolation "worktree"): path rules relative to the agent's own worktree, the
worktree registered at SubagentStart, and H01 at hand-back. Real git worktrees in a temp repository,
laid out as Claude Code 2.1.332 makes them (`.claude/worktrees/agent-<id>`, branch
`worktree-agent-<id>`; the hook's cwd is the worktree, CLAUDE_PROJECT_DIR the project)."""
from __future__ import annotations

import subprocess

import pytest

from swarmgate.config import find_repo
from swarmgate.hooks import agent_worktree as W
from swarmgate.hooks import scratch_locks
from swarmgate.hooks import session_state as S
from tests.hooks.conftest import GOOD, answer, context, denied, dispatch, git


@pytest.fixture
def project(committed, monkeypatch):
    (committed / ".claude" / "swarmgate.toml").write_text('[write]\nimplementer = ["src/**"]\n')
    git(committed, "add", "-A")
    git(committed, "commit", "-qm", "config")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(committed))
    return committed


def add_worktree(repo, agent_id="a1"):
    wt = repo / ".claude" / "worktrees" / f"agent-{agent_id}"
    git(repo, "worktree", "add", "-q", "-b", f"worktree-agent-{agent_id}", str(wt))
    return wt


def agent(wt, agent_id="a1", **payload):
    return {"agent_id": agent_id, "agent_type": "implementer", "cwd": str(wt), **payload}


def bash(cmd):
    return {"tool_name": "Bash", "tool_input": {"command": cmd}}


def write(path):
    return {"tool_name": "Write", "tool_input": {"file_path": str(path), "content": "x\n"}}


# --- finding the work root ----------------------------------------------------------------

def test_work_root_is_the_linked_worktree_of_this_repository_only(project, tmp_path):
    wt = add_worktree(project)
    (wt / "src").mkdir()
    assert W.work_root(str(wt / "src"), str(project)) == str(wt)
    assert W.work_root(str(project / "src"), str(project)) == str(project)
    assert W.work_root("/tmp", str(project)) == str(project)
    # a worktree of the project placed elsewhere still counts
    away = tmp_path / "elsewhere"
    git(project, "worktree", "add", "-q", "-b", "away", str(away))
    assert W.work_root(str(away), str(project)) == str(away)
    # another repository's worktree, and a nested clone, are not this repository's
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "f").write_text("f")
    git(other, "add", "f")
    git(other, "commit", "-qm", "f")
    git(other, "worktree", "add", "-q", "-b", "o", str(project / ".claude" / "worktrees" / "foreign"))
    assert W.work_root(str(project / ".claude" / "worktrees" / "foreign"), str(project)) == str(project)
    subprocess.run(["git", "clone", "-q", str(project), str(project / "vendor")], check=True)
    assert W.work_root(str(project / "vendor"), str(project)) == str(project)


def test_find_repo_maps_an_agent_worktree_to_its_project(project, monkeypatch):
    wt = add_worktree(project)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")   # the clients that do not set it
    assert find_repo(str(wt / "src")) == str(project)
    assert find_repo(str(project)) == str(project)


# --- W01 and G01 relative to the worktree --------------------------------------------------

def test_w01_judges_a_worktree_agents_paths_in_its_own_tree(project):
    wt = add_worktree(project)
    ok = answer("PreToolUse", {**bash("mkdir -p src && echo x > src/a.py"), **agent(wt)}, project)
    assert denied(ok) == ""
    assert denied(answer("PreToolUse", {**write(wt / "src" / "b.py"), **agent(wt)}, project)) == ""
    refused = denied(answer("PreToolUse", {**bash("echo x > docs.md"), **agent(wt)}, project))
    assert "[W01]" in refused and "writes docs.md" in refused and ".claude/worktrees" not in refused
    # the project's own checkout stays the project's: its row still applies there
    assert "[W01]" in denied(answer("PreToolUse", {**write(project / "docs" / "x.md"), **agent(wt)}, project))
    assert denied(answer("PreToolUse", {**write(project / "src" / "x.py"), **agent(wt)}, project)) == ""
    # another agent's worktree is not this agent's src/
    other = add_worktree(project, "b2")
    reason = denied(answer("PreToolUse", {**write(other / "src" / "a.py"), **agent(wt)}, project))
    assert "[W01]" in reason and ".claude/worktrees/agent-b2/src/a.py" in reason


def test_g01_protects_the_worktrees_copy_of_the_settings_and_config(project):
    wt = add_worktree(project)
    for target in (".claude/settings.json", ".claude/swarmgate.toml"):
        assert "[G01]" in denied(answer("PreToolUse", {**write(wt / target), **agent(wt)}, project))
        assert "[G01]" in denied(answer("PreToolUse", {**bash(f"echo '{{}}' > {target}"), **agent(wt)}, project))
    assert "[G01]" in denied(answer("PreToolUse", {**write(project / ".claude" / "settings.json"), **agent(wt)},
                                    project))


def test_a_heavy_gate_script_in_the_worktree_is_heavy(project):
    wt = add_worktree(project)
    (project / ".claude" / "swarmgate.toml").write_text(
        '[write]\nimplementer = ["src/**"]\n[heavy]\npatterns = ["bash .claude/gate.d/*"]\n')
    reason = denied(answer("PreToolUse", {**bash("bash .claude/gate.d/replay.sh"), **agent(wt)}, project))
    assert "[B01]" in reason


# --- registration and H01 -----------------------------------------------------------------

def start_in(project, wt, agent_id="a1", prompt=GOOD, tool_use_id="toolu_w1"):
    assert denied(answer("PreToolUse", dispatch(prompt, tool_use_id=tool_use_id, isolation="worktree"),
                         project)) == ""
    ans = answer("SubagentStart", {"agent_id": agent_id, "agent_type": "implementer", "cwd": str(wt)}, project)
    return ans


def stop_in(project, wt, msg="done", agent_id="a1"):
    return answer("SubagentStop", agent(wt, agent_id, last_assistant_message=msg, stop_hook_active=False,
                                        agent_transcript_path=""), project)


def test_the_worktree_is_registered_at_start_and_the_agent_told(project):
    wt = add_worktree(project)
    ans = start_in(project, wt)
    rec = S.load("s1")["agents"]["a1"]["worktree"]
    assert rec["path"] == str(wt) and len(rec["head"]) == 40
    text = context(ans)
    assert f"You work in the git worktree {wt}" in text and ".claude/worktrees/agent-a1 not deleted:" in text


def test_h01_a_clean_worktree_hands_back_claude_code_removes_it(project):
    wt = add_worktree(project)
    start_in(project, wt)
    ans = stop_in(project, wt)
    assert "decision" not in ans, ans
    assert "holds no changes: Claude Code removes it after the hand-back" in ans["systemMessage"]
    assert S.load("s1")["agents"]["a1"]["stopped"]


@pytest.mark.parametrize("change", ["uncommitted", "untracked", "committed"])
def test_h01_a_worktree_with_changes_needs_its_not_deleted_line(project, change):
    wt = add_worktree(project)
    start_in(project, wt)
    if change == "uncommitted":
        (wt / "README.md").write_text("changed\n")
    elif change == "untracked":
        (wt / "src").mkdir()
        (wt / "src" / "a.py").write_text("x\n")
    else:
        (wt / "src").mkdir()
        (wt / "src" / "a.py").write_text("x\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-qm", "the agent's work")
    ans = stop_in(project, wt)
    assert ans.get("decision") == "block", ans
    assert "[H01]" in ans["reason"] and ".claude/worktrees/agent-a1" in ans["reason"]
    assert "`.claude/worktrees/agent-a1 not deleted: <reason>`" in ans["reason"]
    assert not S.load("s1")["agents"]["a1"]["stopped"]
    msg = "done\n.claude/worktrees/agent-a1 not deleted: holds the parser on its branch for the main agent to merge"
    ans = stop_in(project, wt, msg)
    assert "decision" not in ans, ans
    # the absolute path works as well
    ans = stop_in(project, wt, f"{wt} not deleted: holds the parser")
    assert "decision" not in ans, ans


def test_h01_relative_scratch_of_a_worktree_dispatch_is_in_the_worktree_and_not_locked(project):
    wt = add_worktree(project)
    start_in(project, wt, prompt=GOOD + "scratch: build-x\n")
    assert scratch_locks.held("s1") == []   # private to the worktree: nobody else can share it
    (wt / "build-x").mkdir()
    (wt / ".gitignore").write_text("build-x/\n")
    git(wt, "add", ".gitignore")
    git(wt, "commit", "-qm", "ignore the build")
    ans = stop_in(project, wt, "done\n.claude/worktrees/agent-a1 not deleted: holds the ignore rule")
    assert ans.get("decision") == "block" and "build-x" in ans["reason"], ans
    (wt / "build-x").rmdir()
    ans = stop_in(project, wt, "done\n.claude/worktrees/agent-a1 not deleted: holds the ignore rule")
    assert "decision" not in ans, ans


def test_an_absolute_scratch_of_a_worktree_dispatch_is_still_locked(project, tmp_path):
    wt = add_worktree(project)
    start_in(project, wt, prompt=GOOD + f"scratch: {tmp_path / 'shared-build'}\n")
    assert [r["path"] for r in scratch_locks.held("s1")] == [str(tmp_path / "shared-build")]
