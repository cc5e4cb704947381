"""The session flow report: model (pure), page (pure, self-contained, escaped), sources (progress bar,
missing transcripts), and `swarmgate report --html/--json`. The real-client session is in
tests/e2e/report_e2e_test.py."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import time

import pytest
from rich.console import Console

from swarmgate import decision_log, flow_html, flow_model, log_view
from swarmgate.agents import records as R
from swarmgate.agents.handover import project_dir_name
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


NOT_FOUND = "Exit code 127\n/bin/bash: line 1: remind: command not found"


def storm():
    """A main lane with ten refusals and four failed calls within three seconds, then a failed `false`."""
    main = [assistant(T0, "m0", [use("u0", "Bash", {"command": "ls"})]), result(T0 + 0.3, "u0", "a b")]
    for i in range(10):
        t = T0 + 20 + i * 0.15
        main.append(assistant(t, f"m{i + 1}", [use(f"u{i + 1}", "Bash", {"command": f"cargo test -p c{i}"})]))
        main.append(result(t + 0.05, f"u{i + 1}",
                           f"PreToolUse:Bash hook error: swarmgate refused this:\n[B01] heavy\n[X{i:02d}] x", True))
    for i in range(4):
        t = T0 + 21 + i * 0.2
        main.append(assistant(t, f"f{i}", [use(f"w{i}", "Bash", {"command": f"remind in {i}m x"})]))
        main.append(result(t + 0.1, f"w{i}", NOT_FOUND, True))
    main.append(assistant(T0 + 60, "z", [use("uz", "Bash", {"command": "false"})]))
    main.append(result(T0 + 61, "uz", "Exit code 1", True))
    src = source()
    src["sessions"][0]["main"]["entries"] = main
    return src


def test_calls_that_ran_and_failed_are_marked_with_their_exit_code():
    m = flow_model.build(storm())
    main = m["sessions"][0]["lanes"][0]
    failed = [e for e in main["events"] if e.get("failed")]
    assert [e["exit"] for e in failed] == [127, 127, 127, 127, 1] and main["failed"] == 5
    assert not any(e.get("failed") for e in main["events"] if e.get("refused"))  # a refusal is not a failure
    assert not any(e.get("failed") for e in main["events"] if e.get("text") == "ls")
    page = flow_html.render(m)
    assert page.count('class="mark tool failed" data-exit="127"') == 4 and 'data-exit="1"' in page
    assert "exit 127 ×4" in page and ">exit 1<" in page  # the close four share one label
    assert "5 failed" in page and "command not found" in page  # lane label; the tooltip keeps the error


def test_labels_close_in_time_never_meet():
    m = flow_model.build(storm())
    (s,) = m["sessions"]
    lay = flow_html.lanes_layout(s)
    boxes = [b for lane in lay["lanes"] for b in lane["labels"]]
    assert len(boxes) >= 14  # ten refusals, the 127s, exit 1, the subagents' codes
    for i, a in enumerate(boxes):
        assert flow_html.LABEL_W <= a["x0"] < a["x1"] <= flow_html.LABEL_W + flow_html.PLOT_W + 20
        for b in boxes[i + 1:]:
            meet = a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]
            assert not meet, (a["text"], b["text"])
    # each label stays inside its own lane's band, above the lane's marks
    for lane in lay["lanes"]:
        for b in lane["labels"]:
            assert lane["top"] <= b["y0"] and b["y1"] <= lane["y"] - 7
    assert lay["lanes"][0]["h"] > flow_html.LANE_H  # the main lane grew rows for its labels


def test_the_default_session_is_the_latest_with_agent_tool_calls(tmp_path, monkeypatch):
    """`swarmgate doctor` (and a self-test) log probe decisions after the real session: the page
    shows the session whose agents made tool calls, not the probe's."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    with _mk(repo) as f:
        for r in DECISIONS:
            f.write(json.dumps(r) + "\n")
        for sid in ("swarmgate-doctor", "selftest-session"):
            f.write(json.dumps({"time": iso(T0 + 500), "session": sid, "event": "PreToolUse", "tool": "Bash",
                                "decision": "allow", "codes": [], "latency_ms": 9.0, "input": "ls"}) + "\n")
    projects = tmp_path / "projects"
    assert gather(str(repo), validate({}), projects=str(projects))["sessions"][0]["id"] == "S"  # no transcripts
    base = projects / project_dir_name(str(repo))
    base.mkdir(parents=True)
    (base / "S.jsonl").write_text("".join(json.dumps(e) + "\n" for e in MAIN))
    # a later session of the client in which no agent called a tool
    (base / "L.jsonl").write_text(json.dumps(assistant(T0 + 400, "q", [{"type": "text", "text": "hi"}])) + "\n")
    with open(decision_log.log_path(str(repo)), "a") as f:
        f.write(json.dumps({"time": iso(T0 + 400), "session": "L", "event": "SessionStart",
                            "decision": "context", "codes": [], "latency_ms": 9.0}) + "\n")
    src = gather(str(repo), validate({}), projects=str(projects))
    assert [s["id"] for s in src["sessions"]] == ["S"] and src["sessions"][0]["main"]["entries"]
    page = tmp_path / "flow.html"
    assert log_view.report_main(["--repo", str(repo), "--html", str(page), "--transcripts", str(projects)]) == 0
    assert "Agents of session S on one time axis" in page.read_text()
    assert pick_sessions([{"session": "a", "time": iso(T0)}, {"session": "b", "time": iso(T0 + 1)}], None, None,
                         has_calls=lambda s: s == "a") == ["a"]


def test_labels_drawn_by_chromium_never_meet(tmp_path):
    """The same page in headless Chromium, with the real font: the labels' drawn boxes do not meet.
    (A measuring script is added to a copy of the page; the page itself has none.)"""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    measure = ("<pre id='boxes'></pre><script>document.getElementById('boxes').textContent = JSON.stringify("
               "[...document.querySelectorAll('svg.lanes text.code')].map(t => {const r = "
               "t.getBoundingClientRect(); return [t.textContent, r.left, r.top, r.right, r.bottom];}));</script>")
    page = tmp_path / "flow.html"
    page.write_text(flow_html.render(flow_model.build(storm())).replace("</body>", measure + "</body>"))
    home = tmp_path / "chromium-home"
    home.mkdir()
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={home / 'profile'}", "--window-size=1400,1400", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")})
    text = p.stdout.split("<pre id=\"boxes\">", 1)[1].split("</pre>", 1)[0]
    boxes = json.loads(text.replace("&quot;", '"').replace("&amp;", "&"))
    assert len(boxes) >= 14 and any(b[0] == "exit 127 ×4" for b in boxes)
    assert all(b[3] - b[1] > 10 and b[4] - b[2] > 5 for b in boxes)  # drawn, with a size
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]), (a, b)


def test_a_lane_from_the_log_alone_marks_its_failed_calls():
    """Without a transcript the lane comes from the decision log: PostToolUseFailure is a failed call."""
    failure = {"time": iso(T0 + 6.5), "session": "S", "event": "PostToolUseFailure", "tool": "Bash",
               "agent_id": "a2", "agent_type": "researcher", "decision": "allow", "codes": [],
               "latency_ms": 9.0, "input": "no-such-tool --flag"}
    m = flow_model.build(source(sessions=[{"id": "S", "decisions": DECISIONS + [failure], "main": None,
                                           "subagents": []}]))
    a2 = next(ln for ln in m["sessions"][0]["lanes"] if ln["id"] == "a2")
    (failed,) = [e for e in a2["events"] if e.get("failed")]
    assert failed["text"] == "no-such-tool --flag" and failed["exit"] is None and a2["failed"] == 1
    page = flow_html.render(m)
    assert 'class="mark tool failed" data-exit=""' in page and ">failed<" in page
