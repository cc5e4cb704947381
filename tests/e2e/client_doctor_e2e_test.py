"""The trust states in which Codex CLI and Gemini CLI skip a project's hooks without a word, seen by
the real binary and by `swarmgate doctor`.

Codex runs `.codex/hooks.json` only for a trusted project and trusted hooks; trust is kept per
hook hash in CODEX_HOME/config.toml (`[hooks.state."<key>"] trusted_hash`), as `/hooks` writes
it. Here the hashes come from Codex itself (app-server `hooks/list`), the path a person's
`/hooks` takes; no hook-trust bypass is used, so the refusal that follows is the real thing.
"""
from __future__ import annotations

import json
import subprocess

import pytest
import responses_api as R
from harness import swarmgate_entry
from loopback_api import Conversation

from swarmgate.client_doctor import codex_hooks_list

pytestmark = pytest.mark.e2e


def doctor(client_repo, **env) -> list[str]:
    proc = subprocess.run([swarmgate_entry(), "doctor", str(client_repo.repo)], capture_output=True, text=True,
                          env=client_repo.env(extra=env), timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout.splitlines()


def line(lines: list[str], needle: str) -> str:
    found = [ln for ln in lines if needle in ln]
    assert found, "\n".join(lines)
    return found[0]


def trust_hooks_as_a_person_would(codex_repo) -> int:
    """What trusting in `/hooks` writes: each hook's current hash under [hooks.state]."""
    hooks, _, err = codex_hooks_list(codex_repo.codex_bin, str(codex_repo.repo))
    assert hooks is not None, err
    with (codex_repo.codex_home / "config.toml").open("a") as f:
        for h in hooks:
            f.write(f"\n[hooks.state.{json.dumps(h['key'])}]\ntrusted_hash = {json.dumps(h['currentHash'])}\n")
    return len(hooks)


def test_codex_trust_states_through_doctor_and_the_real_binary(codex_repo, monkeypatch):
    env = {"SWARMGATE_CODEX_BIN": codex_repo.codex_bin}
    monkeypatch.setenv("HOME", str(codex_repo.home))
    monkeypatch.setenv("CODEX_HOME", str(codex_repo.codex_home))
    script = [Conversation("script:trust", [R.shell("touch .swarmgate/ran-untrusted"), R.done()])]

    # 1. the project is not trusted: doctor says so, and Codex runs the call with no hook at all
    codex_repo.write_config("http://127.0.0.1:9", trusted=False)
    assert line(doctor(codex_repo, **env), "Codex does not trust this project").startswith("FAIL")
    run = codex_repo.run("script:trust go", script, bypass_hook_trust=False, trusted=False)
    assert (codex_repo.repo / ".swarmgate" / "ran-untrusted").exists(), run.describe()
    assert not [d for d in run.decisions() if d["session"] != "swarmgate-doctor"], "no hook of the run may have run"
    (codex_repo.repo / ".swarmgate" / "ran-untrusted").unlink()

    # 2. trusted project, untrusted hooks: the same silence; doctor names each hook
    codex_repo.write_config("http://127.0.0.1:9", trusted=True)
    got = line(doctor(codex_repo, **env), "Codex skips swarmgate's hooks without a word")
    assert got.startswith("FAIL") and "preToolUse: untrusted" in got
    run = codex_repo.run("script:trust go", script, bypass_hook_trust=False)
    assert (codex_repo.repo / ".swarmgate" / "ran-untrusted").exists(), run.describe()
    (codex_repo.repo / ".swarmgate" / "ran-untrusted").unlink()

    # 3. a person trusts them: doctor is content, and the hooks refuse for real
    codex_repo.write_config("http://127.0.0.1:9", trusted=True)
    assert trust_hooks_as_a_person_would(codex_repo) == 6
    assert line(doctor(codex_repo, **env), "Codex trusts this project").startswith("ok")
    config = (codex_repo.codex_home / "config.toml").read_text()
    api = R.ResponsesAPI(script)
    with api:  # keep the trust lines: only the provider's address changes
        (codex_repo.codex_home / "config.toml").write_text(config.replace("http://127.0.0.1:9", api.url))
        cmd = [codex_repo.codex_bin, "exec", "--dangerously-bypass-approvals-and-sandbox", "-C", str(codex_repo.repo),
               "script:trust go"]
        code, out, err, _ = codex_repo.run_marked(cmd, lambda extra: codex_repo.env(api.url, extra), 90, "codex exec")
    outs = [o for r in api.requests for o in r.tool_outputs()]
    assert outs and outs[0].text.startswith(R.BLOCKED) and "[G01]" in outs[0].text, err[-2000:]
    assert not (codex_repo.repo / ".swarmgate" / "ran-untrusted").exists()

    # 4. an install that changes a hook (a new timeout) makes it untrusted again
    codex_repo.config_set("hooks", "timeout", 25)
    codex_repo.install()
    (codex_repo.codex_home / "config.toml").write_text(config)
    got = line(doctor(codex_repo, **env), "Codex skips swarmgate's hooks without a word")
    assert "modified" in got and "preToolUse" not in got  # PreToolUse keeps report_timeout: unchanged


def test_gemini_folder_trust_through_doctor(gemini_repo, monkeypatch):
    monkeypatch.setenv("HOME", str(gemini_repo.home))
    trusted = gemini_repo.home / ".gemini" / "trustedFolders.json"
    assert line(doctor(gemini_repo), "Gemini does not trust this workspace").startswith("FAIL")
    trusted.write_text(json.dumps({str(gemini_repo.repo.parent): "TRUST_FOLDER",
                                   str(gemini_repo.repo): "DO_NOT_TRUST"}))
    assert "DO_NOT_TRUST" in line(doctor(gemini_repo), "Gemini does not trust this workspace")
    trusted.write_text(json.dumps({str(gemini_repo.repo / "README.md"): "TRUST_PARENT"}))
    assert line(doctor(gemini_repo), "Gemini trusts this workspace").startswith("ok")
    settings = gemini_repo.home / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"] = {"disabled": ["swarmgate BeforeTool"]}
    settings.write_text(json.dumps(data))
    assert line(doctor(gemini_repo), "Gemini is told not to run swarmgate's hooks").startswith("FAIL")
