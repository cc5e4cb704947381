"""T01 timers: shell timers in the tree and the CronCreate/ScheduleWakeup tools."""
from __future__ import annotations

import pytest

from swarmgate.hooks.timer_guards import sleep_seconds

FIRES = [
    "sleep 300; echo 'check the build'",
    "sleep 5m && notify-send 'look at CI'",
    "(sleep 600; echo time is up) &",
    "(sleep 600 && echo 'check the build') &",   # the documented example (the client lets it through)
    "{ sleep 600 && echo 'check the build'; }",
    "cd . && sleep 600 && echo 'check the build'",
    "sleep 1h; printf 'standup\\n'",
    "crontab /tmp/jobs.txt",
    "echo '0 * * * * make' | crontab -",
    "crontab -e",
    "echo 'make check' | at now + 1 hour",
    "at 09:00 -f job.sh",
    "echo 'cargo build' | batch",
    "systemd-run --user --on-active=10m /usr/bin/notify-send hi",
    "systemd-run --on-calendar=hourly make report",
    "nohup watch -n 60 cargo build &",
    "watch -n 300 'echo check CI' &",
    "setsid watch -n 300 git status",
    "tmux new -d 'watch -n 300 make report'",
    "bash -c 'sleep 900; echo coffee'",
]

QUIET = [
    "remind 10m 'check the build'",
    "remind 1h standup && echo set",
    "sleep 2; echo ready",
    "sleep 5 && curl -s localhost:8080/health",
    "sleep 300",                           # a plain wait, not a reminder
    "crontab -l",
    "crontab -r",
    "atq; at -l",
    "systemd-run --scope -p MemoryMax=1G make",
    "echo 'sleep 300; echo hi'",
    "grep -rn crontab docs/",
    "git commit -m 'remove the crontab and the watch -n 5 loop'",
    "for i in 1 2 3; do sleep 100; echo $i; done",   # in a loop: B30's business
    # watch in the foreground: a display the call's own timeout ends, not a timer firing later
    "watch -n 60 cargo build",
    "watch --differences df",
    "timeout 30 watch -g ls out/",
]


@pytest.mark.parametrize("subagent", [False, True], ids=["main", "subagent"])
@pytest.mark.parametrize("command", FIRES)
def test_shell_timers_fire(judge, command, subagent):
    f = [x for x in judge.findings(command, subagent=subagent) if x.code == "T01"]
    assert f, f"T01 did not fire on {command!r}"
    assert "remind" in f[0].way_out


@pytest.mark.parametrize("subagent", [False, True], ids=["main", "subagent"])
@pytest.mark.parametrize("command", QUIET)
def test_not_timers(judge, command, subagent):
    assert "T01" not in judge.codes(command, subagent=subagent)


def test_script_of_the_reminder_command_is_not_judged(judge):
    judge.write({"scripts/remind.sh": "#!/bin/bash\n(sleep \"$1\"; echo \"$2\") &\n"})
    judge.config_text = '[timers]\nallowed = ["scripts/remind.sh"]\n'
    assert "T01" not in judge.codes("./scripts/remind.sh 600 'check CI'")
    assert "T01" not in judge.codes("bash scripts/remind.sh 600 'check CI'", subagent=True)
    assert "T01" in judge.codes("sleep 600; echo 'check CI'")


def test_background_sleep_only_call(judge):
    assert "T01" in judge.codes("sleep 900", tool_input={"run_in_background": True})
    assert "T01" not in judge.codes("sleep 900 && cargo build", tool_input={"run_in_background": True})


def test_min_sleep_is_configurable(judge):
    judge.config_text = "[timers]\nmin_sleep_s = 5\n"
    assert "T01" in judge.codes("sleep 10; echo hi")


@pytest.mark.parametrize("subagent", [False, True], ids=["main", "subagent"])
def test_timer_tools(judge, subagent):
    assert "T01" in judge.codes(tool="CronCreate", subagent=subagent,
                                tool_input={"cron": "*/5 * * * *", "prompt": "check CI"})
    assert "T01" in judge.codes(tool="ScheduleWakeup", subagent=subagent,
                                tool_input={"delaySeconds": 600, "reason": "wait", "prompt": "again"})
    assert "T01" not in judge.codes(tool="CronCreate", subagent=subagent,
                                    tool_input={"cron": "0 9 * * 1", "prompt": "remind standup"})
    assert "T01" not in judge.codes(tool="ScheduleWakeup", subagent=subagent,
                                    tool_input={"delaySeconds": 60, "reason": "x", "prompt": "/remind again"})
    assert "T01" not in judge.codes(tool="ScheduleWakeup", subagent=subagent, tool_input={"stop": True})


def test_monitor_tool_is_judged_like_bash(judge):
    assert "T01" in judge.codes(tool="Monitor", tool_input={"command": "sleep 600; echo done", "timeout_ms": 1000})


def test_sleep_seconds():
    assert sleep_seconds(["300"]) == 300
    assert sleep_seconds(["5m"]) == 300
    assert sleep_seconds(["1h", "30m"]) == 5400
    assert sleep_seconds(["0.5"]) == 0.5
    assert sleep_seconds(["$N"]) is None
    assert sleep_seconds([]) is None



@pytest.mark.parametrize("subagent", [False, True], ids=["main", "subagent"])
def test_watch_in_a_background_call_is_a_timer(judge, subagent):
    """The same foreground watch, run by a call with run_in_background, outlives the call."""
    assert "T01" not in judge.codes("watch -n 600 git status", subagent=subagent)
    bg = judge.codes(tool_input={"command": "watch -n 600 git status", "run_in_background": True}, subagent=subagent)
    assert "T01" in bg
