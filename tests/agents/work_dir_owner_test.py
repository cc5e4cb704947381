"""work-dir-owner: ownership files, registrations for H01, and a clean that deletes only the
caller's directories that no process uses (real processes hold cwd and open files)."""
from __future__ import annotations

import io
import json
import os
import subprocess

import pytest

from swarmgate.agents import work_dir_owner as wdo
from tests.agents.support import tool
from tests.processes import terminate


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "work"
    r.mkdir()
    return r


@pytest.fixture
def procs():
    started = []
    yield started
    for p in started:
        terminate(p)


def cli(*args, env=None):
    return subprocess.run([tool("work-dir-owner"), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_claim_writes_the_ownership_file(root):
    path, rec = wdo.claim("build-1", str(root), "cargo build of t3", "sess-a", agent="ag1")
    assert path == str(root / "build-1") and os.path.isdir(path)
    on_disk = json.loads((root / "build-1" / wdo.OWNER_FILE).read_text())
    assert on_disk == rec
    assert rec["session"] == "sess-a" and rec["agent"] == "ag1" and rec["purpose"] == "cargo build of t3"
    assert rec["pid"] == os.getppid() and rec["start"] and rec["created"].endswith("Z")


def test_claim_refuses_another_sessions_directory_and_outside_the_root(root, tmp_path):
    wdo.claim("d", str(root), "x", "sess-a")
    with pytest.raises(wdo.OwnerError, match="owned by session sess-a"):
        wdo.claim("d", str(root), "y", "sess-b")
    with pytest.raises(wdo.OwnerError, match="not directly under the work root"):
        wdo.claim(str(tmp_path / "elsewhere"), str(root), "y", "sess-b")
    with pytest.raises(wdo.OwnerError, match="not directly under the work root"):
        wdo.claim("../escape", str(root), "y", "sess-b")
    with pytest.raises(wdo.OwnerError, match="not directly under the work root"):
        wdo.claim("d/nested", str(root), "y", "sess-a")
    with pytest.raises(wdo.OwnerError, match="no session"):
        wdo.claim("e", str(root), "y", "")
    # the same session may claim again (new agent, same creation time)
    _, first = wdo.claim("f", str(root), "x", "sess-a")
    _, again = wdo.claim("f", str(root), "x2", "sess-a", agent="ag2")
    assert again["created"] == first["created"] and again["agent"] == "ag2"


def test_registrations_filter_by_session_and_agent(root):
    wdo.claim("a", str(root), "p", "s1", agent="x")
    wdo.claim("b", str(root), "p", "s1", agent="y")
    wdo.claim("c", str(root), "p", "s2", agent="x")
    (root / "unowned").mkdir()
    (root / "bad").mkdir()
    (root / "bad" / wdo.OWNER_FILE).write_text("{not json")
    names = lambda regs: sorted(os.path.basename(r["path"]) for r in regs)  # noqa: E731
    assert names(wdo.registrations(str(root))) == ["a", "b", "c"]
    assert names(wdo.registrations(str(root), session="s1")) == ["a", "b"]
    assert names(wdo.registrations(str(root), agent="x")) == ["a", "c"]
    assert names(wdo.registrations(str(root), session="s1", agent="x")) == ["a"]
    assert wdo.registrations("") == [] and wdo.registrations(str(root / "missing")) == []


def test_clean_deletes_only_mine_and_unused(root, procs):
    mine_idle, _ = wdo.claim("mine-idle", str(root), "old build", "me")
    mine_cwd, _ = wdo.claim("mine-cwd", str(root), "running build", "me")
    mine_open, _ = wdo.claim("mine-open", str(root), "log being written", "me")
    theirs, _ = wdo.claim("theirs", str(root), "their build", "other")
    (root / "unowned").mkdir()
    (root / "mine-idle" / "sub").mkdir()
    (root / "mine-idle" / "sub" / "f").write_text("x")
    procs.append(subprocess.Popen(["sleep", "120"], cwd=mine_cwd))
    log = open(os.path.join(mine_open, "nested.log"), "w")  # noqa: SIM115 - held open by a child below
    try:
        procs.append(subprocess.Popen(["sleep", "120"], stdout=log))
    finally:
        log.close()
    p = cli("clean", "--root", str(root), "--session", "me")
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(mine_idle)
    assert os.path.isdir(mine_cwd) and os.path.isdir(mine_open)
    assert os.path.isdir(theirs) and os.path.isdir(root / "unowned")
    out = p.stdout
    assert f"deleted {mine_idle}" in out
    assert f"kept {mine_cwd}: yours but in use by pid {procs[0].pid} (cwd)" in out
    assert f"pid {procs[1].pid} (open file)" in out
    assert "for a person (not deleted):" in out and "owned by session other" in out and "unowned" in out
    # once nothing uses them, they go
    for pr in procs:
        terminate(pr)
    p = cli("clean", "--root", str(root), "--session", "me")
    assert not os.path.exists(mine_cwd) and not os.path.exists(mine_open) and os.path.isdir(theirs)


def test_clean_never_follows_a_symlinked_directory(root, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / wdo.OWNER_FILE).write_text(json.dumps({"session": "me"}))
    (victim / "keep").write_text("x")
    (root / "link").symlink_to(victim)
    wdo.clean(str(root), "me", out=io.StringIO())
    assert (victim / "keep").exists()


def test_clean_dry_run_and_errors(root):
    wdo.claim("d", str(root), "p", "me")
    p = cli("clean", "--root", str(root), "--session", "me", "--dry-run")
    assert p.returncode == 0 and "would delete" in p.stdout and (root / "d").is_dir()
    p = cli("clean", "--root", str(root))
    assert p.returncode == 1 and "no session" in p.stderr


def test_cli_claim_list_release(root, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text(f'[workdirs]\nroot = "{root}"\n')
    env = {"SWARMGATE_SESSION_ID": "sess-z"}
    p = cli("--repo", str(repo), "claim", "w1", "--purpose", "copy of the repo", "--agent", "a9", env=env)
    assert p.returncode == 0 and "claimed" in p.stdout and "agent a9" in p.stdout, p.stderr
    p = cli("--repo", str(repo), "list", "--json")
    rows = json.loads(p.stdout)
    assert [(os.path.basename(r["path"]), r["session"], r["agent"]) for r in rows] == [("w1", "sess-z", "a9")]
    p = cli("--repo", str(repo), "list")
    assert "session sess-z, agent a9, copy of the repo" in p.stdout
    p = cli("--repo", str(repo), "release", "w1", "--session", "other")
    assert p.returncode == 1 and "owned by session sess-z" in p.stderr
    p = cli("--repo", str(repo), "release", "w1", env=env)
    assert p.returncode == 0 and not (root / "w1" / wdo.OWNER_FILE).exists() and (root / "w1").is_dir()


def test_the_default_config_has_a_work_root_beside_the_state_dir(repo):
    """main-agent.md tells the main agent to run `work-dir-owner list` and `clean`: with the default
    config (no [workdirs] root) they work, on the repository's root beside the state directory."""
    env = {"SWARMGATE_SESSION_ID": "sess-d"}
    p = cli("--repo", str(repo), "list", env=env)
    assert p.returncode == 0 and p.stdout == "", p.stderr
    p = cli("--repo", str(repo), "claim", "b1", "--purpose", "a release build", env=env)
    assert p.returncode == 0, p.stderr
    made = p.stdout.split()[1]
    state = os.environ["SWARMGATE_STATE_DIR"]
    assert os.path.dirname(os.path.dirname(made)) == state.rstrip("/") + "-work", made
    assert not made.startswith(state + "/") and not made.startswith(str(repo) + "/")
    assert os.path.basename(os.path.dirname(made)).startswith(repo.name + "-")
    p = cli("--repo", str(repo), "list", env=env)
    assert p.returncode == 0 and f"{made}: session sess-d" in p.stdout, p.stdout
    p = cli("--repo", str(repo), "clean", env=env)
    assert p.returncode == 0 and f"deleted {made}" in p.stdout and not os.path.exists(made), p.stdout + p.stderr


def test_selftest_every_switch_turns_its_cell_red():
    p = cli("--selftest")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "clean-ignores-owner -> clean-keeps-others" in p.stdout
    assert "clean-ignores-open -> clean-keeps-in-use" in p.stdout
