"""`swarmgate report --html` on a session the real client ran, rendered in headless Chromium.

The session (recorded here, once, through the real binary): the main agent dispatches t2 before its
dependency (D30 refuses), dispatches t1 (subagent A: a capped run that fits), verifies and closes t1,
dispatches t2 (subagent B: `cargo test --workspace` refused by B01, then a run that hits its 48M cap
on a real cgroup: exit 250), and judges t2. The report of that session must show, in the page
Chromium rendered: one lane per agent, the refusal codes, the OOM mark, and the token totals the
transcripts' usage fields add up to.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from messages_api import Conversation, bash, dispatch, done

from tests.hosts.cgroups import cgroups_writable, need_real, remove_slice

pytestmark = pytest.mark.e2e

WORKER = "e2e-worker"
HEAVY_LINE = "heavy test: do not run"
HOG = "import sys\nb = bytearray(int(sys.argv[1]) << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n"


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path:
        return path
    why = "headless Chromium is not installed (apt-get install chromium)"
    pytest.skip(why)


def render(page: Path, out: Path, what: str) -> subprocess.CompletedProcess:
    """Run headless Chromium on the page with a private HOME and profile (nothing left in the real HOME)."""
    home = out.parent / "chromium-home"
    home.mkdir(exist_ok=True)
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={home / 'profile'}", "--window-size=1400,2600"]
    args += ["--dump-dom"] if what == "dom" else [f"--screenshot={out}"]
    p = subprocess.run([*args, page.as_uri()], capture_output=True, text=True, timeout=120,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
                            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")})
    if what == "dom":
        out.write_text(p.stdout)
    return p


def transcript_tokens(paths: list[Path]) -> int:
    """Tokens of the transcripts, counted here independently of the report: once per message id."""
    seen, total = set(), 0
    for path in paths:
        for line in path.read_text().splitlines():
            e = json.loads(line)
            msg = e.get("message") if isinstance(e.get("message"), dict) else {}
            if e.get("type") == "assistant" and isinstance(msg.get("usage"), dict) and msg.get("id") not in seen:
                seen.add(msg.get("id"))
                total += sum(int(msg["usage"].get(k) or 0) for k in (
                    "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return total


def heavy_turn(turn, tokens: int):
    turn.input_tokens = tokens  # varied usage, so per-agent totals differ
    return turn


def record_session(claude_repo, slice_name: str):
    repo = claude_repo.repo
    (repo / "hog.py").write_text(HOG)
    claude_repo.add_agent(WORKER)
    claude_repo.config_set("write", WORKER, ["out/**"])
    for key, value in (("total", "256M"), ("margin", "64M"), ("slice", slice_name)):
        claude_repo.config_set("memory", key, value)
    for args in (("new", "r1", "--goal", "a parser, then wire it in", "--exit", "both verified"),
                 ("add-task", "r1", "t1", "-d", "write the parser", "--inputs-ready", "yes",
                  "--verify", "test -s out/parser.txt"),
                 ("add-task", "r1", "t2", "-d", "wire it in", "--deps", "t1", "--verify", "test -s out/wired.txt")):
        p = claude_repo.tool("swarmgate", "records", *args)
        assert p.returncode == 0, p.stdout + p.stderr
    sg, cap = claude_repo.tool_path("swarmgate"), claude_repo.tool_path("run-with-memory-cap")
    t2 = f"script:flow-b\ntask: t2 wire the parser in\n{HEAVY_LINE}"
    return claude_repo.run("script:flow-main", [
        Conversation("script:flow-main", [
            heavy_turn(dispatch(WORKER, t2, description="wire it in"), 1800),                  # D30: t1 open
            heavy_turn(dispatch(WORKER, f"script:flow-a\ntask: t1 write the parser\n{HEAVY_LINE}",
                                description="write the parser"), 2100),
            heavy_turn(bash(f"{sg} records verify t1 && {sg} records verdict r1 t1 close"), 2400),
            heavy_turn(dispatch(WORKER, t2, description="wire it in"), 2700),
            heavy_turn(bash(f"{sg} records verdict r1 t2 next-round --reason 'ran out of memory at 48M'"), 3000),
            done("round r1: t1 closed, t2 to the next round"),
        ]),
        Conversation("script:flow-a", [
            heavy_turn(bash(f"{cap} 64M --label parser-build -- python3 hog.py 16 && mkdir -p out && "
                            f"echo parser > out/parser.txt"), 900),
            done("parser written"),
        ]),
        Conversation("script:flow-b", [
            heavy_turn(bash("cargo test --workspace"), 600),                                      # B01
            heavy_turn(bash(f"{cap} 48M --label wire-test -- python3 hog.py 200"), 700),          # OOM, 250
            done("the wiring test ran out of memory under its 48M cap"),
        ]),
    ], timeout=150)


def test_report_of_a_real_session_renders_in_chromium(claude_repo, tmp_path):
    need_real(cgroups_writable())
    chromium()
    slice_name = f"swarmgate-e2e-flow-{os.getpid()}"
    try:
        run = record_session(claude_repo, slice_name)
    finally:
        remove_slice(slice_name)
    why = run.describe()
    assert run.returncode == 0, why
    # the session did what the scenario says
    d30, first, second = run.results_of("Agent", "script:flow-main")
    assert d30.is_error and "[D30]" in d30.text and not first.is_error and not second.is_error, why
    refused, oom = run.results_of("Bash", "script:flow-b")
    assert refused.is_error and "[B01]" in refused.text, why
    assert "exit 250" in oom.text or "hit its own" in oom.text or "250" in oom.text, oom.text
    subs = run.subagent_transcripts()
    assert len(subs) == 2, why

    page = tmp_path / "report.html"
    p = claude_repo.tool("swarmgate", "report", "--repo", str(claude_repo.repo), "--session", run.session_id,
                         "--html", str(page), "--transcripts", str(claude_repo.home / ".claude" / "projects"))
    assert p.returncode == 0, p.stdout + p.stderr
    html = page.read_text()
    for outside in ("http://", "https://", "src=", "@import", "<script", "<link"):
        assert outside not in html, f"the page reaches outside itself: {outside}"

    dom_file = tmp_path / "dom.html"
    r = render(page, dom_file, "dom")
    assert r.returncode == 0, r.stderr[-2000:]
    dom = dom_file.read_text()
    lanes = [seg.split('"')[0] for seg in dom.split('class="lane" data-agent="')[1:]]
    assert lanes[0] == "main" and sorted(lanes[1:]) == sorted(p.name[len("agent-"):-len(".jsonl")] for p in subs), lanes
    assert 'data-codes="D30"' in dom and 'data-codes="B01' in dom, "the refusal codes are drawn in the lanes"
    assert "OOM: hit its own cap (250)" in dom and "wire-test" in dom and "parser-build" in dom
    total = transcript_tokens([run.transcript_path, *subs])
    assert total > 10_000
    assert f"<td class=\"num\" data-total=\"all agents\"><b>{total:,}</b></td>" in dom, total
    assert f"<b>{total:,}</b><span>tokens</span>" in dom  # the header card
    assert 'data-task="t1" data-verdict="close"' in dom and 'data-task="t2" data-verdict="next-round"' in dom
    assert "verify: pass" in dom
    shot = tmp_path / "report.png"
    r = render(page, shot, "png")
    assert r.returncode == 0 and shot.stat().st_size > 20_000, r.stderr[-2000:]
    keep = os.environ.get("SWARMGATE_REPORT_KEEP")  # a directory: keep the page and the screenshot to look at
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(page, Path(keep) / "report.html")
        shutil.copy(shot, Path(keep) / "report.png")
