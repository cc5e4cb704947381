"""Stop and SubagentStop through the real client: a refused stop reaches the agent as
"Stop hook feedback", the agent fixes what it was told, and the second stop goes through."""
from __future__ import annotations

import pytest

from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"
HEAVY_LINE = "heavy test: do not run"


def test_h01_keeps_a_subagent_from_handing_back_with_its_scratch_dir_left(claude_repo):
    claude_repo.add_agent(WORKER)
    scratch = claude_repo.tmp / "scratch-h01"
    run = claude_repo.run("script:h01", [
        Conversation("script:h01", [
            dispatch(WORKER, f"script:h01-sub\nBuild in scratch.\n{HEAVY_LINE}\nscratch: {scratch}"),
            done("got the report"),
        ]),
        Conversation("script:h01-sub", [
            bash(f"mkdir -p {scratch} && echo made"),
            done("finished"),                # refused: the scratch directory still exists
            bash(f"rm -rf {scratch}"),
            done("cleaned up and finished"),  # goes through
        ]),
    ])
    assert run.returncode == 0, run.describe()
    stops = run.decisions(event="SubagentStop")
    assert [s["decision"] for s in stops] == ["block", "context"], run.describe()
    assert "H01" in stops[0]["codes"] and "H01" not in stops[1]["codes"]
    # the refusal reached the subagent as a new message, naming the directory and the way out
    sub = run.conversation("script:h01-sub")
    feedback = sub[2].user_texts()[-1]
    assert "Stop hook feedback:" in feedback and "[H01]" in feedback, run.describe()
    assert f"rm -rf {scratch}" in feedback
    assert not scratch.exists()
    # the main agent got the hand-back only after the cleanup
    (handback,) = run.results_of("Agent")
    assert "cleaned up and finished" in handback.text and "[H01]" not in handback.text


def test_s01_keeps_the_main_agent_from_ending_a_round_with_an_open_task(claude_repo):
    for args in (("new", "r1", "--goal", "ship the e2e scenario", "--exit", "every task judged"),
                 ("add-task", "r1", "t1", "-d", "write the feature")):
        p = claude_repo.tool("swarmgate", "records", *args)
        assert p.returncode == 0, p.stdout + p.stderr
    swarmgate = claude_repo.tool_path("swarmgate")
    run = claude_repo.run("script:s01", [
        Conversation("script:s01", [
            done("round over"),                                    # refused: t1 has no verdict
            bash(f"{swarmgate} records verdict r1 t1 close"),
            done("t1 closed, round over"),                         # goes through
        ]),
    ])
    assert run.returncode == 0, run.describe()
    stops = run.decisions(event="Stop")
    assert [s["decision"] for s in stops] == ["block", "context"], run.describe()  # C03 summary
    assert "S01" in stops[0]["codes"] and "S01" not in stops[1]["codes"]
    feedback = run.conversation("script:s01")[1].user_texts()[-1]
    assert "Stop hook feedback:" in feedback and "[S01]" in feedback and "t1" in feedback, run.describe()
    assert run.result_text == "t1 closed, round over"


def test_h02_finds_a_refusable_call_that_ran_and_the_main_agent_is_told(claude_repo):
    """A hook that did not fire, simulated: B01 is off while the subagent runs a heavy command and
    back on before it hands back. H02 re-reads the transcript the binary wrote and the main agent
    gets the red line with its next tool result (C04)."""
    claude_repo.add_agent(WORKER)
    for code in ("B01", "B02"):
        claude_repo.config_set("guards", code, "off")

    def guards_back_on(req):
        for code in ("B01", "B02"):
            claude_repo.config_set("guards", code, "on")
        return done("ran the full check")

    run = claude_repo.run("script:h02", [
        Conversation("script:h02", [
            dispatch(WORKER, f"script:h02-sub\nCheck it.\n{HEAVY_LINE}"),
            done("read the report"),
        ]),
        Conversation("script:h02-sub", [bash("make check-full"), guards_back_on]),
    ])
    assert run.returncode == 0, run.describe()
    (ran,) = run.results_of("Bash", "script:h02-sub")
    assert "hook error" not in ran.text and "check-full" in ran.text, run.describe()  # make ran, and failed
    (stop,) = run.decisions(event="SubagentStop")
    assert "H02" in stop["codes"] and stop["decision"] != "block", stop  # H02 reports, never blocks
    after = run.conversation("script:h02")[1]
    (told,) = after.hook_texts("PostToolUse:Agent hook additional context:")
    assert "[H02]" in told and "`make check-full` (B01)" in told, told
