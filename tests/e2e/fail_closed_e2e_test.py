"""Fail closed at the client (issue 11): what swarmgate install writes makes the real client block a
tool call whenever the hook cannot answer, and its permissions.deny rules hold even where no hook
refuses.

Claude Code 2.1.332 lets a call through when a hook crashes, cannot start, times out or prints no
JSON, unless the hook entry says `"onFailure": "block"` (FACTS.md). Each scenario breaks the hook
in one of those ways and checks that the command did not run and that the model was told why.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from messages_api import Conversation, bash, done, tool

pytestmark = pytest.mark.e2e

BLOCKED = 'blocking because onFailure is "block"'


def _settings(claude_repo) -> Path:
    return claude_repo.repo / ".claude" / "settings.json"


def _throwaway_install(claude_repo, where: Path) -> Path:
    """A venv of its own at ``where`` whose `swarmgate install` rewires the repository to call it.

    The venv reuses this checkout's packages (a .pth line), so it takes a second to make; what matters
    is that settings.json then names its entry point, as after a real install from another venv."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    purelib = Path(subprocess.run([str(where / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    ours = sysconfig.get_paths()["purelib"]
    (purelib / "swarmgate-e2e.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    entry = where / "bin" / "swarmgate"
    entry.write_text(f"#!{where / 'bin' / 'python'}\nimport sys\nfrom swarmgate.cli import main\nsys.exit(main())\n")
    entry.chmod(0o755)
    p = subprocess.run([str(entry), "install", str(claude_repo.repo)], capture_output=True, text=True,
                       env=claude_repo.env(), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return entry


def _our_pre_tool_use_hooks(claude_repo) -> list[dict]:
    data = json.loads(_settings(claude_repo).read_text())
    return [h for g in data["hooks"]["PreToolUse"] for h in g["hooks"]]


def test_a_deleted_venv_blocks_every_tool_call(claude_repo, tmp_path):
    venv = tmp_path / "throwaway-venv"
    entry = _throwaway_install(claude_repo, venv)
    hooks = _our_pre_tool_use_hooks(claude_repo)
    # the hooks start that install's interpreter (or its entry point, outside a venv): both are gone below
    assert {h["command"] for h in hooks} <= {str(entry), str(venv / "bin" / "python")}, hooks
    assert all(h["onFailure"] == "block" for h in hooks)
    shutil.rmtree(venv)
    marker = claude_repo.repo / "ran.txt"
    run = claude_repo.run("script:no-venv", [
        Conversation("script:no-venv", [
            bash(f"touch {marker}"),
            tool("Write", {"file_path": str(claude_repo.repo / "notes.txt"), "content": "x\n"}),
            done("could not"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    (shell,) = run.results_of("Bash")
    (write,) = run.results_of("Write")
    for res in (shell, write):
        assert res.is_error and BLOCKED in res.text, run.describe()
    assert not marker.exists() and not (claude_repo.repo / "notes.txt").exists()


@pytest.mark.parametrize("script, how", [
    ("#!/bin/sh\nsleep 20\n", "timed out"),
    ("#!/bin/sh\necho 'hook bug' >&2\nexit 1\n", "exits 1"),
    ("#!/bin/sh\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": 7}}'\n",
     "answers JSON that fails validation"),
])
def test_a_hook_that_times_out_crashes_or_prints_broken_json_blocks_the_call(claude_repo, tmp_path, script, how):
    """The Bash group's command swapped for a broken one, everything else as install wrote it."""
    broken = tmp_path / "broken-hook"
    broken.write_text(script)
    broken.chmod(broken.stat().st_mode | stat.S_IXUSR)
    path = _settings(claude_repo)
    data = json.loads(path.read_text())
    (group,) = [g for g in data["hooks"]["PreToolUse"] if g.get("matcher") == "Bash|Monitor"]
    (h,) = group["hooks"]
    assert h["onFailure"] == "block", h
    h["command"] = str(broken)
    h["timeout"] = 2
    path.write_text(json.dumps(data, indent=2))
    marker = claude_repo.repo / "ran.txt"
    run = claude_repo.run("script:broken-hook", [
        Conversation("script:broken-hook", [bash(f"touch {marker}"), done("could not")]),
    ])
    (res,) = run.results_of("Bash")
    assert res.is_error and BLOCKED in res.text, (how, run.describe())
    assert not marker.exists(), how


def test_the_deny_rules_hold_where_no_hook_refuses(claude_repo):
    """G01 switched off in the config (as a person may do): the client's own rules still refuse edits
    of the settings and the config, and commits that skip the gate; an ordinary commit passes."""
    claude_repo.config_set("guards", "G01", "off")
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "G01 off")
    cfg = claude_repo.repo / ".claude" / "swarmgate.toml"
    local = claude_repo.repo / ".claude" / "settings.local.json"
    cfg_before = cfg.read_bytes()
    head = lambda: subprocess.run(["git", "rev-parse", "HEAD"], cwd=claude_repo.repo, capture_output=True,  # noqa: E731
                                  text=True).stdout.strip()
    start = head()
    run = claude_repo.run("script:deny", [
        Conversation("script:deny", [
            tool("Write", {"file_path": str(cfg), "content": "[guards]\nB01 = 'off'\n"}),
            tool("Write", {"file_path": str(local), "content": "{}\n"}),
            bash("git commit --allow-empty -q -m skip --no-verify"),
            bash("git commit --no-verify --allow-empty -q -m skip"),
            bash("git commit -n --allow-empty -q -m skip"),
            bash("git commit --allow-empty -q -m 'an ordinary commit'"),
            done("done"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    writes = run.results_of("Write")
    assert [w.is_error for w in writes] == [True, True], run.describe()
    assert all("denied by your permission settings" in w.text for w in writes), run.describe()
    assert cfg.read_bytes() == cfg_before and not local.exists()
    shells = run.results_of("Bash")
    assert [s.is_error for s in shells] == [True, True, True, False], run.describe()
    for s in shells[:3]:
        assert "has been denied" in s.text, run.describe()
    # the hooks did not refuse them (G01 is off): the client's rules did
    assert not [d for d in run.decisions(event="PreToolUse") if d["decision"] == "deny"], run.describe()
    log = subprocess.run(["git", "log", "--format=%s", f"{start}..HEAD"], cwd=claude_repo.repo,
                         capture_output=True, text=True).stdout.split("\n")
    assert [x for x in log if x] == ["an ordinary commit"], run.describe()
    assert os.path.exists(cfg)


def test_a_cut_short_answer_with_exit_0_is_let_through_by_the_client(claude_repo, tmp_path):
    """Measured (2.1.332), and why `swarmgate hook` encodes its whole answer before it writes and
    exits 2 if the write fails: the client takes stdout that does not parse as JSON, exit 0, as text
    and runs the call, onFailure or not. Should a release start blocking this, this test says so."""
    broken = tmp_path / "cut-short-hook"
    broken.write_text("#!/bin/sh\nprintf '{\"hookSpecificOutput\": {\"hookEventName\"'\n")
    broken.chmod(0o755)
    path = _settings(claude_repo)
    data = json.loads(path.read_text())
    (group,) = [g for g in data["hooks"]["PreToolUse"] if g.get("matcher") == "Bash|Monitor"]
    group["hooks"][0]["command"] = str(broken)
    path.write_text(json.dumps(data, indent=2))
    marker = claude_repo.repo / "ran.txt"
    run = claude_repo.run("script:cut-short", [
        Conversation("script:cut-short", [bash(f"touch {marker}"), done("ran")]),
    ])
    (res,) = run.results_of("Bash")
    assert not res.is_error and marker.exists(), run.describe()
