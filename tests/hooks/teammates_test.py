"""Which session is a teammate of an agent team: its session process's command line (the flags the lead
starts it with) or the payload's teammate_name. Real processes: the asking one is the child of a process
started with (or without) the lead's flags, as a hook is the child of its session."""
from __future__ import annotations

import json
import subprocess
import sys

from swarmgate.hooks.teammates import _flag

ASK = ("import json, sys\n"
       "from swarmgate.hook_protocol import HookEvent\n"
       "from swarmgate.hooks.teammates import teammate_of\n"
       "name, payload = sys.argv[1], json.loads(sys.argv[2])\n"
       "print(json.dumps(teammate_of(HookEvent(name, {'session_id': 'mate-1', **payload}, '.'))))\n"
       "print(json.dumps(sorted(m for m in sys.modules if m.startswith('swarmgate.hooks.'))))\n")
# the session process: runs the asking process as its child and passes its answer on
SESSION = ("import subprocess, sys\n"
           "sys.exit(subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:4]]).returncode)\n")


def ask(session_flags: list[str], name: str = "PreToolUse", payload: dict | None = None):
    p = subprocess.run([sys.executable, "-c", SESSION, ASK, name, json.dumps(payload or {}), *session_flags],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    mate, loaded = (json.loads(ln) for ln in p.stdout.splitlines())
    return mate, loaded


def test_the_flags_in_both_spellings():
    argv = ["claude", "--agent-name", "tester", "--team-name=t", "--parent-session-id"]
    assert _flag(argv, "--agent-name") == "tester"
    assert _flag(argv, "--team-name") == "t"
    assert _flag(argv, "--parent-session-id") == ""   # no value after it
    assert _flag(argv, "--agent") == ""


def test_a_session_started_with_the_leads_flags_is_a_teammate():
    mate, loaded = ask(["--agent-name", "tester", "--team-name=t", "--parent-session-id", "s1"])
    assert mate == {"name": "tester", "parent": "s1", "team": "t"}
    assert "swarmgate.hooks.repo_sessions" not in loaded, loaded


def test_a_plain_session_is_not_unless_the_payload_names_it():
    assert ask([])[0] is None
    assert ask([], payload={"teammate_name": "tester", "team_name": "t"})[0] == {"name": "tester", "parent": "",
                                                                                "team": "t"}
    # the lead's own TeammateIdle names the teammate it concerns: not a teammate's call
    assert ask([], "TeammateIdle", {"teammate_name": "tester"})[0] is None
