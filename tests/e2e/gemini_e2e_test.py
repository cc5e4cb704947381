"""The real Gemini CLI (0.61.0), wired by `swarmgate install --client gemini`, driven by a scripted
model (gemini_api.py): refusals reach the model as the function response of the next request.

Gemini shows a BeforeTool refusal to the model as `Tool execution blocked: <reason>`. It sends
no agent identity in hook input, so every call is judged as the main agent's (and the decision
log says so); SessionStart context is prepended to the prompt in non-interactive mode.
"""
from __future__ import annotations

import pytest
import gemini_api as GA
from loopback_api import Conversation

pytestmark = pytest.mark.e2e


def blocked(fr) -> str:
    assert fr.text.startswith(GA.BLOCKED), fr
    return fr.text


def test_a_heavy_command_without_the_prefix_is_refused_with_b01(gemini_repo):
    run = gemini_repo.run("script:gm-b01 go", [
        Conversation("script:gm-b01", [GA.shell("cargo test --workspace"), GA.shell("echo hello-from-gemini"),
                                       GA.done("done")]),
    ])
    heavy, benign = run.results_of("run_shell_command")
    text = blocked(heavy)
    assert "[B01]" in text and "not prefixed with SWARMGATE_HEAVY" in text, run.describe()
    assert "hello-from-gemini" in benign.text and not benign.text.startswith(GA.BLOCKED), run.describe()
    second = run.conversation("script:gm-b01")[1]
    assert GA.BLOCKED in second.all_text and "[B01]" in second.all_text
    (rec,) = run.decisions(event="PreToolUse", decision="deny")
    assert rec["client_tool"] == "run_shell_command" and rec["agent_type"] is None
    assert any(n.startswith("B01 in part: Gemini CLI sends no agent identity") for n in rec["limits"])


def test_an_out_of_scope_write_is_refused_with_w01_and_its_workarounds_too(gemini_repo):
    gemini_repo.config_set("write", "main", ["src/**"])
    run = gemini_repo.run("script:gm-w01 go", [
        Conversation("script:gm-w01", [
            GA.write_file("docs/notes.md", "notes\n"),          # out of the row
            GA.replace("README.md", "e2e test repository", "changed"),
            GA.shell("printf x > docs/notes.md"),                # the same through the shell
            GA.shell("printf x > notes.md", dir_path="docs"),    # from another directory
            GA.write_file("src/ok.py", "x = 1\n"),              # inside the row
            GA.done(),
        ]),
    ])
    (write_out, write_ok) = run.results_of("write_file")
    assert "[W01] write_file writes docs/notes.md" in blocked(write_out), run.describe()
    (replace_out,) = run.results_of("replace")
    assert "[W01] replace writes README.md" in blocked(replace_out)
    shell_a, shell_b = run.results_of("run_shell_command")
    assert "[W01]" in blocked(shell_a) and "[W01]" in blocked(shell_b) and "docs/notes.md" in shell_b.text
    assert not write_ok.text.startswith(GA.BLOCKED), run.describe()
    assert (gemini_repo.repo / "src" / "ok.py").read_text() == "x = 1\n"
    assert not (gemini_repo.repo / "docs").exists()
    assert (gemini_repo.repo / "README.md").read_text() == "e2e test repository\n"


def test_g01_geminis_own_settings_are_refused(gemini_repo):
    settings = gemini_repo.repo / ".gemini" / "settings.json"
    before = settings.read_bytes()
    run = gemini_repo.run("script:gm-g01 go", [
        Conversation("script:gm-g01", [
            GA.write_file(".gemini/settings.json", "{}"),
            GA.replace(".gemini/settings.json", "BeforeTool", "Nothing"),
            GA.shell(f"echo '{{}}' > {gemini_repo.home}/.gemini/settings.json"),
            GA.done(),
        ]),
    ])
    (write_out,) = run.results_of("write_file")
    assert "[G01] write_file to .gemini/settings.json refused" in blocked(write_out), run.describe()
    (replace_out,) = run.results_of("replace")
    assert "[G01]" in blocked(replace_out)
    (user_settings,) = run.results_of("run_shell_command")
    assert "[G01]" in blocked(user_settings) and "Gemini CLI's user settings" in user_settings.text
    assert settings.read_bytes() == before


def test_t01_a_timer_through_the_shell_is_refused(gemini_repo):
    run = gemini_repo.run("script:gm-t01 go", [
        Conversation("script:gm-t01", [GA.shell("echo 'cargo test -p core' | at now + 5 minutes"), GA.done()]),
    ])
    (out,) = run.results_of("run_shell_command")
    assert "[T01]" in blocked(out), run.describe()


def test_sessionstart_context_arrives_in_the_first_request(gemini_repo):
    run = gemini_repo.run("script:gm-c01 go", [Conversation("script:gm-c01", [GA.done("hello")])])
    first = run.conversation("script:gm-c01")[0]
    assert "swarmgate session start (startup)" in first.first_user_text, run.describe()
    (rec,) = run.decisions(event="SessionStart")
    assert rec["codes"] == ["C01"] and rec["decision"] == "context"


def test_s01_keeps_the_agent_from_ending_a_round_with_an_open_task(gemini_repo):
    for args in (("new", "r1", "--goal", "ship the e2e scenario", "--exit", "every task judged"),
                 ("add-task", "r1", "t1", "-d", "write the feature")):
        p = gemini_repo.tool("swarmgate", "records", *args)
        assert p.returncode == 0, p.stdout + p.stderr
    swarmgate = gemini_repo.tool_path("swarmgate")
    run = gemini_repo.run("script:gm-s01 go", [
        Conversation("script:gm-s01", [GA.done("round over"),                      # refused: t1 has no verdict
                                       GA.shell(f"{swarmgate} records verdict r1 t1 close"),
                                       GA.done("t1 closed, round over")]),         # goes through
    ])
    stops = run.decisions(event="Stop")
    assert [s["decision"] for s in stops][:1] == ["block"] and "S01" in stops[0]["codes"], run.describe()
    assert all("S01" not in s["codes"] for s in stops[1:])
    second = run.conversation("script:gm-s01")[1]
    assert "[S01]" in second.all_text and "t1" in second.all_text, run.describe()
    assert run.stdout.strip().endswith("t1 closed, round over")
