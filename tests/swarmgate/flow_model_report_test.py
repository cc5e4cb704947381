"""The session flow report: model (pure), page (pure, self-contained, escaped), sources (progress bar,
missing transcripts), and `swarmgate report --html/--json`. The real-client session is in
tests/e2e/report_e2e_test.py."""
from __future__ import annotations

import io
import json
import time

import pytest
from rich.console import Console

from swarmgate import decision_log, flow_html, flow_model, log_view
from swarmgate.agents import records as R
from swarmgate.config import Config, validate
from swarmgate.flow_sources import gather, pick_sessions

T0 = 1_790_000_000.0


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def assistant(t, mid, blocks, tokens=(100, 10, 0, 0)):
    u = dict(zip(("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"), tokens))
    return {"type": "assistant", "timestamp": iso(t), "message": {"id": mid, "role": "assistant", "content": blocks,
                                                                   "usage": u}}


def use(tid, name, inp):
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def result(t, tid, text, error=False, extra=None):
    e = {"type": "user", "timestamp": iso(t), "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}]}}
    e.update(extra or {})
    return e


MAIN = [
    assistant(T0 + 1, "m1", [use("u1", "Agent", {"subagent_type": "implementer", "description": "wire",
                                                  "prompt": "task: t2"})]),
    result(T0 + 1.2, "u1", "PreToolUse:Agent hook error: swarmgate refused this:\n[D30] task t2 depends on t1", True),
    # a second entry of the same model turn repeats its usage: counted once
    assistant(T0 + 2, "m2", [use("u2", "Agent", {"subagent_type": "implementer", "description": "parser",
                                                  "prompt": "task: t1"})], (200, 20, 5, 7)),
    assistant(T0 + 2, "m2", [{"type": "text", "text": "dispatched"}], (200, 20, 5, 7)),
    result(T0 + 9, "u2", "done", extra={"toolUseResult": {"agentId": "a1", "status": "completed"}}),
    assistant(T0 + 10, "m3", [use("u3", "Bash", {"command": "echo '<script>alert(1)</script>'"})]),
    result(T0 + 10.5, "u3", "<script>alert(1)</script>"),
    {"type": "user", "timestamp": iso(T0 + 11), "message": {"role": "user", "content": [
        {"type": "text", "text": "Stop hook feedback:\n[S01] round r1 is not closed"}]}},
]
SUB = [
    {"type": "user", "timestamp": iso(T0 + 2.5), "message": {"role": "user", "content": "task: t1"}},
    assistant(T0 + 3, "s1", [use("v1", "Bash", {"command": "cargo test --workspace"})], (50, 5, 0, 0)),
    result(T0 + 3.1, "v1", "PreToolUse:Bash hook error: swarmgate refused this:\n[B01] heavy\n[B10] scope", True),
    assistant(T0 + 4, "s2", [use("v2", "Write", {"file_path": "src/p.py", "content": "x"})], (60, 6, 0, 0)),
    result(T0 + 4.5, "v2", "ok"),
]
DECISIONS = [
    {"time": iso(T0 + 0.5), "session": "S", "event": "SessionStart", "decision": "context", "codes": ["C01"],
     "latency_ms": 120.0},
    {"time": iso(T0 + 1.1), "session": "S", "event": "PreToolUse", "tool": "Agent", "decision": "deny",
     "codes": ["D30"], "findings": {"D30": "deny"}, "latency_ms": 40.0},
    {"time": iso(T0 + 2.4), "session": "S", "event": "SubagentStart", "agent_id": "a1", "agent_type": "implementer",
     "decision": "context", "codes": ["C02"], "latency_ms": 30.0},
    {"time": iso(T0 + 3.05), "session": "S", "event": "PreToolUse", "tool": "Bash", "agent_id": "a1",
     "agent_type": "implementer", "decision": "deny", "codes": ["B01", "B10", "R01"],
     "findings": {"B01": "deny", "B10": "deny", "R01": "context"}, "latency_ms": 300.0},
    {"time": iso(T0 + 8.9), "session": "S", "event": "SubagentStop", "agent_id": "a1", "agent_type": "implementer",
     "decision": "context", "codes": ["C03"], "latency_ms": 90.0},
    {"time": iso(T0 + 11), "session": "S", "event": "Stop", "decision": "block", "codes": ["C03", "S01"],
     "findings": {"S01": "block", "C03": "context"}, "latency_ms": 60.0},
    # a subagent with no transcript: its lane comes from the decision log
    {"time": iso(T0 + 5), "session": "S", "event": "SubagentStart", "agent_id": "a2", "agent_type": "researcher",
     "decision": "context", "codes": [], "latency_ms": 25.0},
    {"time": iso(T0 + 6), "session": "S", "event": "PreToolUse", "tool": "Write", "agent_id": "a2",
     "agent_type": "researcher", "decision": "deny", "codes": ["W01"], "findings": {"W01": "deny"}, "latency_ms": 20.0},
    {"time": iso(T0 + 7), "session": "S", "event": "SubagentStop", "agent_id": "a2", "agent_type": "researcher",
     "decision": "block", "codes": ["H01"], "findings": {"H01": "block"}, "latency_ms": 22.0, "reason": "[H01] left"},
]
RUNS = [
    {"label": "build", "session": "S", "cap": 64 << 20, "booked": 64 << 20, "peak": 20 << 20, "exit": 0,
     "outcome": "ok", "started": T0 + 4, "ended": T0 + 5, "duration_s": 1.0},
    {"label": "hog", "session": "S", "cap": 48 << 20, "booked": 48 << 20, "peak": 48 << 20, "exit": 250,
     "outcome": "own_cap", "started": T0 + 6, "ended": T0 + 7, "duration_s": 1.0},
    {"label": "squeezed", "session": None, "cap": 1 << 30, "booked": 1 << 29, "peak": 1 << 29, "exit": 254,
     "outcome": "pushed_out", "started": T0 + 8, "ended": T0 + 9, "duration_s": 1.0},
    {"label": "another session", "session": "OTHER", "exit": 0, "started": T0, "ended": T0 + 1},
    {"label": "long ago", "session": None, "exit": 0, "started": T0 - 9000, "ended": T0 - 8000},
]


def source(**over):
    src = {"repo": "/r", "generated": T0 + 20, "round": None, "problems": [],
           "sessions": [{"id": "S", "decisions": DECISIONS, "main": {"path": "/t/S.jsonl", "entries": MAIN},
                         "subagents": [{"id": "a1", "path": "/t/S/subagents/agent-a1.jsonl", "entries": SUB,
                                        "meta": {"agentType": "implementer", "toolUseId": "u2",
                                                 "description": "parser"}}]}],
           "record": None, "record_path": None, "verify": {}, "snapshot": {}, "runs": RUNS,
           "alerts": [{"time": T0 + 6, "kind": "transcript-audit", "source": "H02", "message": "x", "session": "S"},
                      {"time": T0 - 5000, "kind": "old", "message": "not this session"}]}
    src.update(over)
    return src


def test_lanes_events_links_and_refusal_codes():
    m = flow_model.build(source(), advisory={"R01", "C01", "C02", "C03"})
    (s,) = m["sessions"]
    assert [ln["id"] for ln in s["lanes"]] == ["main", "a1", "a2"]
    main, a1, a2 = s["lanes"]
    kinds = [(e["kind"], tuple(e.get("codes") or ())) for e in main["events"]]
    assert ("refusal", ("D30",)) in kinds and ("stop-refused", ("S01",)) in kinds
    assert [e for e in main["events"] if e["kind"] == "dispatch" and e.get("agent") == "a1"], "dispatch linked"
    assert a1["type"] == "implementer" and a1["events"][0]["kind"] == "dispatch" and a1["events"][0]["t"] == T0 + 2
    assert [e["kind"] for e in a1["events"]].count("start") == 1 and a1["events"][-1]["kind"] == "handback"
    assert [tuple(e["codes"]) for e in a1["events"] if e["kind"] == "refusal"] == [("B01", "B10")]
    # no transcript: refusals and the refused hand-back come from the decision log, with their own codes
    assert a2["type"] == "researcher" and [(e["kind"], e.get("codes")) for e in a2["events"]] == [
        ("start", None), ("refusal", ["W01"]), ("handback-refused", ["H01"])]
    assert (main["refusals"], a1["refusals"], a2["refusals"]) == (2, 1, 2)
    assert (s["start"], s["end"]) == (T0 + 0.5, T0 + 11)


def test_tokens_per_agent_and_type_counted_once_per_turn():
    m = flow_model.build(source())
    main, a1, _ = m["sessions"][0]["lanes"]
    assert main["tokens"] == {"input_tokens": 400, "output_tokens": 40, "cache_creation_input_tokens": 5,
                              "cache_read_input_tokens": 7, "total": 452, "turns": 3}
    assert a1["tokens"]["total"] == 121 and a1["tokens"]["turns"] == 2
    assert m["tokens"]["by_type"]["implementer"]["total"] == 121 and m["tokens"]["total"]["total"] == 573


def test_runs_alerts_latency_and_codes():
    m = flow_model.build(source(), advisory={"R01"})
    assert [(r["label"], r["class"], r["marked"]) for r in m["runs"]] == [
        ("build", "ok", False), ("hog", "oom (own cap)", True), ("squeezed", "pushed out", True)]
    assert [a["kind"] for a in m["alerts"]] == ["transcript-audit"]
    pre = m["latency"]["PreToolUse"]
    assert pre["n"] == 3 and sum(n for _, _, n in pre["histogram"]) == 3 and pre["max_ms"] == 300.0
    assert m["summary"]["codes"]["R01"] == {"context": 1} and m["summary"]["codes"]["B01"] == {"deny": 1}


def test_the_page_is_self_contained_and_escapes_what_agents_wrote():
    page = flow_html.render(flow_model.build(source(), advisory={"R01"}))
    for outside in ("http://", "https://", "src=", "@import", "<script", "<link", "url(http"):
        assert outside not in page, outside
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count('class="lane" data-agent=') == 3
    for code in ('data-codes="D30"', 'data-codes="B01, B10"', 'data-codes="W01"', 'data-codes="H01"',
                 'data-codes="S01"'):
        assert code in page, code
    assert "OOM: hit its own cap (250)" in page and "pushed out by the total (254)" in page
    assert "<td class='num' data-total='all agents'><b>573</b></td>" in page


def test_the_rounds_graph_planned_vs_done():
    text = ("# Round r1\n\ngoal: g\nexit: e\n\n## Tasks\n\n"
            "| id | description | deps | inputs ready | batch | verdict |\n"
            "|-|-|-|-|-|-|\n| t1 | parse | - | yes | 1 | close |\n| t2 | wire | t1 | no | 2 | |\n\n## Verify\n\n"
            "| task | command | expect exit | max retries |\n|-|-|-|-|\n"
            "| t1 | make t1 | 0 | 1 |\n| t2 | make t2 | 0 | 0 |\n")
    rec = R.parse_record(text, "/r/records/r1.md")
    verify = {"t1": {"command": "make t1", "class": "fail", "exit": 2, "attempts": 2}}
    m = flow_model.build(source(record=rec, record_path="/r/records/r1.md", verify=verify, round="r1"))
    g = m["record"]
    assert [(t["id"], t["verdict"], t["verify"]["class"]) for t in g["tasks"]] == [("t1", "close", "fail"),
                                                                                 ("t2", "open", "not run")]
    assert "last ended fail (exit 2)" in g["tasks"][0]["unverified"]
    page = flow_html.render(m)
    assert 'data-task="t1" data-verdict="close"' in page and "verify: fail (2 attempt(s))" in page
    assert "swarmgate session flow: round r1" in page


def test_a_progress_bar_while_a_long_history_is_read(tmp_path, monkeypatch):
    """Forced onto a terminal-like console: rich draws the bar; a short history on a pipe draws nothing."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    for i in range(300):
        decision_log.record(str(repo), session="S", agent_id=None, agent_type=None, event="PreToolUse",
                            tool="Bash", codes=[], decision="allow", latency_ms=float(i % 50), input_text="ls")
    cfg = Config(validate({}), None, str(repo), {})
    buf = io.StringIO()
    src = gather(str(repo), cfg, projects=str(tmp_path / "projects"),
                 console=Console(file=buf, force_terminal=True, width=100), force_progress=True)
    assert "reading" in buf.getvalue() and "━" in buf.getvalue(), buf.getvalue()
    assert [s["id"] for s in src["sessions"]] == ["S"] and len(src["sessions"][0]["decisions"]) == 300
    assert any("no transcript of session S" in p for p in src["problems"])
    quiet = io.StringIO()
    gather(str(repo), cfg, projects=str(tmp_path / "projects"), console=Console(file=quiet))
    assert quiet.getvalue() == ""


def test_report_cli_html_and_json_from_the_log_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    for r in DECISIONS:
        with open(decision_log.log_path(str(repo)), "a") if (repo / ".swarmgate" / "log").exists() else \
                _mk(repo) as f:
            f.write(json.dumps(r) + "\n")
    page = tmp_path / "out.html"
    assert log_view.report_main(["--repo", str(repo), "--html", str(page), "--transcripts", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert f"wrote {page}: 1 session(s), 3 lane(s)" in out and "no transcript of session S" in out
    assert page.read_text().count('class="lane" data-agent=') == 3
    assert log_view.report_main(["--repo", str(repo), "--json", "--transcripts", str(tmp_path / "p")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == len(DECISIONS) and data["flow"]["session_ids"] == ["S"]
    assert data["codes"]["D30"] == {"deny": 1}
    capsys.readouterr()
    assert log_view.report_main(["--repo", str(repo), "--html", str(page / "x.html")]) == 251  # under a file
    err = capsys.readouterr().err
    assert err.startswith("swarmgate report: cannot write") and len(err.strip().splitlines()) == 1


def _mk(repo):
    (repo / ".swarmgate" / "log").mkdir(parents=True)
    return open(decision_log.log_path(str(repo)), "a")


@pytest.mark.parametrize("code, cls", [(0, "ok"), (1, "failed"), (250, "oom (own cap)"), (254, "pushed out"),
                                       (253, "timeout"), (None, "unknown")])
def test_run_classes(code, cls):
    assert flow_model.run_class(code) == cls


def test_which_sessions_a_report_shows():
    recs = [{"session": "aaa1", "time": iso(T0)}, {"session": "bbb2", "time": iso(T0 + 50)},
            {"session": "aaa1", "time": iso(T0 + 100)}, {"session": "ccc3", "time": iso(T0 + 20)}]
    assert pick_sessions(recs, None, None) == ["aaa1"]                      # the latest decision
    assert pick_sessions(recs, "bb", None) == ["bbb2"]                      # a prefix
    assert pick_sessions(recs, None, {"session": "ccc3"}) == ["ccc3"]       # the round's own session
    assert pick_sessions(recs, None, {"session": "", "created": iso(T0 + 30)}) == ["bbb2", "aaa1"]
    assert pick_sessions([], None, None) == []
