"""Issue 10's layers through the real client (Claude Code 2.1.332): the exec-time shims that
SessionStart puts on every command's PATH through $CLAUDE_ENV_FILE (X01), the single-use grant
that lets the main agent's capped heavy run through, and per-agent containment (X02): a
subagent's command rewritten with ``updatedInput`` to join its cgroup keeps the client's cwd
tracking and background tasks, and an allocation past the agent's cap is OOM-killed inside its
own cgroup while another agent's process goes on."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness import agent_path
from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"
HEAVY_LINE = "heavy test: do not run"
SCOPE_FULL = ("SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; "
              "reason=commit gate for this batch'")
STANDIN = """#!/bin/sh
# a stand-in cargo: says how it was called and leaves a marker when the workspace tests run
echo "stand-in cargo $*"
case " $* " in *" test "*--workspace*) echo "$PWD $*" >> {marker};; esac
"""


def _standin(claude_repo) -> tuple[dict, Path]:
    """An environment whose PATH finds a stand-in cargo (behind the shims) and swarmgate's runner."""
    d = claude_repo.root / "standin"
    d.mkdir(exist_ok=True)
    marker = claude_repo.root / "cargo-ran"
    (d / "cargo").write_text(STANDIN.format(marker=marker))
    (d / "cargo").chmod(0o755)
    path = os.pathsep.join([str(d), str(Path(sys.executable).parent), agent_path()])
    return {"PATH": path}, marker


def test_a_subagents_python_subprocess_cargo_run_is_stopped_at_exec_time_and_the_model_reads_why(claude_repo):
    claude_repo.add_agent(WORKER)
    # the reader now finds the argv in the code (hooks/embedded_shell.py): with its guards off, as for a
    # program built in a way no reader decodes, the exec-time layer must stop it
    for code_ in ("B01", "B02", "B10"):
        claude_repo.config_set("guards", code_, "off")
    env, marker = _standin(claude_repo)
    code = "python3 -c 'import subprocess; subprocess.run([\"cargo\", \"test\", \"--workspace\"])'"
    run = claude_repo.run("script:x01-main", [
        Conversation("script:x01-main", [dispatch(WORKER, f"script:x01-sub\nRun the tests.\n{HEAVY_LINE}"),
                                         done("dispatched")]),
        Conversation("script:x01-sub", [bash(code), bash("cargo build"), done("refused, reporting back")]),
    ], env=env)
    assert run.returncode == 0, run.describe()
    first, second = run.results_of("Bash", "script:x01-sub")
    assert "[X01] heavy program refused where it starts (exit 249)" in first.text, run.describe()
    assert "heavy pattern `cargo test --workspace`" in first.text and "Way out:" in first.text
    assert "stand-in cargo build" in second.text, run.describe()   # the same shim lets a light call run
    assert not marker.exists(), marker.read_text()
    (exe,) = run.decisions(event="Exec")
    assert (exe["tool"], exe["codes"], exe["decision"]) == ("cargo", ["X01"], "deny")
    assert exe["agent_id"] and exe["agent_type"] == WORKER          # told apart by its containment cgroup
    pre = run.decisions(event="PreToolUse", agent_type=WORKER)
    assert all(r.get("findings", {}).get("X02") == "rewrite" for r in pre), pre


def test_the_main_agents_authorized_capped_heavy_run_works(claude_repo):
    env, marker = _standin(claude_repo)
    command = f"SWARMGATE_HEAVY=commit {SCOPE_FULL} run-with-memory-cap 256M -- cargo test --workspace"
    run = claude_repo.run("script:grant-main", [
        Conversation("script:grant-main", [bash(command), bash("cargo test --workspace --release 2>&1; true"),
                                           done("ran it")]),
    ], env=env)
    assert run.returncode == 0, run.describe()
    ran, unprefixed = run.results_of("Bash")
    assert "stand-in cargo test --workspace" in ran.text and not ran.is_error, run.describe()
    assert marker.read_text().count("test --workspace") == 1
    # typed without the prefix and the runner: B01 refuses it before it starts
    assert unprefixed.is_error and "[B01]" in unprefixed.text, run.describe()
    assert not list((claude_repo.state_dir / "grants").glob("*.json"))   # the grant was used, once


def test_a_rewritten_subagent_command_keeps_cwd_tracking_and_background_tasks(claude_repo):
    """The same subagent script with containment on and off: the client treats both alike."""
    claude_repo.add_agent(WORKER)
    claude_repo.config_set("write", WORKER, ["**"])
    wait = "for i in 1 2 3 4 5 6 7 8 9 10; do test -s bg.txt && break; sleep 0.5; done; cat bg.txt"
    script = [bash("mkdir -p sub && cd sub && pwd"), bash("pwd"),
              bash("echo from-background > bg.txt", run_in_background=True), bash(wait),
              bash("cat /proc/self/cgroup | grep -c agent- || true"), done("done")]

    def once(tag: str) -> tuple[list[str], object]:
        run = claude_repo.run(f"script:cwd-{tag}", [
            Conversation(f"script:cwd-{tag}", [dispatch(WORKER, f"script:cwd-sub-{tag}\nLook.\n{HEAVY_LINE}"),
                                               done("dispatched")]),
            Conversation(f"script:cwd-sub-{tag}", list(script)),
        ])
        assert run.returncode == 0, run.describe()
        texts = [r.text.replace(str(claude_repo.repo), "REPO") for r in run.results_of("Bash", f"script:cwd-sub-{tag}")]
        return texts, run

    contained, run_on = once("on")
    claude_repo.config_set("guards", "X02", "off")
    plain, run_off = once("off")
    assert int(contained[4].strip()) >= 1 and plain[4].strip() == "0", (contained, plain)   # joined / not
    assert contained[:2] == plain[:2], (contained, plain)            # cd handled the same way
    assert contained[0].strip().endswith("REPO/sub")
    assert "running in background" in contained[2] and "running in background" in plain[2]
    assert contained[3].strip() == plain[3].strip() == "from-background"
    on = run_on.decisions(event="PreToolUse", agent_type=WORKER, session=run_on.session_id)
    off = run_off.decisions(event="PreToolUse", agent_type=WORKER, session=run_off.session_id)
    assert [r.get("findings", {}).get("X02") for r in on] == ["rewrite"] * 5, on
    assert len(off) == 5 and not any("X02" in r["codes"] for r in off), off


def test_past_its_agent_cap_a_subagent_is_oom_killed_in_its_own_cgroup_and_another_agent_goes_on(claude_repo):
    claude_repo.add_agent(WORKER)
    claude_repo.config_set("agents", "memory_cap", "96M")
    claude_repo.config_set("write", WORKER, ["**"])
    flag = claude_repo.repo / "hold.flag"
    hold = ("python3 -c 'import time, pathlib; b = bytearray(40 << 20); b[::4096] = b\"x\" * len(b[::4096]); "
            f"pathlib.Path(\"{flag}\").write_text(\"held\"); time.sleep(12); print(\"survived\", len(b))'")
    hog = (f"for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do test -e {flag} && break; sleep 0.5; done; "
           "python3 -c 'b = bytearray(400 << 20); b[::4096] = b\"x\" * len(b[::4096]); print(\"alloc\" + \"-done\")'")
    run = claude_repo.run("script:oom-main", [
        Conversation("script:oom-main", [
            dispatch(WORKER, f"script:oom-holder\nHold memory.\n{HEAVY_LINE}", run_in_background=True),
            dispatch(WORKER, f"script:oom-hog\nAllocate.\n{HEAVY_LINE}"),
            bash("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; "
                 "do test -e done.flag && break; sleep 0.5; done; true"),
            done("both back"),
        ]),
        Conversation("script:oom-holder", [bash(hold + " && touch done.flag", timeout=60000), done("held")]),
        Conversation("script:oom-hog", [bash(hog, timeout=60000), done("allocated")]),
    ], timeout=150)
    assert run.returncode == 0, run.describe()
    (killed,) = run.results_of("Bash", "script:oom-hog")
    assert "alloc-done" not in killed.text and ("137" in killed.text or "Killed" in killed.text), run.describe()
    (held,) = run.results_of("Bash", "script:oom-holder")
    assert "survived 41943040" in held.text, run.describe()
    # the hog was told, in its next request, that its own agent's cap killed it
    after = run.conversation("script:oom-hog")[-1].all_text
    assert "killed by the kernel for memory" in after and "YOUR AGENT'S OWN memory cap (96M)" in after, run.describe()
    fails = [r for r in run.decisions(agent_type=WORKER) if r["event"] in ("PostToolUse", "PostToolUseFailure")
             and "X02" in r.get("codes", [])]
    assert len(fails) == 1, run.describe()
