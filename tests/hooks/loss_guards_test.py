"""L01, L02, L03 through the real hook (`python -m swarmgate hook PreToolUse`) in real git repositories.

The shared-checkout test is issue 25's bar: two agents share one checkout, agent A has uncommitted
changes; agent B's `git reset --hard`, `git checkout -- .` and `git stash` are refused and A's changes
survive byte for byte (each command runs when the hook lets it, as the client would run it); A's own
`git checkout -- its_file` passes and runs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import git_repo

CONFIG = '[write]\nmain = ["**"]\nimplementer = ["**"]\n'


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _committed_repo(path: Path) -> Path:
    repo = git_repo(path)
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("committed a\n")
    (repo / "src" / "b.py").write_text("committed b\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text(CONFIG)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
    return repo


def hook(repo: Path, tool: str, tool_input: dict, agent: str | None = None, session: str = "s1",
         cwd: Path | None = None) -> tuple[str, str]:
    """(decision, reason) of the real hook entry point on one PreToolUse call."""
    payload = {"session_id": session, "transcript_path": "", "cwd": str(cwd or repo),
               "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
    if agent:
        payload.update(agent_id=agent, agent_type="implementer")
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(repo))
    p = subprocess.run([sys.executable, "-m", "swarmgate", "hook", "PreToolUse"], input=json.dumps(payload),
                       capture_output=True, text=True, cwd=str(cwd or repo), env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout or "{}").get("hookSpecificOutput") or {}
    return out.get("permissionDecision") or "allow", out.get("permissionDecisionReason") or ""


def write_as(repo: Path, agent: str | None, rel: str, text: str, session: str = "s1") -> None:
    """An agent's Write call: judged by the hook (its act records it), then done, as the client does."""
    decision, reason = hook(repo, "Write", {"file_path": str(repo / rel), "content": text}, agent, session)
    assert decision == "allow", reason
    (repo / rel).write_text(text)


def run_as(repo: Path, agent: str | None, command: str, cwd: Path | None = None) -> tuple[str, str]:
    """An agent's Bash call: judged by the hook, and run when it is let through."""
    decision, reason = hook(repo, "Bash", {"command": command}, agent, cwd=cwd)
    if decision == "allow":
        subprocess.run(["bash", "-c", command], cwd=str(cwd or repo), check=False, capture_output=True,
                       env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com"))
    return decision, reason


def test_two_agents_share_a_checkout_and_b_cannot_drop_a_s_changes(tmp_path, capsys):
    repo = _committed_repo(tmp_path / "repo")
    write_as(repo, "agent-a", "src/a.py", "A's work, not committed\n")
    write_as(repo, "agent-a", "src/new.py", "A's new file\n")
    before = {p: (repo / p).read_bytes() for p in ("src/a.py", "src/new.py")}
    lines = []
    for command in ("git reset --hard", "git checkout -- .", "git stash", "git stash -u", "git clean -fd",
                    "git restore src/a.py", "git checkout -f"):
        decision, reason = run_as(repo, "agent-b", command)
        said = next((ln for ln in reason.splitlines() if "[L02]" in ln), reason)
        lines.append(f"agent B: {command:22} -> {decision}: {said[:160]}")
        assert decision == "deny" and "[L02]" in reason, (command, reason)
        assert {p: (repo / p).read_bytes() for p in before} == before, command
    assert "subagent agent-a" in reason
    decision, reason = run_as(repo, "agent-a", "git checkout -- src/a.py")
    lines.append(f"agent A: {'git checkout -- src/a.py':22} -> {decision}, ran: src/a.py is the committed one again")
    assert decision == "allow", reason
    assert (repo / "src" / "a.py").read_text() == "committed a\n"       # it ran: A's own file restored
    assert (repo / "src" / "new.py").read_bytes() == before["src/new.py"]
    with capsys.disabled():
        print("\n" + "\n".join(lines))


def test_the_main_agent_cannot_drop_a_subagents_changes_but_may_drop_its_own(tmp_path):
    repo = _committed_repo(tmp_path / "repo")
    write_as(repo, "agent-a", "src/a.py", "A's work\n")
    decision, reason = run_as(repo, None, "git reset --hard")
    assert decision == "deny" and "[L02]" in reason and "src/a.py (subagent agent-a)" in reason
    assert (repo / "src" / "a.py").read_text() == "A's work\n"
    write_as(repo, None, "src/b.py", "main's work\n")
    decision, reason = run_as(repo, None, "git checkout -- src/b.py")
    assert decision == "allow", reason
    assert (repo / "src" / "b.py").read_text() == "committed b\n"


def test_a_lone_agent_in_its_own_worktree_resets_its_own_changes(tmp_path):
    repo = _committed_repo(tmp_path / "repo")
    wt = tmp_path / "wt-c"
    _git(repo, "worktree", "add", "-q", "-b", "agent-c", str(wt))
    decision, reason = hook(repo, "Write", {"file_path": str(wt / "src/a.py"), "content": "C\n"}, "agent-c",
                            cwd=wt)
    assert decision == "allow", reason
    (wt / "src" / "a.py").write_text("C\n")
    (wt / "src" / "b.py").write_text("an edit nobody recorded\n")   # unknown origin, but nobody shares it
    decision, reason = run_as(repo, "agent-c", "git reset --hard", cwd=wt)
    assert decision == "allow", reason
    assert (wt / "src" / "a.py").read_text() == "committed a\n"
    assert (wt / "src" / "b.py").read_text() == "committed b\n"


def test_changes_of_unknown_origin_count_as_anothers_in_a_shared_checkout(tmp_path):
    repo = _committed_repo(tmp_path / "repo")
    (repo / "src" / "b.py").write_text("typed by the person\n")       # in no ledger
    decision, _ = hook(repo, "Bash", {"command": "git reset --hard"}, "agent-b")
    assert decision == "allow"                                         # nobody else works here
    write_as(repo, "agent-a", "src/a.py", "A\n")                       # now agent A shares the checkout
    decision, reason = hook(repo, "Bash", {"command": "git reset --hard"}, "agent-b")
    assert decision == "deny" and "src/b.py (of unknown origin)" in reason and "subagent agent-a" in reason


def test_a_shell_write_is_recorded_as_its_agents(tmp_path):
    repo = _committed_repo(tmp_path / "repo")
    decision, _ = run_as(repo, "agent-a", "echo shell > src/a.py")
    assert decision == "allow"
    ledger = (repo / ".swarmgate" / "log" / "writes.jsonl").read_text()
    assert '"a":"agent:agent-a"' in ledger and '"p":"src/a.py"' in ledger
    decision, reason = hook(repo, "Bash", {"command": "git stash"}, "agent-b")
    assert decision == "deny" and "src/a.py (subagent agent-a)" in reason


@pytest.mark.parametrize("command", [
    "rm -rf /", "sudo rm -rf /", "rm -rf ~", "rm -rf $HOME/", "cd / && rm -rf *", "rm -rf /usr/lib",
    "chmod -R 777 /", "chown -R nobody /etc", "dd if=/dev/zero of=/dev/sda bs=1M", "mkfs.ext4 /dev/sda1",
    "wipefs -a /dev/nvme0n1", "find / -delete", "echo x > /etc/hosts", "mv ~ /tmp/old-home", "rm -rf ../..",
    "bash -c 'rm -rf /'", "command rm -r -f /", "rm -rf ~/.ssh", "truncate -s 0 /etc/passwd",
    "cat /dev/zero > /dev/sdb", "shred /dev/sda", "rsync -a --delete /tmp/empty/ /", "> /etc/hosts",
    "python3 -c \"import shutil; shutil.rmtree('/')\"", "node -e \"require('fs').rmSync('/usr', {recursive: true})\"",
    "python3 -c \"open('/etc/hosts', 'w').write('')\"", "python3 -c 'import os; os.system(\"rm -rf ~\")'",
    'rm -rf "$STEAMROOT/"*', "rm -rf $DIR/", 'rm -rf "${OUT}"/',
])
@pytest.mark.parametrize("agent", [None, "agent-b"])
def test_destruction_outside_the_repository_is_refused_for_every_agent(tmp_path, command, agent):
    repo = _committed_repo(tmp_path / "repo")
    decision, reason = hook(repo, "Bash", {"command": command}, agent)
    assert decision == "deny" and "[L01]" in reason, reason


@pytest.mark.parametrize("command", [
    "rm -rf target node_modules", "rm -rf /tmp/build-cache", "rm -f ~/.cache/pip/x.whl",
    "echo 3 > /proc/sys/vm/drop_caches", "make > /dev/null 2>&1", "chmod -R u+w src",
    "dd if=/dev/urandom of=/tmp/blob bs=1k count=1", "find . -name '*.pyc' -delete", "rm -rf src/__pycache__",
    "> build.log", "python3 -c \"import shutil; shutil.rmtree('build')\"", "cat -u /dev/tty12 > /dev/tty13",
    'rm -rf "${DIR:?}/"*', 'rm -rf "$OUT/build"',
])
def test_cleaning_up_inside_the_repository_or_scratch_passes(tmp_path, command):
    repo = _committed_repo(tmp_path / "repo")
    decision, reason = hook(repo, "Bash", {"command": command}, None)
    assert "[L01]" not in reason, reason


@pytest.mark.parametrize("command,refused", [
    ("git push --force origin main", True), ("git push -f origin master", True),
    ("git push origin +main", True), ("git push origin --delete main", True), ("git push origin :release/3", True),
    ("git push --force-with-lease origin HEAD:main", True), ("git push -f", True), ("git push --mirror", True),
    ("git push --force origin feature/x", False), ("git push origin main", False),
    ("git push -u origin HEAD", False),
])
def test_protected_branches_are_never_force_pushed(tmp_path, command, refused):
    repo = _committed_repo(tmp_path / "repo")
    _git(repo, "branch", "-M", "main")
    decision, reason = hook(repo, "Bash", {"command": command}, "agent-b")
    assert ("[L03]" in reason) is refused, reason


def test_removing_another_agents_worktree_by_force_is_refused(tmp_path):
    repo = _committed_repo(tmp_path / "repo")
    wt = tmp_path / "wt-a"
    _git(repo, "worktree", "add", "-q", "-b", "agent-a", str(wt))
    decision, _ = hook(repo, "Write", {"file_path": str(wt / "src/a.py"), "content": "A\n"}, "agent-a", cwd=wt)
    assert decision == "allow"
    (wt / "src" / "a.py").write_text("A\n")
    decision, reason = hook(repo, "Bash", {"command": f"git worktree remove --force {wt}"}, "agent-b")
    assert decision == "deny" and "[L02]" in reason and "subagent agent-a" in reason, reason
    decision, reason = hook(repo, "Bash", {"command": f"git worktree remove --force {wt}"}, "agent-a")
    assert decision == "allow", reason


def test_a_write_recorded_long_ago_is_of_unknown_origin(tmp_path):
    """Yesterday's session edited src/a.py and is gone: today's lone agent may reset it."""
    repo = _committed_repo(tmp_path / "repo")
    (repo / "src" / "a.py").write_text("yesterday\n")
    log = repo / ".swarmgate" / "log"
    log.mkdir(parents=True)
    (log / "writes.jsonl").write_text('{"t": 1000, "s": "old", "a": "main:old", "p": "src/a.py"}\n')
    decision, reason = hook(repo, "Bash", {"command": "git checkout -- src/a.py"}, None)
    assert decision == "allow", reason
