"""G01 refuses, for every agent, writes to what every later process of the session runs first (issue 24
item 4): the client's session env file, Python start-up modules, .pth files in a site directory. The
file tools and the shell alike; look-alikes pass."""
from __future__ import annotations

import pytest

from swarmgate.hook_engine import evaluate
from swarmgate.hooks import registry

REFUSED = [
    "printf 'import pytest\\n' > sitecustomize.py",
    "cp hook.py tests/usercustomize.py",
    "echo 'import x' > .venv/lib/python3.11/site-packages/zz.pth",
    "tee -a /usr/lib/python3/dist-packages/aa.pth < /dev/null",
    "echo 'export PATH=/tmp/b:$PATH' >> ~/.claude/session-env/$CLAUDE_CODE_SESSION_ID/sessionstart-hook-0.sh",
    "echo x >> ~/.claude/session-env/s1/sessionstart-hook-0.sh",
    "python3 -c \"open('sitecustomize.py', 'w').write('import os')\"",
]
PASSED = [
    "echo hi > notes.pth",
    "echo 'x = 1' > src/site.py",
    "cat sitecustomize.py",
    "grep -rn session-env docs",
    "echo x > src/customize.py",
]


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_ENV_FILE", raising=False)
    return h


@pytest.mark.parametrize("subagent", [False, True], ids=["main", "subagent"])
@pytest.mark.parametrize("command", REFUSED)
def test_a_write_to_a_start_up_file_is_refused(judge, home, command, subagent):
    judge.config_text = "[write]\nmain = [\"**\"]\nimplementer = [\"**\"]\n"
    g01 = [f for f in judge.findings(command, subagent=subagent) if f.code == "G01"]
    assert g01 and g01[0].decision == "deny", command
    assert any(w in g01[0].message for w in ("start-up module", ".pth file", "session env file", "cannot")), \
        g01[0].message


@pytest.mark.parametrize("command", PASSED)
def test_look_alikes_pass(judge, home, command):
    judge.config_text = "[write]\nmain = [\"**\"]\nimplementer = [\"**\"]\n"
    assert [f for f in judge.findings(command, subagent=True) if f.code == "G01"] == [], command


def test_the_file_tools_refuse_it_too(judge, home):
    judge.config_text = "[write]\nmain = [\"**\"]\n"
    path = f"{judge.repo}/tests/sitecustomize.py"
    ev = judge.event(tool="Write", tool_input={"file_path": path, "content": "import pytest\n"})
    found = [f for f in evaluate(ev, judge.config, registry.refusing_guards("PreToolUse", "Write"))
             if f.code == "G01"]
    assert found and "start-up module" in found[0].message
    env_file = home / ".claude" / "session-env" / "s1" / "sessionstart-hook-0.sh"
    ev = judge.event(tool="Write", tool_input={"file_path": str(env_file), "content": "export PATH=/x\n"})
    found = [f for f in evaluate(ev, judge.config, registry.refusing_guards("PreToolUse", "Write"))
             if f.code == "G01"]
    assert found and "session env file" in found[0].message
