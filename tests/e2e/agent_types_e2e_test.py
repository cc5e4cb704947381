"""D21 and D12 resolve subagent types as the real client does: case-insensitively, by the
frontmatter `name:` (not the file name), project before user-level, plugin agents as
`<plugin>:<name>` (installed with the client's own `claude plugin` commands), the built-ins;
and a dispatch is linked to its subagent through the toolUseId Claude Code writes in the
subagent's meta.json."""
from __future__ import annotations

import json
import subprocess

import pytest

from messages_api import Conversation, bash, dispatch, done

from swarmgate.hooks import session_state as S

pytestmark = pytest.mark.e2e

HEAVY_LINE = "heavy test: do not run"


def _install_plugin(claude_repo) -> None:
    """A local marketplace with plugin `helpers` holding agent `checker`, installed for the test HOME."""
    mkt = claude_repo.root / "mkt"
    (mkt / ".claude-plugin").mkdir(parents=True)
    (mkt / ".claude-plugin" / "marketplace.json").write_text(json.dumps(
        {"name": "local-mkt", "owner": {"name": "e2e"},
         "plugins": [{"name": "helpers", "source": "./plugins/helpers", "description": "test helpers"}]}))
    plugin = mkt / "plugins" / "helpers"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "helpers", "version": "1.0.0"}))
    (plugin / "agents").mkdir()
    (plugin / "agents" / "checker.md").write_text("---\nname: checker\ndescription: checks\n---\nYou check.\n")
    for args in (["plugin", "marketplace", "add", str(mkt)], ["plugin", "install", "helpers@local-mkt"]):
        p = subprocess.run([claude_repo.claude_bin, *args], env=claude_repo.env(), cwd=claude_repo.repo,
                           capture_output=True, text=True, timeout=90)
        assert p.returncode == 0, (args, p.stdout, p.stderr)


def test_types_resolve_as_the_client_resolves_them(claude_repo):
    agents = claude_repo.repo / ".claude" / "agents"
    (agents / "impl-file.md").write_text("---\nname: parser-writer\ndescription: writes parsers\n---\nWrite.\n")
    user = claude_repo.home / ".claude" / "agents"
    user.mkdir(parents=True)
    (user / "mine.md").write_text("---\nname: my-helper\ndescription: a person's own\n---\nHelp.\n")
    _install_plugin(claude_repo)
    claude_repo.config_set("write", "implementer", ["src/**"])
    claude_repo.config_set("dispatch", "max_concurrent", 20)
    claude_repo._git("add", "-A")
    claude_repo._git("commit", "-q", "-m", "types")
    ok = [("IMPLEMENTER", "s-case"), ("Parser-Writer", "s-name"), ("my-helper", "s-user"),
          ("Helpers:Checker", "s-plugin"), ("explore", "s-builtin")]
    refused = [("implementor", "D21"), ("impl-file", "D21"), ("checker", "D21"), ("General-Purpose", "D12")]
    run = claude_repo.run("script:types", [
        Conversation("script:types", [dispatch(t, f"script:{m}\n{HEAVY_LINE}") for t, m in ok]
                     + [dispatch(t, f"script:no-{t}\n{HEAVY_LINE}") for t, _ in refused] + [done("x")]),
        Conversation("script:s-case", [bash("mkdir -p src && echo x > src/a.py"), bash("echo x > notes.md"),
                                       done("case done")]),
        *[Conversation(f"script:{m}", [done(f"{m} done")]) for _, m in ok[1:]],
    ])
    why = run.describe()
    assert run.returncode == 0, why
    results = run.results_of("Agent", "script:types")
    assert [r.is_error for r in results] == [False] * len(ok) + [True] * len(refused), why
    for r, (t, code) in zip(results[len(ok):], refused):
        assert f"[{code}]" in r.text, (t, r.text)
    # what the client ran, under the canonical names the hooks see
    started = sorted(d["agent_type"] for d in run.decisions(event="SubagentStart"))
    assert started == sorted(["implementer", "parser-writer", "my-helper", "helpers:checker", "Explore"]), why
    # the implementer row applies to the case-variant dispatch
    own, notes = run.results_of("Bash", "script:s-case")
    assert not own.is_error and notes.is_error and "[W01]" in notes.text, why
    # every dispatch was linked to its agent through meta.json's toolUseId
    st = S.load(run.session_id)
    linked = {aid: a for aid, a in st["agents"].items() if a.get("linked_by") == "meta.json"}
    assert len(linked) == len(ok), st
    for aid, a in linked.items():
        d = S.dispatch_by_id(st, a["dispatch"])
        assert d is not None and d["agent"] == aid and d["type"] == a["type"], (aid, a, d)
