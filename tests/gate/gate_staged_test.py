"""gate-staged on real repositories: it sees exactly HEAD + the index, and touches nothing."""
from __future__ import annotations

import hashlib
import io
import os
import signal
import subprocess
import sys
import time

import pytest

from swarmgate import procinfo, state_paths
from swarmgate.exit_codes import Exit
from swarmgate.gate import gate_staged, selftest_cells
from swarmgate.config import load_config
from swarmgate.gate.stages import Stage, build
from swarmgate.gate.tree import TreeError, clear_stale
from swarmgate.hosts import cgroups
from swarmgate.selftest import run_suite
from tests.builders import full_filesystem


def verdicts(result) -> dict[str, str]:
    return {o.stage: o.verdict for o in result.outcomes}


def test_staged_bad_worktree_good_is_red(bad_repo):
    bad_repo.stage_blob("data/a.txt", b"BAD\n")
    before = bad_repo.snapshot()
    result = bad_repo.gate()
    assert verdicts(result)["no-bad"] == "fail"
    assert result.red
    assert bad_repo.snapshot() == before
    assert (bad_repo.path / "data/a.txt").read_text() == "good\n"


def test_staged_good_worktree_bad_is_green(bad_repo):
    bad_repo.write("data/a.txt", "BAD in the worktree only\n")
    bad_repo.write("data/untracked.txt", "BAD untracked\n")
    before = bad_repo.snapshot()
    result = bad_repo.gate()
    assert verdicts(result)["no-bad"] == "pass", result.text
    assert not result.red
    assert bad_repo.snapshot() == before


def test_cli_exit_codes_and_summary(bad_repo):
    cp = bad_repo.cli()
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "no-bad" in cp.stdout and "green" in cp.stdout
    bad_repo.stage_blob("data/a.txt", b"BAD\n")
    cp = bad_repo.cli()
    assert cp.returncode == 1
    assert "RED: no-bad" in cp.stdout
    cp = bad_repo.cli("--stage", "nope")
    assert cp.returncode == Exit.USAGE and "no stage named 'nope'" in cp.stderr
    cp = bad_repo.cli("--stage", "no-bad", "rules-stamp")
    assert cp.returncode == 1 and "no-conflict-markers" not in cp.stdout and "rules-stamp" in cp.stdout
    cp = bad_repo.cli("--list")
    assert cp.returncode == 0 and "no-bad" in cp.stdout and "rules-stamp" in cp.stdout


def test_partial_staging_of_one_file(bad_repo):
    lines = [f"line {i}\n" for i in range(10)]
    bad_repo.write("data/f.txt", "".join(lines))
    bad_repo.git("add", "data/f.txt")
    bad_repo.commit("f")
    # worktree: line 0 becomes BAD, line 9 becomes ok2; only the line-9 hunk is staged (git apply --cached)
    work = lines[:]
    work[0] = "BAD\n"
    work[9] = "ok2\n"
    bad_repo.write("data/f.txt", "".join(work))
    diff = bad_repo.git("diff", "-U0", "data/f.txt")
    hunks = diff.split("\n@@")
    head, second = hunks[0], "@@" + hunks[2]
    patch = head + "\n" + second
    if not patch.endswith("\n"):
        patch += "\n"
    bad_repo.git("apply", "--cached", "--unidiff-zero", "-", input=patch.encode())
    staged = bad_repo.git("show", ":data/f.txt")
    assert "ok2" in staged and "BAD" not in staged
    bad_repo.config(bad_repo.path.joinpath(".claude/swarmgate.toml").read_text() + """
[[gate.stages]]
name = "line9"
command = "test \\"$(sed -n 10p data/f.txt)\\" = ok2"
inputs = ["data/**"]
""")
    before = bad_repo.snapshot()
    result = bad_repo.gate()
    assert verdicts(result)["no-bad"] == "pass" and verdicts(result)["line9"] == "pass", result.text
    assert bad_repo.snapshot() == before


def test_binary_symlink_executable_and_untracked(repo):
    blob = bytes(range(256)) * 64
    digest = hashlib.sha256(blob).hexdigest()
    command = (f"echo '{digest}  b.bin' | sha256sum -c - && test -L link && "
               "test \\\"$(readlink link)\\\" = target.txt && grep -q hello link && test -x run.sh && ./run.sh && "
               "test ! -e untracked.txt")
    repo.config(f"""
[[gate.stages]]
name = "shape"
command = "{command}"
inputs = ["**"]
""")
    repo.write("b.bin", blob)
    repo.write("target.txt", "hello\n")
    os.symlink("target.txt", repo.path / "link")
    repo.write("run.sh", "#!/bin/sh\nexit 0\n", mode=0o644)
    repo.git("add", ".")
    repo.git("update-index", "--chmod=+x", "run.sh")  # executable in the index, not in the worktree
    repo.write("untracked.txt", "not staged\n")
    before = repo.snapshot()
    result = repo.gate()
    assert verdicts(result)["shape"] == "pass", result.text + "".join(o.output for o in result.outcomes)
    assert repo.snapshot() == before
    assert not os.access(repo.path / "run.sh", os.X_OK)


def test_deletions_and_renames(bad_repo):
    bad_repo.write("data/gone.txt", "BAD but deleted\n")
    bad_repo.write("data/old.txt", "moving\n")
    bad_repo.git("add", ".")
    bad_repo.commit("two files")
    bad_repo.git("rm", "-q", "--cached", "data/gone.txt")  # staged deletion; the worktree keeps it
    bad_repo.git("mv", "data/old.txt", "data/new.txt")
    bad_repo.config(bad_repo.path.joinpath(".claude/swarmgate.toml").read_text() + """
[[gate.stages]]
name = "moved"
command = "test ! -e data/gone.txt && test ! -e data/old.txt && test -f data/new.txt"
inputs = ["data/**"]
""")
    before = bad_repo.snapshot()
    result = bad_repo.gate()
    assert verdicts(result) == {"rules-stamp": "pass", "no-conflict-markers": "pass", "no-large-files": "pass",
                                "no-bad": "pass", "moved": "pass"}, result.text
    assert bad_repo.snapshot() == before
    assert (bad_repo.path / "data/gone.txt").exists()


def test_submodule_gitlink_is_an_empty_directory_with_a_note(repo):
    repo.config("""
[[gate.stages]]
name = "sub"
command = "test -d vendor/lib && test -f vendor/lib/.swarmgate-gitlink"
inputs = ["**"]
""")
    repo.write("a.txt", "x\n")
    repo.git("add", ".")
    repo.commit("base")
    head = repo.git("rev-parse", "HEAD").strip()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    result = repo.gate()
    assert verdicts(result)["sub"] == "pass", result.text
    assert any("submodule vendor/lib" in n for n in result.notes)


def test_no_commit_yet(repo):
    repo.config("""
[[gate.stages]]
name = "no-bad"
command = "! grep -rq BAD data"
inputs = ["data/**"]
""")
    repo.write("data/a.txt", "fine\n")
    repo.git("add", ".")
    assert repo.git("rev-parse", "--verify", "-q", "HEAD", check=False) == ""
    result = repo.gate()
    assert not result.red, result.text
    repo.stage_blob("data/a.txt", b"BAD\n")
    assert verdicts(repo.gate())["no-bad"] == "fail"


def test_stages_run_without_git_variables_and_ignored_paths_are_linked(repo):
    repo.config("""
[gate]
link = ["tools"]
[[gate.stages]]
name = "env"
command = "test -z \\"$GIT_INDEX_FILE\\" && test -z \\"$GIT_DIR\\" && tools/helper.sh && test ! -d .git"
inputs = ["**"]
""")
    repo.write(".gitignore", "tools/\n")
    repo.write("tools/helper.sh", "#!/bin/sh\nexit 0\n", mode=0o755)
    repo.git("add", ".")
    env = dict(os.environ, GIT_DIR=str(repo.path / ".git"))
    result = repo.gate(env=env)
    assert verdicts(result)["env"] == "pass", result.text + "".join(o.output for o in result.outcomes)


def test_common_stages_conflict_markers_and_large_files(repo):
    repo.write("ok.txt", "fine\n")
    repo.git("add", ".")
    repo.commit("base")
    repo.stage_blob("merge.txt", b"a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> other\n")
    repo.stage_blob("big.bin", b"\0" * (600 * 1024))
    result = repo.gate()
    v = verdicts(result)
    assert v["no-conflict-markers"] == "fail" and v["no-large-files"] == "fail"
    text = "".join(o.output for o in result.outcomes)
    assert "merge.txt:2" in text and "big.bin" in text
    repo.config("[gate]\ncommon = false\n")
    assert "no-conflict-markers" not in verdicts(repo.gate())


def test_large_file_already_in_head_is_not_flagged(repo):
    repo.write("big.bin", b"\0" * (600 * 1024))
    repo.git("add", ".")
    repo.commit("big")
    repo.stage_blob("small.txt", b"x\n")
    assert verdicts(repo.gate())["no-large-files"] == "pass"


def test_rules_stamp_stage_is_first_and_red_on_a_changed_copy(repo):
    repo.write(".claude/sop/VERSION", "2\n")
    repo.write(".claude/sop/rules.md", "rules\n")
    repo.write(".claude/sop-version", "1\n")
    repo.git("add", ".")
    result = repo.gate()
    assert result.outcomes[0].stage == "rules-stamp"
    assert result.outcomes[0].verdict == "fail"
    assert "rules changed" in result.outcomes[0].output
    repo.stage_blob(".claude/sop-version", b"2\n")
    assert verdicts(repo.gate())["rules-stamp"] == "pass"


def test_rules_stamp_red_after_the_stamp_says_to_stage_it(repo):
    """The red line's way-out is `swarmgate sop stamp`; run, it stamps the working tree, and the gate, which
    reads the index, was red with the same words again (a loop an agent pasting it never leaves). Now
    it names what is left: staging the stamp; pasted, the gate is green."""
    repo.write(".claude/sop/VERSION", "2\n")
    repo.write(".claude/sop-version", "1\n")
    repo.git("add", ".")
    repo.commit("a rules copy at 2, stamped 1")
    first = repo.gate().outcomes[0]
    assert first.verdict == "fail" and "`swarmgate sop stamp`" in first.output and "git add" not in first.output
    repo.write(".claude/sop-version", "2\n")    # what `swarmgate sop stamp` writes
    red = repo.gate().outcomes[0]
    assert red.verdict == "fail" and "stage it (`git add .claude/sop-version .claude/sop`)" in red.output, red.output
    repo.git("add", ".claude/sop-version", ".claude/sop")
    assert verdicts(repo.gate())["rules-stamp"] == "pass"


def test_unmerged_index_is_a_clear_error(repo):
    repo.write("a.txt", "base\n")
    repo.git("add", ".")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "other")
    repo.write("a.txt", "other\n")
    repo.git("commit", "-qam", "other")
    repo.git("checkout", "-q", "main")
    repo.write("a.txt", "main\n")
    repo.git("commit", "-qam", "main")
    repo.git("merge", "other", check=False)
    before = repo.snapshot()
    with pytest.raises(TreeError, match="unresolved merge conflicts in a.txt"):
        repo.gate()
    assert repo.snapshot() == before
    cp = repo.cli()
    assert cp.returncode == Exit.USAGE and "git add" in cp.stderr and "Traceback" not in cp.stderr


def test_staged_config_wins_over_an_unstaged_edit(bad_repo):
    bad_repo.write(".claude/swarmgate.toml", "[gate]\ncommon = false\n")  # not staged
    result = bad_repo.gate()
    assert "no-bad" in verdicts(result)
    assert any("unstaged changes" in n for n in result.notes)


def test_bad_config_is_one_clear_line(repo):
    repo.config("[gate]\nnope = 1\n")
    cp = repo.cli()
    assert cp.returncode == Exit.USAGE
    assert "unknown key [gate] nope" in cp.stderr and "Traceback" not in cp.stderr


# --- unreadable input: we export from the index, so "unreadable" is the object store or the index ---

def test_unreadable_worktree_file_does_not_matter(bad_repo):
    p = bad_repo.path / "data/a.txt"
    bad_repo.stage_blob("data/a.txt", b"good staged\n")
    os.chmod(p, 0)
    try:
        before = bad_repo.snapshot() if os.geteuid() == 0 else None
        result = bad_repo.gate()
        assert verdicts(result)["no-bad"] == "pass", result.text
        assert os.stat(p).st_mode & 0o777 == 0
        if before is not None:
            assert bad_repo.snapshot() == before
    finally:
        os.chmod(p, 0o644)


def test_missing_object_is_a_clear_error_and_nothing_is_lost(bad_repo):
    oid = bad_repo.stage_blob("data/new.txt", b"a staged blob that goes missing\n")
    obj = bad_repo.path / ".git" / "objects" / oid[:2] / oid[2:]
    aside = obj.with_name(obj.name + ".aside")
    before = bad_repo.snapshot()
    os.replace(obj, aside)
    try:
        with pytest.raises(TreeError, match=f"object {oid} is missing or unreadable"):
            bad_repo.gate(use_cache=False)
        cp = bad_repo.cli("--no-cache")
        assert cp.returncode == Exit.USAGE
        assert f"object {oid} is missing or unreadable" in cp.stderr and "Traceback" not in cp.stderr
    finally:
        os.replace(aside, obj)
    assert bad_repo.snapshot() == before
    assert bad_repo.trees() == []


def test_corrupt_index_is_a_clear_error(bad_repo, tmp_path):
    broken = tmp_path / "broken-index"
    broken.write_bytes(b"DIRC garbage")
    before = bad_repo.snapshot()
    env = dict(os.environ, GIT_INDEX_FILE=str(broken))
    with pytest.raises(TreeError, match="reading the index"):
        bad_repo.gate(env=env)
    cp = bad_repo.cli(env=env)
    assert cp.returncode == Exit.USAGE and "reading the index" in cp.stderr
    assert bad_repo.snapshot() == before


# --- heavy stages ---

HEAVY = """
[[gate.stages]]
name = "big"
command = "true"
heavy = true
cap = "256M"
timeout = 30
"""


def test_heavy_stage_is_skipped_without_the_prefix(repo):
    repo.config(HEAVY)
    result = repo.gate()
    big = [o for o in result.outcomes if o.stage == "big"][0]
    assert big.verdict == "skipped" and not result.red
    assert "SWARMGATE_HEAVY=commit" in big.notes[0]


def test_heavy_stage_refuses_without_the_runner(repo, monkeypatch):
    repo.config(HEAVY)
    monkeypatch.setattr(gate_staged, "RUNNER_MODULE", "swarmgate.hosts.no_such_runner_module")
    result = repo.gate(env=dict(os.environ, SWARMGATE_HEAVY="commit"))
    big = [o for o in result.outcomes if o.stage == "big"][0]
    assert big.verdict == "error" and result.red
    assert "run-with-memory-cap" in big.output


def test_heavy_stage_goes_through_the_runner(monkeypatch):
    monkeypatch.setattr(gate_staged, "RUNNER_MODULE", "swarmgate.sizes")  # importable stand-in
    argv = gate_staged._runner_argv(Stage("big", "project", command="make check", heavy=True, cap=256 << 20,
                                          timeout=30))
    if argv is None:
        pytest.skip("no run-with-memory-cap console script in this environment")
    assert argv[0].endswith("run-with-memory-cap")
    assert argv[1:] == [str(256 << 20), "--label", "gate:big", "--timeout", "30", "--", "sh", "-c", "make check"]


def test_a_heavy_stage_without_a_cap_asks_the_runner_for_the_cap_this_machine_gives(repo):
    """[[gate.stages]] cap defaults to auto: run-with-memory-cap computes it from the machine and the
    stage's history (8G named for every machine answered 252 where the total is smaller)."""
    (repo.path / ".claude").mkdir(exist_ok=True)
    (repo.path / ".claude" / "swarmgate.toml").write_text(
        '[[gate.stages]]\nname = "big"\ncommand = "make check"\nheavy = true\n')
    big = [s for s in build(load_config(str(repo.path))) if s.name == "big"][0]
    assert big.cap == "auto"
    argv = gate_staged._runner_argv(big)
    if argv is not None:
        assert argv[1:3] == ["auto", "--label"]


# --- killed mid-stage ---

def test_sigkill_mid_stage_touches_nothing_and_the_next_run_cleans_up(bad_repo, tmp_path):
    mark = tmp_path / "stage-started"
    bad_repo.config(bad_repo.path.joinpath(".claude/swarmgate.toml").read_text() + f"""
[[gate.stages]]
name = "slow"
command = "sleep 300 & echo $! > {mark}.tmp && mv {mark}.tmp {mark}; wait"
inputs = ["data/**"]
timeout = 600
""")
    bad_repo.commit("slow stage")
    # unstaged work, a partial stage, an untracked file and a stash entry that must all survive
    bad_repo.write("data/a.txt", "stashed change\n")
    bad_repo.git("stash", "-q")
    bad_repo.write("data/a.txt", "unstaged work\n")
    bad_repo.stage_blob("data/b.txt", b"staged\n")
    bad_repo.write("notes.txt", "untracked\n")
    before = bad_repo.snapshot()
    gate = subprocess.Popen([*bad_repo.cli_argv(), "--no-cache"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sleeper = None
    try:
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline and gate.poll() is None:
            time.sleep(0.05)
        assert mark.exists(), "the slow stage never started"
        sleeper = int(mark.read_text())
        gate.send_signal(signal.SIGKILL)
        gate.wait()
        left = bad_repo.trees()
        assert len(left) == 1, "the killed gate's tree should still be there before the next run"
        assert bad_repo.snapshot() == before
        assert "worktree" not in bad_repo.git("worktree", "list", "--porcelain").replace(
            f"worktree {bad_repo.path}\n", "")
        # the next run clears the dead owner's tree and stops what still ran in it
        nxt = bad_repo.gate(only=["no-bad"])
        assert any(f"removed the tree {left[0].name}" in n for n in nxt.notes), nxt.notes
        deadline = time.monotonic() + 10
        while procinfo.is_alive(sleeper, None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not procinfo.is_alive(sleeper, None)
        assert bad_repo.trees() == []
        assert bad_repo.snapshot() == before
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.wait()
        if sleeper and procinfo.is_alive(sleeper, None):
            os.kill(sleeper, signal.SIGKILL)


def test_stale_tree_of_a_live_owner_is_kept(gate_env):
    root = state_paths.gate_trees_dir()
    me = procinfo.identity()
    live = root / f"{me['pid']}-{me['start']}-abcd1234"
    dead = root / "999999999-1-abcd1234"
    (live / "tree").mkdir(parents=True)
    (dead / "tree" / "sub").mkdir(parents=True)
    os.chmod(dead / "tree" / "sub", 0o500)
    assert clear_stale() == [dead]
    assert live.exists() and not dead.exists()


def test_tree_is_removed_after_each_run(bad_repo):
    bad_repo.gate(use_cache=False)
    bad_repo.stage_blob("data/a.txt", b"BAD\n")
    bad_repo.gate(use_cache=False)
    assert bad_repo.trees() == []


def test_break_switch_outside_selftest_refuses(bad_repo):
    cp = bad_repo.cli(env=dict(os.environ, SWARMGATE_BREAK="gate-sees-worktree"))
    assert cp.returncode == Exit.USAGE and "outside a self-test" in cp.stderr


def test_selftest_suite_passes_and_every_switch_turns_red(gate_env):
    res = run_suite(selftest_cells.suite())
    assert res.ok, res.rows
    assert {r[0] for r in res.rows if r[0]} == {"gate-sees-worktree", "cache-ignores-inputs", "no-tree-cleanup",
                                                "preflight-ignores-conditions"}


def test_summary_is_a_rich_table_on_a_terminal_and_plain_in_a_pipe(bad_repo):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    result = bad_repo.gate()
    term, pipe = Terminal(), io.StringIO()
    gate_staged.render(result, term)
    gate_staged.render(result, pipe)
    assert "┃" in term.getvalue() and "stage" in term.getvalue() and "no-bad" in term.getvalue()
    assert "┃" not in pipe.getvalue()
    assert any(line.split()[:3] == ["no-bad", "pass", "ran"] for line in pipe.getvalue().splitlines())


def test_unusable_state_dir_is_one_clear_line(bad_repo, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cp = bad_repo.cli(env=dict(os.environ, SWARMGATE_STATE_DIR=str(blocker)))
    assert cp.returncode == Exit.USAGE
    assert "SWARMGATE_STATE_DIR" in cp.stderr and "Traceback" not in cp.stderr


def test_a_full_state_filesystem_is_251_naming_the_file_and_the_errno(bad_repo, tmp_path):
    """The temporary tree on a real full filesystem (a 256 KiB tmpfs): a staged file larger than the room
    left fails the tree's export; one line names that file and ENOSPC (it was '[Errno 28] No space left on
    device' with no path), and the worktree and index are untouched."""
    bad_repo.write("data/big.bin", os.urandom(400_000))
    bad_repo.git("add", "data/big.bin")
    before = bad_repo.snapshot()
    with full_filesystem(tmp_path / "full") as state:
        os.unlink(state.parent / "filler")   # room for the tree's owner record, not for big.bin
        cp = bad_repo.cli(env=dict(os.environ, SWARMGATE_STATE_DIR=str(state)))
    assert cp.returncode == Exit.USAGE and "Traceback" not in cp.stderr, cp.stderr
    (line,) = cp.stderr.strip().splitlines()
    assert "cannot write " in line and "data/big.bin: No space left on device (ENOSPC)" in line, line
    assert bad_repo.snapshot() == before


def _cgroups_reason() -> str | None:
    if os.geteuid() != 0:
        return "memory cgroups need root"
    try:
        backend = cgroups.get("auto")
    except cgroups.CgroupError as e:
        return str(e)
    if backend.name == "systemd":
        return "systemd is PID 1: the runner's own tests cover that backend"
    if not os.access(backend.root, os.W_OK):
        return f"{backend.root} is not writable"
    return None


@pytest.mark.cgroup
def test_heavy_stages_run_under_the_real_memory_cap(repo, tmp_path, monkeypatch):
    reason = _cgroups_reason()
    if reason is not None:
        pytest.skip(reason)
    slice_name = f"sggate-{os.getpid()}-{int(time.time() * 1000) % 10**8}"
    monkeypatch.setenv("SWARMGATE_HOSTS_CONFIG", str(tmp_path / "hosts.toml"))
    repo.config(f"""
[memory]
total = "256M"
slice = "{slice_name}"
[[gate.stages]]
name = "heavy-ok"
command = "grep memory /proc/self/cgroup"
heavy = true
cap = "64M"
timeout = 60
[[gate.stages]]
name = "heavy-oom"
command = "python3 -c 'bytearray(200 * 2**20)'"
heavy = true
cap = "64M"
timeout = 60
""")
    try:
        result = repo.gate(env=dict(os.environ, SWARMGATE_HEAVY="commit"))
        by = {o.stage: o for o in result.outcomes}
        assert by["heavy-ok"].verdict == "pass", by["heavy-ok"].output
        assert slice_name in by["heavy-ok"].output          # it ran inside the runner's slice
        assert by["heavy-oom"].verdict == "error" and by["heavy-oom"].rc == Exit.OWN_CAP, by["heavy-oom"].output
        assert result.red
        assert not (repo.state / "gate-cache" / "verdicts" / "heavy-oom").exists()   # never cached
        again = {o.stage: o.how for o in repo.gate().outcomes}                          # no prefix now
        assert again["heavy-ok"] == "cached" and again["heavy-oom"] == "skipped"
    finally:
        cgroups.get("auto").remove_slice(slice_name)
    assert not os.path.exists(cgroups.get("auto").slice_path(slice_name))


def test_intent_to_add_files_are_not_part_of_the_tree(repo):
    repo.config("""
[[gate.stages]]
name = "ita"
command = "test ! -e later.txt && test -f empty.txt && test ! -s empty.txt"
inputs = ["**"]
""")
    repo.write("empty.txt", "")
    repo.write("later.txt", "not staged yet\n")
    repo.git("add", "empty.txt", ".claude")
    repo.git("add", "-N", "later.txt")
    before = repo.snapshot()
    result = repo.gate()
    assert verdicts(result)["ita"] == "pass", result.text + "".join(o.output for o in result.outcomes)
    assert repo.snapshot() == before


def test_sigterm_mid_stage_cleans_up_at_once(bad_repo, tmp_path):
    mark = tmp_path / "started"
    bad_repo.config(bad_repo.path.joinpath(".claude/swarmgate.toml").read_text() + f"""
[[gate.stages]]
name = "slow"
command = "sleep 300 & echo $! > {mark}.tmp && mv {mark}.tmp {mark}; wait"
inputs = ["data/**"]
""")
    before = bad_repo.snapshot()
    log = tmp_path / "gate.log"
    with open(log, "wb") as f:
        gate = subprocess.Popen([*bad_repo.cli_argv(), "--no-cache"], stdout=f, stderr=subprocess.STDOUT)
    sleeper = None
    try:
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline and gate.poll() is None:
            time.sleep(0.05)
        assert mark.exists(), log.read_text()
        sleeper = int(mark.read_text())
        gate.send_signal(signal.SIGTERM)
        rc = gate.wait(timeout=30)
        assert rc == 128 + signal.SIGTERM, (rc, log.read_text())
        assert bad_repo.trees() == [], log.read_text()     # removed by the gate itself
        deadline = time.monotonic() + 10
        while procinfo.is_alive(sleeper, None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not procinfo.is_alive(sleeper, None)        # the stage's process group was stopped
        assert bad_repo.snapshot() == before
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.wait()
        if sleeper and procinfo.is_alive(sleeper, None):
            os.kill(sleeper, signal.SIGKILL)


def test_a_project_stage_may_not_take_a_built_in_name(repo):
    repo.config('[[gate.stages]]\nname = "no-large-files"\ncommand = "true"\n')
    cp = repo.cli()
    assert cp.returncode == Exit.USAGE and "name of a built-in stage" in cp.stderr


def test_umbrella_verb_runs_the_gate(bad_repo):
    cp = subprocess.run([sys.executable, "-m", "swarmgate", "gate-staged", "--repo", str(bad_repo.path)],
                        capture_output=True, text=True)
    assert cp.returncode == 0 and "gate-staged: green" in cp.stdout
