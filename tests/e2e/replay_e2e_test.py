"""`swarmgate replay` on transcripts the real binary wrote: heavy commands ran while B01/B02 were off
(B10 too: a config being tuned); replayed with them on, JUnit XML has one failure per call refused now."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from messages_api import Conversation, bash, dispatch, done

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"


def test_replay_writes_one_junit_failure_per_refused_call(claude_repo, tmp_path):
    claude_repo.add_agent(WORKER)
    for code in ("B01", "B02", "B10"):
        claude_repo.config_set("guards", code, "off")
    run = claude_repo.run("script:replay", [
        Conversation("script:replay", [
            bash("cargo test --workspace"),                          # ran (B01/B02 off)
            bash("git status --short"),
            bash("until false; do sleep 1; done"),                   # refused then (B30) and now
            dispatch(WORKER, "script:replay-sub\nheavy test: do not run"),
            done("done"),
        ]),
        Conversation("script:replay-sub", [bash("make check-full"), bash("echo fine"), done("sub done")]),
    ])
    assert run.returncode == 0, run.describe()
    results = run.results_of("Bash", "script:replay")
    assert [r.is_error and "hook error" in r.text for r in results] == [False, False, True], run.describe()
    assert len(run.subagent_transcripts()) == 1
    for code in ("B01", "B02", "B10"):
        claude_repo.config_set("guards", code, "on")   # the config now switches them on

    out = tmp_path / "replay.xml"
    p = claude_repo.tool("swarmgate", "replay", str(run.transcript_path), "--junit", str(out),
                         "--repo", str(claude_repo.repo))
    assert p.returncode == 1, p.stdout + p.stderr   # something is refused now
    assert "3 refused by the current guards and config" in p.stdout, p.stdout
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "6" and root.get("failures") == "3"
    main, sub = root.findall("testsuite")
    assert "main agent" in main.get("name") and WORKER in sub.get("name")
    failed = {c.get("name").split(": ", 1)[1]: c.find("failure") for s in (main, sub) for c in s.findall("testcase")
              if c.find("failure") is not None}
    assert set(failed) == {"cargo test --workspace", "until false; do sleep 1; done", "make check-full"}, failed
    assert "B01" in failed["cargo test --workspace"].get("type")
    assert "ran then" in failed["make check-full"].get("message") and "B01" in failed["make check-full"].get("type")
    assert "refused then too" in failed["until false; do sleep 1; done"].get("message")
    assert "B30" in failed["until false; do sleep 1; done"].get("type")
    assert sum(1 for s in (main, sub) for c in s.findall("testcase")) == 6
    # replaying only the subagent's transcript judges it as that subagent
    (sub_path,) = run.subagent_transcripts()
    p = claude_repo.tool("swarmgate", "replay", str(sub_path), "--repo", str(claude_repo.repo))
    assert p.returncode == 1 and f"{WORKER} " in p.stdout and "1 refused now" in p.stdout, p.stdout
