"""The write-side corpus (tests/corpus/writes.py) through the real hook subprocess: every G01
workaround refused by G01 for the main agent and a subagent, every W01 workaround refused by W01
for an implementer subagent and allowed for the main agent, every benign write passing for both."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys

import pytest

from tests.corpus import writes
from tests.corpus.corpus_test import payload


def _repo(tmp_path, monkeypatch, k: int, entry) -> str:
    repo = tmp_path / f"r{k}"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "swarmgate.toml").write_text(writes.WRITE_CONFIG)
    for rel, body in {**writes.SETUP, **(entry.files or {})}.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body)
    return str(repo)


def _hook(repo: str, command: str, subagent: bool) -> tuple[str, str]:
    """(decision, reason) the real hook answers: deny/ask/allow or "" (no decision)."""
    exe = os.path.join(os.path.dirname(sys.executable), "swarmgate")
    p = subprocess.run(
        [exe, "hook", "PreToolUse"],
        input=json.dumps(payload(repo, command, subagent)),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, (command, p.returncode, p.stderr[-300:])
    ans = json.loads(p.stdout or "{}")
    out = ans.get("hookSpecificOutput", {}) if isinstance(ans, dict) else {}
    return out.get("permissionDecision", ""), out.get("permissionDecisionReason", "")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("SWARMGATE_BREAK", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("SWARMGATE_HOSTS_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)
    return tmp_path


def test_write_corpus_size():
    refuse = [e for e in writes.ENTRIES if e.expect != "pass"]
    assert len(refuse) >= 120 and len({e.cls for e in refuse}) >= 20
    assert len([e for e in writes.ENTRIES if e.expect == "pass"]) >= 60


def test_write_corpus_through_the_real_hook(home, monkeypatch):
    jobs = []
    for k, e in enumerate(writes.ENTRIES):
        repo = _repo(home, monkeypatch, k, e)
        subs = (True, False)
        jobs += [(e, repo, sub) for sub in subs]
    wrong = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futs = {pool.submit(_hook, repo, e.command, sub): (e, sub) for e, _r, sub in jobs for repo in (_r,)}
        for fut in concurrent.futures.as_completed(futs):
            e, sub = futs[fut]
            decision, reason = fut.result()
            who = "subagent" if sub else "main"
            if e.expect == "G01":
                ok = decision == "deny" and "[G01]" in reason
            elif e.expect == "W01":
                ok = (decision == "deny" and "[W01]" in reason) if sub else decision != "deny"
            else:
                ok = decision not in ("deny", "ask")
            if not ok:
                wrong.append(f"{e.cls} ({who}, want {e.expect}): {e.command[:90]!r}: {decision} {reason[:160]!r}")
    assert not wrong, f"{len(wrong)} of {len(jobs)}:\n" + "\n".join(sorted(wrong))
