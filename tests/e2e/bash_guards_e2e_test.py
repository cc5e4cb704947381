"""Bash guards seen through the real client: what the model is told, what the hook logged."""
from __future__ import annotations

import pytest

from messages_api import Conversation, bash, dispatch, done, tool

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"
SCOPE_FULL = ("SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; "
              "reason=commit gate for this batch'")
MAIN_HEAVY = f"SWARMGATE_HEAVY=commit {SCOPE_FULL} run-with-memory-cap 1G -- cargo test --workspace"


def test_b01_refuses_a_subagents_heavy_test_in_bash_and_monitor(claude_repo):
    claude_repo.add_agent(WORKER)
    run = claude_repo.run("script:b01-main", [
        Conversation("script:b01-main", [
            dispatch(WORKER, "script:b01-sub\nRun the tests.\nheavy test: do not run"),
            done("dispatched"),
        ]),
        Conversation("script:b01-sub", [
            bash("cargo test --workspace"),
            tool("ToolSearch", {"query": "select:Monitor"}),  # Monitor runs shell commands too
            tool("Monitor", {"command": "cargo test --workspace", "description": "watch the tests",
                             "timeout_ms": 60000}),
            done("refused twice, reporting back"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    (res,) = run.results_of("Bash", "script:b01-sub")
    assert res.is_error, run.describe()
    assert res.text.startswith("PreToolUse:Bash hook error:")
    assert "[B01]" in res.text and "heavy tests belong to the main agent" in res.text
    (mon,) = run.results_of("Monitor", "script:b01-sub")
    assert mon.is_error and "[B01]" in mon.text, run.describe()
    recs = run.decisions(event="PreToolUse", agent_type=WORKER)
    assert [(r["tool"], r["decision"]) for r in recs] == [("Bash", "deny"), ("Monitor", "deny")], run.describe()
    assert all("B01" in r["codes"] for r in recs)


def test_main_agents_prefixed_capped_heavy_test_passes_with_the_r01_host_report(claude_repo):
    run = claude_repo.run("script:b01-main-ok", [
        Conversation("script:b01-main-ok", [bash(MAIN_HEAVY), done("ran it")]),
    ])
    assert run.returncode == 0, run.describe()
    (res,) = run.results_of("Bash")
    # B01/B02/B10 let it through; the capped run starts (in the test's own slice) and cargo fails
    # there: the repository has no Cargo.toml
    assert "hook error" not in res.text, run.describe()
    assert run.permission_denials == []
    (rec,) = run.decisions(event="PreToolUse", tool="Bash")
    # R01's host report, and X01's single-use authorization for exactly this run (docs/exec-shims.md)
    assert rec["agent_type"] is None and rec["decision"] == "context" and rec["codes"] == ["R01", "X01"], rec
    # R01's report reached the model in the next request as PreToolUse additional context
    after = run.conversation("script:b01-main-ok")[1]
    assert "PreToolUse:Bash hook additional context: [R01] host resources" in after.all_text, run.describe()
    assert "verdict" in after.all_text


def test_b01_and_b02_refuse_the_main_agents_bare_or_uncapped_heavy_test(claude_repo):
    run = claude_repo.run("script:b01-main-bare", [
        Conversation("script:b01-main-bare", [
            bash("cargo test --workspace"),                                    # B01: no prefix
            bash(f"SWARMGATE_HEAVY=commit {SCOPE_FULL} cargo test --workspace"),  # B02: not capped
            done("refused twice"),
        ]),
    ])
    bare, uncapped = run.results_of("Bash")
    assert bare.is_error and "[B01]" in bare.text and "SWARMGATE_HEAVY=commit" in bare.text, run.describe()
    assert uncapped.is_error and "[B02]" in uncapped.text and "[B01]" not in uncapped.text, run.describe()
    assert "run-with-memory-cap" in uncapped.text
    assert [d["tool_name"] for d in run.permission_denials] == ["Bash", "Bash"]


def test_t01_refuses_timers_from_the_shell_and_the_cron_tool(claude_repo):
    run = claude_repo.run("script:t01", [
        Conversation("script:t01", [
            # (`sleep 600; echo ...` never reaches the hooks: the binary itself blocks a leading foreground
            # sleep and points to Monitor; T01's documented example is a form it lets through)
            bash("(sleep 600 && echo 'check the build') &"),
            bash("echo 'check the build' | at now + 10 minutes"),
            tool("ToolSearch", {"query": "select:CronCreate"}),  # a deferred tool
            tool("CronCreate", {"cron": "*/5 * * * *", "prompt": "check the build"}),
            bash("echo no timer here"),
            done("no timers then"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    doc_example, shell_timer, plain = run.results_of("Bash")
    assert doc_example.is_error and "[T01]" in doc_example.text and "remind 600s 'check the build'" in \
        doc_example.text, run.describe()
    assert shell_timer.is_error and "[T01]" in shell_timer.text, run.describe()
    assert not plain.is_error and plain.text.strip() == "no timer here"
    (cron,) = run.results_of("CronCreate")
    assert cron.is_error and "[T01]" in cron.text, run.describe()
    recs = run.decisions(event="PreToolUse")
    assert [(r["tool"], r["decision"]) for r in recs] == [
        ("Bash", "deny"), ("Bash", "deny"), ("CronCreate", "deny"), ("Bash", "allow")], run.describe()


def test_p01_flags_a_command_repeated_with_unchanged_output(claude_repo):
    poll = "git status --short"
    run = claude_repo.run("script:p01", [
        Conversation("script:p01", [bash(poll), bash(poll), bash(poll), done("stopped polling")]),
    ])
    assert run.returncode == 0, run.describe()
    post = run.decisions(event="PostToolUse", tool="Bash")
    assert [("P01" in r["codes"]) for r in post] == [False, False, True], run.describe()
    reqs = run.conversation("script:p01")
    prefix = "PostToolUse:Bash hook additional context:"
    assert [len(r.hook_texts(prefix)) for r in reqs] == [0, 0, 0, 1], run.describe()
    (flag,) = reqs[3].hook_texts(prefix)
    assert "[P01]" in flag and f"`{poll}`" in flag and "3 times" in flag


def test_b30_b31_b10_refuse_unbounded_waits_nested_background_and_unscoped_runs(claude_repo):
    scope = ("SWARMGATE_RUN_SCOPE='kind=items; target=unit tests; range=tests/unit; "
             "reason=checking the parser change only'")
    run = claude_repo.run("script:shapes", [
        Conversation("script:shapes", [
            bash("until test -f done.flag; do sleep 5; done"),          # B30: no bound
            bash("( sleep 1 & ) &"),                                    # B31: nested background
            bash("python3 -m pytest -q tests/unit"),                    # B10: no run scope
            bash("for i in 1 2 3; do echo step-$i; done"),              # a bounded loop runs
            bash(f"{scope} python3 -m pytest -q tests/unit"),           # scoped: the hook lets it run
            done("done"),
        ]),
    ])
    assert run.returncode == 0, run.describe()
    wait, nested, unscoped, loop, scoped = run.results_of("Bash")
    assert wait.is_error and "[B30]" in wait.text, run.describe()
    assert nested.is_error and "[B31]" in nested.text, run.describe()
    assert unscoped.is_error and "[B10]" in unscoped.text and "SWARMGATE_RUN_SCOPE=" in unscoped.text, run.describe()
    assert not loop.is_error and loop.text.split() == ["step-1", "step-2", "step-3"]
    assert "hook error" not in scoped.text, run.describe()
    recs = run.decisions(event="PreToolUse", tool="Bash")
    assert [(r["decision"], r["codes"]) for r in recs] == [
        ("deny", ["B30"]), ("deny", ["B31"]), ("deny", ["B10"]), ("allow", []), ("allow", [])], run.describe()
