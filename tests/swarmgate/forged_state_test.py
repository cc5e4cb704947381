"""State no agent can forge (issue 11): the caches an agent could rewrite, written exactly as an
agent would (the right key, valid content, every guard switched off), switch nothing off."""
from __future__ import annotations

import json
import os

from swarmgate import config, doctor, install, sizes
from swarmgate.config import load_config, parse_toml, validate
from swarmgate.hooks import registry
from tests.swarmgate.conftest import answer_of, payload, run_hook

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _old_config_key(path: str) -> str:
    """The key the config cache was trusted under: stat fields anyone can read, and the identity
    of swarmgate's own config code (what an agent computes before forging the cache)."""
    st = os.stat(path)
    code = []
    for mod_file in (config.__file__, sizes.parse_size.__code__.co_filename):
        cs = os.stat(mod_file)
        code.append(f"{cs.st_mtime_ns}:{cs.st_size}")
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}|{'|'.join(code)}"


def _forge_config_cache(repo) -> None:
    cfg = str(repo / ".claude" / "swarmgate.toml")
    raw = parse_toml(cfg)
    raw["guards"] = {g.code: "off" for g in registry.guards()}
    cache = repo / ".swarmgate" / "cache" / "config.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": _old_config_key(cfg), "data": validate(raw), "raw": raw}))


def _forge_route_cache(repo) -> None:
    idx = repo / ".swarmgate" / "cache" / "guard-routes.json"
    idx.parent.mkdir(parents=True, exist_ok=True)
    idx.write_text(json.dumps({"key": "anything", "routes": {name: [] for name in registry.MODULES}}))


def test_a_forged_config_cache_switches_no_guard_off(repo, capsys):
    assert install.main([str(repo)]) == 0
    _forge_config_cache(repo)
    _forge_route_cache(repo)
    assert all(v == "on" for v in load_config(str(repo))["guards"].values())
    for cmd, code in [("cargo test --workspace", "[B01]"), ("echo '{}' > .claude/settings.json", "[G01]")]:
        ans = answer_of(run_hook(["PreToolUse"], payload(repo, command=cmd), cwd=repo))["hookSpecificOutput"]
        assert ans["permissionDecision"] == "deny" and code in ans["permissionDecisionReason"], cmd
    ans = answer_of(run_hook(["PreToolUse"], payload(repo, "Write", file_path=".claude/swarmgate.toml",
                                                      content=""), cwd=repo))["hookSpecificOutput"]
    assert ans["permissionDecision"] == "deny" and "[G01]" in ans["permissionDecisionReason"]
    capsys.readouterr()
    # doctor says what it checked, and names the forged files as read by nothing
    assert doctor.check_config(str(repo)).status == doctor.OK
    c = doctor.check_state_caches(str(repo))
    assert c.status == doctor.NOTE and "nothing reads it" in c.what and "config.json" in c.what


def test_doctor_fails_a_route_table_that_would_skip_a_guard(monkeypatch):
    monkeypatch.setitem(registry.ROUTES, "swarmgate.hooks.heavy_guards", (("PreToolUse", ("Monitor",)),))
    c = doctor.check_state_caches(ROOT)
    assert c.status == doctor.FAIL and "heavy_guards: PreToolUse/Bash" in c.what
