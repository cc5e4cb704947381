"""The hook engine always answers: bad input, bad guards, bad config, break switches.

Claude Code lets a tool call proceed on any exit code but 0 and 2, on a crash
and on a timeout, so every case here checks exit 0 + one JSON object + no
traceback, and the decision that follows.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from swarmgate import decision_log
from swarmgate import guard as G
from swarmgate.config import load_config
from swarmgate.hook_engine import answer as engine_answer
from swarmgate.hook_engine import hook_timeout_s, judge_recorded
from swarmgate.hook_protocol import goes_ahead
from swarmgate.hooks import registry
from swarmgate.install import HOOK_GROUPS


def deny_reason(ans: dict) -> str:
    hso = ans.get("hookSpecificOutput") or {}
    assert hso.get("permissionDecision") == "deny", ans
    return hso["permissionDecisionReason"]


def _guard(code="X01", check=None, events=("PreToolUse",), tools=("Bash",), advisory=False, budget_ms=None):
    return G.Guard(code=code, summary=f"test guard {code}", events=events, tools=tools,
                   check=check or (lambda e, c: None),
                   doc=G.GuardDoc("why", "example", "instead"), breaks={}, advisory=advisory,
                   budget_ms=budget_ms)


def call(event_name, payload_obj, registry):
    out, code = engine_answer(event_name, json.dumps(payload_obj), registry=registry)
    assert code == 0
    return json.loads(out)


def bash(repo, command="ls", **extra):
    return {"session_id": "s1", "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}, **extra}


# --- malformed input, through the real entry point ---

@pytest.mark.parametrize("stdin, expect", [
    ("", "empty"),
    ("   \n", "empty"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON list, expected an object"),
    ('{"tool_name": "Bash", "tool_input": "ls"}', "`tool_input` is a str"),
    ('{"tool_input": {"command": "ls"}}', "lacks `tool_name`"),
    (b"\xff\xfe\x00garbage", "not valid JSON"),
])
def test_malformed_pretooluse_input_is_refused_with_one_line(hook, answer, repo, stdin, expect):
    proc = hook(["PreToolUse"], stdin, cwd=repo)
    reason = deny_reason(answer(proc))
    assert expect in reason
    assert "could not read the hook input" in reason
    assert expect in proc.stderr.decode()


def test_malformed_input_on_a_stop_event_never_blocks(hook, answer, repo):
    ans = answer(hook(["Stop"], "{oops", cwd=repo))
    assert "decision" not in ans
    assert "not valid JSON" in ans["systemMessage"]


def test_unknown_event_answers_with_a_message(hook, answer, repo):
    proc = hook(["PreToolUze"], '{"session_id": "s"}', cwd=repo)
    ans = answer(proc)
    assert "unknown hook event 'PreToolUze'" in ans["systemMessage"]
    assert "PreToolUse" in ans["systemMessage"]


@pytest.mark.parametrize("args", [[], ["PreToolUse", "extra"], ["Stop", "x", "y"]])
def test_wrong_number_of_arguments(hook, answer, repo, args):
    proc = hook(args, '{"session_id": "s"}', cwd=repo)
    ans = answer(proc)
    assert "expected exactly one EVENT" in proc.stderr.decode()
    if args[:1] == ["PreToolUse"]:
        assert "expected exactly one EVENT" in deny_reason(ans)  # a tool call is refused, not let through
    else:
        assert "expected exactly one EVENT" in ans["systemMessage"]


def test_benign_bash_is_allowed_with_an_empty_answer(hook, answer, repo, make_payload):
    assert answer(hook(["PreToolUse"], make_payload(repo, command="ls -la"), cwd=repo)) == {}


def test_g01_deny_through_the_entry_point(hook, answer, repo, make_payload):
    proc = hook(["PreToolUse"], make_payload(repo, "Write", file_path=".claude/settings.json", content="{}"),
                cwd=repo)
    reason = deny_reason(answer(proc))
    assert "[G01]" in reason and "Way out:" in reason


def test_break_switch_outside_a_selftest_is_refused(hook, answer, repo, make_payload):
    proc = hook(["PreToolUse"], make_payload(repo, command="ls"), cwd=repo,
                env={"SWARMGATE_BREAK": "g01-allow-file-tools"})
    reason = deny_reason(answer(proc))
    assert "SWARMGATE_BREAK=g01-allow-file-tools" in reason
    assert "Unset SWARMGATE_BREAK" in reason


def test_bad_config_refuses_tool_calls_naming_the_file(hook, answer, repo, make_payload):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text("[threads]\nheavy_default = 'many'\n")
    proc = hook(["PreToolUse"], make_payload(repo, command="ls"), cwd=repo)
    reason = deny_reason(answer(proc))
    assert "swarmgate.toml" in reason and "heavy_default" in reason and "'many'" in reason


# --- guards that misbehave: a real process with a crafted registry ---

CRASH_SCRIPT = textwrap.dedent("""
    import sys, time
    from swarmgate import guard as G
    from swarmgate.hooks import registry
    def boom(e, c): raise RuntimeError("kaboom")
    def slow(e, c): time.sleep(5)
    kind = sys.argv[1]
    check = boom if kind in ("crash", "advisory") else slow
    registry._cache = [G.Guard("X09", "misbehaving guard", ("PreToolUse",), ("Bash",), check,
                               G.GuardDoc("w", "e", "i"), {}, advisory=(kind == "advisory"), budget_ms=200)]
    from swarmgate.cli import main
    sys.exit(main(["hook", "PreToolUse"]))
""")


@pytest.mark.parametrize("kind", ["crash", "advisory", "slow"])
def test_misbehaving_guard_in_a_real_process(answer, repo, make_payload, kind):
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, kind], input=make_payload(repo).encode(),
                          capture_output=True, cwd=repo, timeout=60)
    ans = answer(proc)
    if kind == "crash":
        reason = deny_reason(ans)
        assert "X09" in reason and "crashed (RuntimeError: kaboom)" in reason and "fail closed" in reason
    elif kind == "advisory":
        ctx = ans["hookSpecificOutput"]["additionalContext"]
        assert "permissionDecision" not in ans["hookSpecificOutput"]
        assert "could not do its work" in ctx and "kaboom" in ctx
    else:
        assert "within its 200 ms budget" in deny_reason(ans)


# --- in-process engine: each failure class decides definitely ---

def test_raising_guard_fails_closed(repo):
    def boom(e, c):
        raise KeyError("x")
    reason = deny_reason(call("PreToolUse", bash(repo), [_guard("X01", boom)]))
    assert "[X01]" in reason and "KeyError" in reason


def test_guard_calling_sys_exit_still_fails_closed(repo):
    def bye(e, c):
        sys.exit(0)
    assert "SystemExit" in deny_reason(call("PreToolUse", bash(repo), [_guard("X02", bye)]))


def test_guard_that_swallows_exceptions_cannot_swallow_its_timeout(repo):
    def stubborn(e, c):
        try:
            time.sleep(3)
        except Exception:  # noqa: BLE001 - what a careless guard does
            return None
        return None
    reason = deny_reason(call("PreToolUse", bash(repo), [_guard("X03", stubborn, budget_ms=100)]))
    assert "[X03]" in reason and "100 ms budget" in reason


def test_guard_returning_garbage_fails_closed(repo):
    reason = deny_reason(call("PreToolUse", bash(repo), [_guard("X04", lambda e, c: "deny!")]))
    assert "[X04]" in reason and "instead of a Finding" in reason


def test_advisory_guard_that_raises_passes_with_a_note(repo):
    def boom(e, c):
        raise OSError("no /proc")
    ans = call("PreToolUse", bash(repo), [_guard("R99", boom, advisory=True)])
    hso = ans["hookSpecificOutput"]
    assert "permissionDecision" not in hso
    assert "could not do its work" in hso["additionalContext"] and "no /proc" in hso["additionalContext"]


def test_deny_wins_and_every_reason_is_named(repo):
    guards = [_guard("X05", lambda e, c: G.Finding("X05", "context only", decision=G.CONTEXT)),
              _guard("X06", lambda e, c: G.Finding("X06", "bad", "do this")),
              _guard("X07", lambda e, c: G.Finding("X07", "also bad", decision=G.ASK))]
    ans = call("PreToolUse", bash(repo), guards)
    reason = deny_reason(ans)
    assert "[X06] bad Way out: do this" in reason and "[X07]" in reason
    assert ans["hookSpecificOutput"]["additionalContext"] == "context only"


def test_guard_only_runs_for_its_tool(repo):
    called = []
    g = _guard("X08", lambda e, c: called.append(1), tools=("Write",))
    assert call("PreToolUse", bash(repo), [g]) == {}
    assert called == []


def _config(repo, text):
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "swarmgate.toml").write_text(text)


def test_warn_mode_turns_deny_into_context(repo):
    _config(repo, '[guards]\nX10 = "warn"\n')
    ans = call("PreToolUse", bash(repo), [_guard("X10", lambda e, c: G.Finding("X10", "bad", "fix"))])
    hso = ans["hookSpecificOutput"]
    assert "permissionDecision" not in hso
    assert "(warn only) bad" in hso["additionalContext"] and "[X10]" in hso["additionalContext"]


def test_off_mode_skips_the_guard(repo):
    _config(repo, '[guards]\nX11 = "off"\n')
    called = []

    def check(e, c):
        called.append(1)
        return G.Finding("X11", "bad")
    assert call("PreToolUse", bash(repo), [_guard("X11", check)]) == {}
    assert called == []


def test_stop_with_stop_hook_active_never_blocks(repo):
    g = _guard("S99", lambda e, c: G.Finding("S99", "round not closed", "close it"), events=("Stop",), tools=())
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(repo), "hook_event_name": "Stop"}
    blocked = call("Stop", {**base, "stop_hook_active": False}, [g])
    assert blocked["decision"] == "block" and "[S99]" in blocked["reason"]
    again = call("Stop", {**base, "stop_hook_active": True}, [g])
    assert "decision" not in again
    assert "[S99]" in again["systemMessage"]


def test_subagent_and_main_agent_are_told_apart(repo):
    seen = []
    g = _guard("X12", lambda e, c: seen.append((e.is_subagent, e.actor)))
    call("PreToolUse", bash(repo), [g])
    call("PreToolUse", bash(repo, agent_id="a1", agent_type="implementer"), [g])
    assert seen == [(False, "main"), (True, "implementer")]


def test_every_decision_is_logged_with_the_spec_fields(repo):
    g = _guard("X13", lambda e, c: G.Finding("X13", "no") if "rm" in e.shell_command else None)
    call("PreToolUse", bash(repo, "ls"), [g])
    call("PreToolUse", bash(repo, "rm -rf x", agent_id="a7", agent_type="implementer"), [g])
    recs = decision_log.read(str(repo))
    assert [r["decision"] for r in recs] == ["allow", "deny"]
    for field in ("time", "session", "agent_id", "agent_type", "event", "tool", "codes", "decision", "latency_ms"):
        assert all(field in r for r in recs), field
    assert recs[1]["codes"] == ["X13"] and recs[1]["agent_type"] == "implementer" and recs[1]["agent_id"] == "a7"
    assert recs[0]["agent_id"] is None and recs[0]["session"] == "s1" and recs[0]["tool"] == "Bash"
    assert recs[1]["input"] == "rm -rf x" and recs[1]["latency_ms"] >= 0
    assert recs[0]["time"].endswith("Z")


def test_the_log_keeps_each_codes_own_decision(repo):
    """An advisory report on a call another guard refused is logged as context for its code."""
    refuse = _guard("X14", lambda e, c: G.Finding("X14", "no"))
    report = _guard("X15", lambda e, c: G.Finding("X15", "memory: 3G free", decision=G.CONTEXT), advisory=True)
    call("PreToolUse", bash(repo, "make"), [refuse, report])
    call("PreToolUse", bash(repo, "ls"), [report])
    first, second = decision_log.read(str(repo))
    assert first["decision"] == "deny" and first["findings"] == {"X14": "deny", "X15": "context"}
    assert second["decision"] == "context" and second["findings"] == {"X15": "context"}
    assert len(first["time"]) == len("2026-11-30T12:00:00.123Z"), first["time"]  # milliseconds


def test_a_stop_blocks_per_code_in_the_logs_words(repo):
    g = _guard("S98", lambda e, c: G.Finding("S98", "round not closed"), events=("Stop",), tools=())
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(repo), "hook_event_name": "Stop"}
    call("Stop", {**base, "stop_hook_active": False}, [g])
    call("Stop", {**base, "stop_hook_active": True}, [g])
    assert [r["findings"] for r in decision_log.read(str(repo))] == [{"S98": "block"}, {"S98": "allow"}]


def test_a_planted_symlink_at_the_log_does_not_break_the_answer(repo, tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    (repo / ".swarmgate" / "log").mkdir(parents=True)
    os.symlink(target, repo / ".swarmgate" / "log" / "decisions.jsonl")
    answer = call("PreToolUse", bash(repo), [_guard()])   # allowed, and it says the log was not written
    assert list(answer["hookSpecificOutput"]) == ["hookEventName", "additionalContext"], answer
    assert answer["hookSpecificOutput"]["additionalContext"].startswith(
        "swarmgate could not write the decision log: ") and "symlink" in str(answer), answer
    assert target.read_text() == "keep\n"


@pytest.mark.parametrize("mode", ["warn", "off"])
def test_warn_and_off_modes_through_the_entry_point(hook, answer, repo, make_payload, mode):
    _config(repo, f'[guards]\nG01 = "{mode}"\n')
    ans = answer(hook(["PreToolUse"], make_payload(repo, "Write", file_path=".claude/settings.json", content="{}"),
                      cwd=repo))
    hso = ans.get("hookSpecificOutput", {})
    assert "permissionDecision" not in hso
    if mode == "warn":
        assert "(warn only)" in hso["additionalContext"] and "[G01]" in hso["additionalContext"]
    else:
        assert ans == {}


def test_stop_through_the_entry_point_with_stop_hook_active(hook, answer, repo):
    payload = json.dumps({"session_id": "s1", "transcript_path": "", "cwd": str(repo), "hook_event_name": "Stop",
                          "stop_hook_active": True, "last_assistant_message": "done"})
    ans = answer(hook(["Stop"], payload, cwd=repo))
    assert ans.get("decision") != "block"


def test_a_guard_module_that_does_not_import_fails_closed(repo, monkeypatch, capsys):
    monkeypatch.setattr(registry, "MODULES", (*registry.MODULES, "swarmgate.hooks.no_such_guard_module"))
    monkeypatch.setattr(registry, "_cache", None)
    out, code = engine_answer("PreToolUse", json.dumps(bash(repo)))
    assert code == 0
    reason = deny_reason(json.loads(out))
    assert "no_such_guard_module" in reason and "fail closed" in reason
    out, code = engine_answer("Stop", json.dumps({**bash(repo), "hook_event_name": "Stop"}))
    ans = json.loads(out)
    assert "decision" not in ans and "no_such_guard_module" in ans["systemMessage"]


def test_a_broken_hook_engine_still_refuses(answer, repo, make_payload):
    """A checkout where the engine cannot even be imported answers deny, not a traceback."""
    code = ("import sys, builtins\n"
            "real = builtins.__import__\n"
            "def imp(name, *a, **k):\n"
            "    if name == 'swarmgate.hook_engine':\n"
            "        raise SyntaxError('invalid syntax (hook_engine.py, line 1)')\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = imp\n"
            "from swarmgate.cli import main\n"
            "sys.exit(main(['hook', 'PreToolUse']))\n")
    proc = subprocess.run([sys.executable, "-c", code], input=make_payload(repo).encode(), capture_output=True,
                          cwd=repo, timeout=60)
    reason = deny_reason(answer(proc))
    assert "hook engine cannot be loaded" in reason and "SyntaxError" in reason


def test_the_whole_call_answers_within_the_hook_timeout(repo):
    """Guards that each stay within their own budget cannot together outlast Claude Code's timeout
    (past it the call would proceed unchecked): the guard left without time refuses."""
    _config(repo, "[hooks]\ntimeout = 3\nreport_timeout = 3\nguard_budget_ms = 5000\n")

    def slow(e, c):
        time.sleep(1.0)

    guards = [_guard(f"X2{i}", slow) for i in range(4)]
    t0 = time.monotonic()
    reason = deny_reason(call("PreToolUse", bash(repo), guards))
    assert time.monotonic() - t0 < 3.0 + 1.0  # the answer came back (a generous bound: this is not a timing test)
    assert "total time budget" in reason or "ms budget" in reason
    assert "[X23]" in reason


def test_engine_and_install_agree_on_each_hooks_timeout(repo):
    _config(repo, "[hooks]\ntimeout = 11\nreport_timeout = 47\n")
    cfg = load_config(str(repo))
    for event, matcher, key in HOOK_GROUPS:
        for tool in (matcher.split("|") if matcher else [None]):
            assert hook_timeout_s(cfg, event, tool) == cfg["hooks"][key], (event, tool)


def test_refusals_without_judging_are_logged_too(hook, answer, repo, make_payload, monkeypatch):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    answer(hook(["PreToolUse"], "{broken", cwd=repo))
    answer(hook(["PreToolUse"], make_payload(repo, command="ls"), cwd=repo, env={"SWARMGATE_BREAK": "x"}))
    _config(repo, "[nosuch]\n")
    answer(hook(["PreToolUse"], make_payload(repo, command="ls -l"), cwd=repo))
    recs = decision_log.read(str(repo))
    assert [r["decision"] for r in recs] == ["deny", "deny", "deny"]
    assert "could not read the hook input" in recs[0]["reason"]
    assert recs[1]["codes"] == ["G01"] and "SWARMGATE_BREAK" in recs[1]["reason"] and recs[1]["input"] == "ls"
    assert "config error" in recs[2]["reason"] and recs[2]["session"] == "sess-1"


# --- the act phase (swarmgate/guard.py): side effects only when the call goes ahead ---

def _acting(code, act, check=None, act_refuses=False, advisory=False, tools=("Bash",)):
    g = _guard(code, check=check, advisory=advisory, tools=tools)
    g.act, g.act_refuses = act, act_refuses
    return g


def test_acts_run_only_when_the_call_goes_ahead(repo):
    ran = []
    actor = _acting("X01", lambda e, c: ran.append("X01"))
    refuser = _guard("X02", check=lambda e, c: G.Finding("X02", "no"))
    asker = _guard("X03", check=lambda e, c: G.Finding("X03", "sure?", decision=G.ASK))
    deny_reason(call("PreToolUse", bash(repo), [actor, refuser]))
    assert ran == []
    ans = call("PreToolUse", bash(repo), [actor, asker])
    assert ans["hookSpecificOutput"]["permissionDecision"] == "ask" and ran == ["X01"]   # may run: recorded


def test_a_shared_act_runs_once_and_acts_that_may_refuse_run_first(repo):
    ran = []

    def shared(e, c):
        ran.append("shared")

    guards = [_acting("X01", lambda e, c: ran.append("plain")), _acting("X02", shared, act_refuses=True),
              _acting("X03", shared, act_refuses=True)]
    assert "hookSpecificOutput" not in call("PreToolUse", bash(repo), guards)
    assert ran == ["shared", "plain"]


def test_a_late_refusal_denies_and_stops_the_acts_after_it(repo):
    ran = []
    late = _acting("X01", lambda e, c: G.Finding("X01", "slot taken since the judgement", "wait"),
                   act_refuses=True)
    after = _acting("X02", lambda e, c: ran.append("X02"))
    reason = deny_reason(call("PreToolUse", bash(repo), [after, late]))
    assert "[X01] slot taken since the judgement" in reason and ran == []


def test_an_act_that_may_not_refuse_cannot_deny(repo):
    sneaky = _acting("X01", lambda e, c: G.Finding("X01", "I refuse after all"))
    ans = call("PreToolUse", bash(repo), [sneaky])
    assert ans["hookSpecificOutput"].get("permissionDecision") is None
    assert "[X01] I refuse after all" in ans["hookSpecificOutput"]["additionalContext"]


def test_act_findings_replace_the_judged_findings_of_their_code(repo):
    g = _acting("X01", lambda e, c: G.Finding("X01", "started (pid 42)", decision=G.CONTEXT),
                check=lambda e, c: G.Finding("X01", "will be started", decision=G.CONTEXT), advisory=True)
    ctx = call("PreToolUse", bash(repo), [g])["hookSpecificOutput"]["additionalContext"]
    assert "started (pid 42)" in ctx and "will be started" not in ctx


def test_a_crashing_act_fails_closed_only_where_it_may_refuse(repo):
    def boom(e, c):
        raise OSError("state directory is read-only")

    reason = deny_reason(call("PreToolUse", bash(repo), [_acting("X01", boom, act_refuses=True)]))
    assert "X01" in reason and "state directory is read-only" in reason and "fail closed" in reason
    ans = call("PreToolUse", bash(repo), [_acting("X02", boom, advisory=True)])
    assert "permissionDecision" not in ans.get("hookSpecificOutput", {})
    assert "Nothing was refused" in ans["hookSpecificOutput"]["additionalContext"]


def test_the_act_of_a_guard_switched_off_does_not_run(repo):
    ran = []
    (repo / ".claude").mkdir()
    (repo / ".claude" / "swarmgate.toml").write_text('[guards]\nB01 = "off"\n')
    g = _acting("B01", lambda e, c: ran.append("B01"))
    call("PreToolUse", bash(repo), [g])
    assert ran == []


def test_stop_acts_run_when_the_stop_goes_through():
    assert not goes_ahead("SubagentStop", "deny", stop_hook_active=False)
    assert goes_ahead("SubagentStop", "deny", stop_hook_active=True)
    assert goes_ahead("PreToolUse", "ask") and not goes_ahead("PreToolUse", "deny")
    assert goes_ahead("PostToolUse", "allow") and not goes_ahead("PostToolUse", "deny")


def test_judge_recorded_judges_a_recorded_call_and_records_nothing(repo, tmp_path):
    payload = {"session_id": "s1", "cwd": str(repo), "tool_name": "Bash", "agent_id": "a1",
               "agent_type": "implementer", "tool_input": {"command": "cargo test --workspace"}}
    judge_recorded(payload, load_config(str(repo)), str(repo))   # the parser's table cache is written once
    before = sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    findings = judge_recorded(payload, load_config(str(repo)), str(repo))
    # B10 leaves a subagent's heavy run to B01 (a scope would not let it through)
    assert {f.code for f in findings} == {"B01"} and "R01" not in {f.code for f in findings}
    assert sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")) == before
    payload["tool_input"] = {"command": "ls"}
    assert judge_recorded(payload, load_config(str(repo)), str(repo)) == []
