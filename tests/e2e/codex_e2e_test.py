"""The real Codex CLI (0.169.0), wired by `swarmgate install --client codex`, driven by a scripted
model (responses_api.py): refusals reach the model as the tool output of the next request.

Codex shows a PreToolUse refusal to the model as `Command blocked by PreToolUse hook: <reason>.
Command: <command>` (the shell tool and apply_patch) or `Tool call blocked by PreToolUse hook:
<reason>. Tool: <name>`. A subagent (spawn_agent) is a conversation of its own whose tool calls
carry agent_id and agent_type (`default` when it has no role).
"""
from __future__ import annotations

import pytest
import responses_api as R
from loopback_api import Conversation

pytestmark = pytest.mark.e2e

HEAVY_LINE = "heavy test: do not run"


def blocked(out) -> str:
    assert out.text.startswith(R.BLOCKED), out
    return out.text


def test_a_subagents_heavy_command_is_refused_with_b01(codex_repo):
    run = codex_repo.run("script:cx-b01 go", [
        Conversation("script:cx-b01", [R.spawn(f"script:cx-b01-sub run the tests\n{HEAVY_LINE}"), R.wait_spawned(),
                                       R.done("all done")]),
        Conversation("script:cx-b01-sub", [R.shell("cargo test --workspace"), R.shell("echo hello-from-sub"),
                                           R.done("sub done")]),
    ])
    heavy, benign = run.results_of("exec_command", "script:cx-b01-sub")
    text = blocked(heavy)
    assert "[B01]" in text and "subagent `default` may not run them" in text, run.describe()
    assert "hello-from-sub" in benign.text and not benign.text.startswith(R.BLOCKED), run.describe()
    # the refusal is in the subagent's next request, as the output of its call
    second = run.conversation("script:cx-b01-sub")[1]
    assert R.BLOCKED in second.all_text and "[B01]" in second.all_text
    (rec,) = run.decisions(event="PreToolUse", tool="Bash", decision="deny")
    assert rec["agent_type"] == "default" and rec["agent_id"] and "B01" in rec["codes"]
    assert run.decisions(event="SubagentStart", agent_type="default"), run.describe()
    # C02: the subagent's rules (SubagentStart context) are in its first request
    first = run.conversation("script:cx-b01-sub")[0]
    assert "swarmgate: the rules for your job as default" in first.all_text, run.describe()


def test_the_main_agents_unprefixed_heavy_command_is_refused_and_a_prefixed_one_passes_b01(codex_repo):
    ok = ("SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all; reason=the commit "
          "gate run' run-with-memory-cap 2G -- cargo test --workspace")
    run = codex_repo.run("script:cx-main go", [
        Conversation("script:cx-main", [R.shell("cargo test --workspace"), R.shell(ok), R.done()]),
    ])
    unprefixed, prefixed = run.results_of("exec_command")
    assert "[B01]" in blocked(unprefixed) and "not prefixed with SWARMGATE_HEAVY" in unprefixed.text
    # allowed by the hooks (it then fails here: the agent's PATH has no run-with-memory-cap, by design)
    assert not prefixed.text.startswith(R.BLOCKED), run.describe()
    recs = run.decisions(event="PreToolUse", tool="Bash")
    assert [r["decision"] for r in recs][:1] == ["deny"] and recs[1]["decision"] in ("allow", "context")
    assert all(r["agent_type"] is None for r in recs)


def test_an_out_of_scope_write_is_refused_with_w01_and_its_workarounds_too(codex_repo):
    codex_repo.config_set("write", "default", ["src/**"])
    add = lambda path: f"*** Begin Patch\n*** Add File: {path}\n+written by the subagent\n*** End Patch\n"  # noqa: E731
    run = codex_repo.run("script:cx-w01 go", [
        Conversation("script:cx-w01", [R.spawn(f"script:cx-w01-sub write the notes\n{HEAVY_LINE}"), R.wait_spawned(),
                                       R.done()]),
        Conversation("script:cx-w01-sub", [
            R.patch(add("docs/notes.md")),                       # out of its row
            R.shell("printf x > docs/notes.md"),                  # the same through the shell
            R.shell("apply_patch <<'EOF'\n" + add("docs/notes.md") + "EOF\n"),  # apply_patch through the shell
            R.patch(add("src/ok.py")),                            # inside its row
            R.done("sub done"),
        ]),
    ])
    (patch_out, ok_out) = run.results_of("apply_patch", "script:cx-w01-sub")
    assert "[W01] apply_patch writes docs/notes.md" in blocked(patch_out), run.describe()
    shell_redirect, shell_patch = run.results_of("exec_command", "script:cx-w01-sub")
    assert "[W01]" in blocked(shell_redirect) and "docs/notes.md" in shell_redirect.text
    assert "[W01]" in blocked(shell_patch), run.describe()
    assert not ok_out.text.startswith(R.BLOCKED), run.describe()
    assert (codex_repo.repo / "src" / "ok.py").read_text() == "written by the subagent\n"
    assert not (codex_repo.repo / "docs").exists()
    patch_recs = run.decisions(event="PreToolUse", client_tool="apply_patch")
    assert [r["decision"] for r in patch_recs] == ["deny", "allow"]
    assert all(r["tool"] == "Edit" and r["agent_type"] == "default" for r in patch_recs)


def test_a_shell_waiting_for_typed_input_is_refused_before_it_starts(codex_repo):
    """write_stdin (typing into a running command) reaches no hook in Codex 0.169.0: the shell the agent
    would type a refused command into is refused instead."""
    run = codex_repo.run("script:cx-tty go", [
        Conversation("script:cx-tty", [R.call("exec_command", {"cmd": "bash", "tty": True, "yield_time_ms": 500}),
                                       R.call("exec_command", {"cmd": "bash -lc 'echo typed-free'"}), R.done()]),
    ])
    shell, one_shot = run.results_of("exec_command")
    assert "[B01]" in blocked(shell) and "waits for input" in shell.text, run.describe()
    assert "typed-free" in one_shot.text and not one_shot.text.startswith(R.BLOCKED), run.describe()


def test_g01_codexs_own_settings_are_refused(codex_repo):
    hooks = codex_repo.repo / ".codex" / "hooks.json"
    before = hooks.read_bytes()
    run = codex_repo.run("script:cx-g01 go", [
        Conversation("script:cx-g01", [
            R.patch("*** Begin Patch\n*** Update File: .codex/hooks.json\n@@\n-{\n+{\"hooks\": {}}\n*** End Patch\n"),
            R.shell("echo '{}' > .codex/hooks.json"),
            R.shell(f"printf '[projects.\"{codex_repo.repo}\"]\\ntrust_level = \"untrusted\"\\n' >> "
                    f"{codex_repo.codex_home}/config.toml"),
            R.done(),
        ]),
    ])
    (patched,) = run.results_of("apply_patch")
    assert "[G01] apply_patch to .codex/hooks.json refused" in blocked(patched), run.describe()
    redirect, untrust = run.results_of("exec_command")
    assert "[G01]" in blocked(redirect) and ".codex/hooks.json" in redirect.text
    assert "[G01]" in blocked(untrust) and "Codex CLI's user settings" in untrust.text
    assert hooks.read_bytes() == before


def test_t01_a_timer_through_the_shell_is_refused(codex_repo):
    run = codex_repo.run("script:cx-t01 go", [
        Conversation("script:cx-t01", [R.shell("echo 'cargo test -p core' | at now + 5 minutes"), R.done()]),
    ])
    (out,) = run.results_of("exec_command")
    assert "[T01]" in blocked(out), run.describe()


def test_sessionstart_context_arrives_in_the_first_request(codex_repo):
    run = codex_repo.run("script:cx-c01 go", [Conversation("script:cx-c01", [R.done("hello")])])
    first = run.conversation("script:cx-c01")[0]
    assert "swarmgate session start (startup)" in first.all_text, run.describe()
    (rec,) = run.decisions(event="SessionStart")
    assert rec["codes"] == ["C01"] and rec["decision"] == "context"


def _open_round(client_repo) -> None:
    for args in (("new", "r1", "--goal", "ship the e2e scenario", "--exit", "every task judged"),
                 ("add-task", "r1", "t1", "-d", "write the feature")):
        p = client_repo.tool("swarmgate", "records", *args)
        assert p.returncode == 0, p.stdout + p.stderr


def test_s01_keeps_the_main_agent_from_ending_a_round_with_an_open_task(codex_repo):
    _open_round(codex_repo)
    swarmgate = codex_repo.tool_path("swarmgate")
    run = codex_repo.run("script:cx-s01 go", [
        Conversation("script:cx-s01", [R.done("round over"),                       # refused: t1 has no verdict
                                       R.shell(f"{swarmgate} records verdict r1 t1 close"),
                                       R.done("t1 closed, round over")]),          # goes through
    ])
    stops = run.decisions(event="Stop")
    assert [s["decision"] for s in stops] == ["block", "context"], run.describe()
    assert "S01" in stops[0]["codes"] and "S01" not in stops[1]["codes"]
    second = run.conversation("script:cx-s01")[1]
    assert "[S01]" in second.user_texts()[-1] and "t1" in second.user_texts()[-1], run.describe()
    assert run.stdout.strip().endswith("t1 closed, round over")
