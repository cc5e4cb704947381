"""`swarmgate report --html` after a real session whose commands failed (127, 3), then `swarmgate doctor`.

Through the real binary: the main agent runs a command that is not installed (127), one that exits
3, and one that works. doctor then logs its probe, the latest decision. The report without
--session must still show the session (not doctor's probe), with the two failed calls marked with
their exit codes and the working one not.
"""
from __future__ import annotations

import json
import re

import pytest
from messages_api import Conversation, bash, done

pytestmark = pytest.mark.e2e


def test_the_default_report_is_the_agents_session_with_its_failed_calls_marked(claude_repo, tmp_path):
    run = claude_repo.run("script:failing", [
        Conversation("script:failing", [bash("no-such-tool-here --flag"), bash("exit 3"),
                                        bash("echo fine"), done("two failed")]),
    ])
    assert run.returncode == 0, run.describe()
    missing, three, fine = run.results_of("Bash")
    assert missing.is_error and missing.text.startswith("Exit code 127"), run.describe()
    assert three.is_error and three.text.startswith("Exit code 3") and not fine.is_error, run.describe()
    doctor = claude_repo.tool("swarmgate", "doctor", str(claude_repo.repo))
    log = claude_repo.repo / ".swarmgate" / "log" / "decisions.jsonl"
    last = json.loads(log.read_text().splitlines()[-1])
    assert last["session"] == "swarmgate-doctor", doctor.stdout + doctor.stderr  # the latest decision

    page = tmp_path / "flow.html"
    p = claude_repo.tool("swarmgate", "report", "--repo", str(claude_repo.repo), "--html", str(page),
                         "--transcripts", str(claude_repo.home / ".claude" / "projects"))
    assert p.returncode == 0, p.stdout + p.stderr
    html = page.read_text()
    assert f"Agents of session {run.session_id} on one time axis" in html, p.stdout
    assert sorted(re.findall(r'class="mark tool failed" data-exit="(\d+)"', html)) == ["127", "3"]
    assert html.count('class="mark tool"') == 1  # echo fine: an ordinary call
    assert "2 failed" in html and "exit 127" in html and "command not found" in html

