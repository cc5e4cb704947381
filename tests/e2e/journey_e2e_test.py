"""The journey of a new user as one test (issue 22, item 8), through the real Claude Code binary.

A fresh `git clone` of this checkout's HEAD; the README's first command, `./install.sh --into REPO`,
run from that clone (or, for pipx, `pipx install` of the clone's wheel, then `swarmgate install
REPO`) into a sample repository (Python and Rust files, a Makefile, package.json
scripts, tests/unit and tests/integration; `pytest tests/integration` configured as heavy); the
client started with the machine's ordinary PATH (no venv on it) and a private HOME/config dir. One
session with streaming input kept open (so that a reminder can wake the idle main agent, as in an
interactive session) walks the flow, and each step asserts its effect:

1. the main agent opens the round with `swarmgate records`, runs `dispatch-prompt implementer` and
   dispatches with its skeleton, filled in: the dispatch goes through (a subagent starts);
2. the subagent writes a file in its area, is refused the heavy run (B01), and hands back with
   its report (agent-common.md: "Hand back once. Your last message is the report");
3. the main agent pastes the refusal's way-out, its `<...>` filled in: the capped run ran (the
   file the integration suite writes exists; the runner's ledger has the run);
4. the main agent sets a reminder with `remind` and goes idle: it is woken with the message;
5. it commits through `gate-staged`: the commit exists;
6. it closes the round with `swarmgate records verify` / `verdict`: the verdict is in the record;
7. the user runs `swarmgate doctor REPO`, `swarmgate report --html OUT` (read back by headless
   Chromium: the page holds the session's lanes) and `swarmgate log` (shows the refusal).
"""
from __future__ import annotations

import json
import re
import shutil
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness import CHECKOUT, ClaudeRepo, agent_path
from messages_api import Conversation, Request, bash, dispatch, done, tool

pytestmark = pytest.mark.e2e

HEAVY = "pytest tests/integration"
RAN = "integration-ran.txt"       # what the integration suite writes when it really ran
SUB = "script:journey-sub"
MAIN = "script:journey"

SAMPLE = {
    "src/app.py": "def add(a, b):\n    return a + b\n",
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    "Cargo.toml": "[package]\nname = \"sample\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n"
                  "[lib]\npath = \"src/lib.rs\"\n",
    "Makefile": "check:\n\tpytest tests/unit\n\ncheck-full:\n\tcargo test --workspace\n\tpytest tests/integration\n",
    "package.json": json.dumps({"name": "sample", "private": True,
                                "scripts": {"test": "pytest tests/unit", "test:full": "make check-full"}},
                               indent=2) + "\n",
    "tests/unit/test_app.py": "import sys, pathlib\n"
                              "sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / 'src'))\n"
                              "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/integration/test_flow.py": "import pathlib\n\n\ndef test_flow():\n"
                                      f"    pathlib.Path(__file__).parents[2].joinpath({RAN!r}).write_text('ran\\n')\n",
}


class JourneyRepo(ClaudeRepo):
    """A sample repository wired from a fresh clone of this checkout: by the README's
    `./install.sh --into REPO` (``kind="regular"``), or by `swarmgate install REPO` of a pipx install
    of the clone's wheel (``kind="pipx"``)."""

    def __init__(self, root: Path, claude_bin: str, kind: str = "regular") -> None:
        self.kind = kind
        super().__init__(root, claude_bin)

    def install(self, *extra: str) -> None:
        for rel, text in SAMPLE.items():
            (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / rel).write_text(text)
        self._git("add", "-A")
        self._git("commit", "-q", "-m", "sample project")
        self.clone = self.root / "swarmgate"
        head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        subprocess.run(["git", "clone", "-q", str(CHECKOUT), str(self.clone)], check=True, capture_output=True,
                       env=self._git_env())
        subprocess.run(["git", "-C", str(self.clone), "checkout", "-q", head], check=True, capture_output=True)
        env = self.base_env()
        if self.kind == "pipx":
            self.tools = self._pipx_install() / "swarmgate-tools"
            cmd, where = [str(self.root / "bin" / "swarmgate"), "install", str(self.repo)], self.repo
        else:
            self.tools = self.clone / ".venv" / "swarmgate-tools"
            cmd, where = ["./install.sh", "--into", str(self.repo)], self.clone
        p = subprocess.run(cmd, cwd=where, capture_output=True, text=True, env=env, timeout=600)
        self.install_log = p.stdout + p.stderr
        if p.returncode != 0:
            raise AssertionError(f"{cmd} failed ({p.returncode}):\n{self.install_log}")

    def _pipx_install(self) -> Path:
        """pipx (the test extras' one: the current release) installs a wheel of the clone; its venv."""
        pipx = Path(sys.executable).parent / "pipx"
        if not pipx.exists():
            pytest.skip(f"no pipx beside {sys.executable} (the test extras: ./install.sh --dev)")
        out = self.root / "wheel"
        p = subprocess.run([sys.executable, "-m", "pip", "-q", "wheel", "--no-deps", "--no-build-isolation", "-w",
                            str(out), str(self.clone)], capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        (whl,) = out.glob("swarmgate-*.whl")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "VIRTUAL_ENV", "CLAUDE"))}
        env.update(HOME=str(self.home), PIPX_HOME=str(self.root / "pipx"), PIPX_BIN_DIR=str(self.root / "bin"),
                   PIPX_MAN_DIR=str(self.root / "man"))
        p = subprocess.run([str(pipx), "install", "--python", os.path.realpath(sys.executable), str(whl)],
                           capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        return self.root / "pipx" / "venvs" / "swarmgate"

    def tool_path(self, name: str) -> str:   # the user's commands: from the fresh install
        return str(self.tools / name)


def _fill(text: str, words: dict[str, str]) -> str:
    """Fill each `<...>` placeholder as a model would: with words of its own for that field."""
    def one(m: re.Match) -> str:
        inner = m.group(1)
        for key, value in words.items():
            if key in inner:
                return value
        return "the integration suite of the sample"
    return re.sub(r"<([^<>]+)>", one, text)


def _woken(api) -> bool:
    return any(r.conversation == MAIN and r.user_texts() and "swarmgate woke you" in r.user_texts()[-1]
               and "look at the integration run" in r.user_texts()[-1] for r in api.requests)


@pytest.fixture(params=["regular", "pipx"])
def journey_repo(request, tmp_path: Path, claude_bin: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    repo = JourneyRepo(tmp_path, claude_bin, request.param)
    yield repo
    repo.cleanup()


def test_the_journey(journey_repo):
    repo = journey_repo
    if not shutil.which("pytest", path=agent_path()):
        pytest.skip("no pytest on the machine's PATH for the sample's integration suite")
    assert "check it with:" in repo.install_log, repo.install_log
    # the sample's heavy suite: the integration tests (the guards refuse it to a subagent)
    text = (repo.repo / ".claude" / "swarmgate.toml").read_text()
    text = text.replace('patterns = ["cargo test --workspace",', f'patterns = ["{HEAVY}", "cargo test --workspace",', 1)
    (repo.repo / ".claude" / "swarmgate.toml").write_text(text)
    repo._git("add", "-A")
    repo._git("commit", "-q", "-m", "the integration suite is heavy")

    words = {"task": "t1 write src/feature.py", "inputs": "src/app.py", "exit criterion": "src/feature.py exists",
             "report": "what you wrote and what you could not run", "path": "none",
             "what you run": "tests/integration of the sample", "how much": "all of it",
             "why": "the subagent was refused it and handed it back", "reason": "the subagent handed it back"}
    seen: dict = {}

    def dispatch_with_skeleton(req: Request):
        skeleton = req.last_tool_results()[0].text
        seen["skeleton"] = skeleton
        prompt = _fill(skeleton, words)
        return dispatch("implementer", f"{SUB}\n{prompt}")

    def hand_back(req: Request):
        refusal = req.last_tool_results()[0].text
        seen["refusal"] = refusal
        return done(f"Report: wrote src/feature.py. `{HEAVY}` was refused to me:\n{refusal}\n"
                    "Left: the integration run.")

    def paste_the_way_out(req: Request):
        report = req.last_tool_results()[0].text
        seen["main_refusal"] = report
        m = re.search(r"Way out: run `([^`]+)`", report) or re.search(r"`([^`]*run-with-memory-cap[^`]*)`", report)
        cmd = _fill(m.group(1), words) if m else "echo no-way-out-found; exit 9"
        seen["pasted"] = cmd
        return bash(cmd, "the heavy run, through its way-out")

    remind = "remind 3s 'look at the integration run'"
    commit = "git add src/feature.py && gate-staged && git commit -q -m 'add feature' && git log -1 --format=%s"
    close = "swarmgate records verify t1 && swarmgate records verdict r1 t1 close && swarmgate records validate"
    feature = repo.repo / "src" / "feature.py"
    run = repo.run_streaming(f"{MAIN} go", [
        Conversation(MAIN, [
            bash("swarmgate records new r1 --goal 'a feature' --exit 'feature committed' && "
                 "swarmgate records add-task r1 t1 -d 'write src/feature.py' --inputs-ready yes "
                 "--verify 'test -f src/feature.py'", "open the round"),
            bash("dispatch-prompt implementer", "the skeleton"),
            dispatch_with_skeleton,
            bash(HEAVY, "the integration run the subagent left"),     # the main agent unprefixed: B01
            paste_the_way_out,
            bash(commit, "commit through the gate"),
            bash(close, "close the round"),
            bash(remind, "a reminder"),
            done("waiting for the reminder"),      # the turn ends: idle, till the reminder wakes it
            done("woken: round closed"),
        ]),
        Conversation(SUB, [
            tool("Write", {"file_path": str(feature), "content": "def feature():\n    return 42\n"}),
            bash(HEAVY, "the integration suite"),
            hand_back,
        ]),
    ], until=_woken, timeout=150)
    why = run.describe() + f"\nseen: {seen}"

    opened, skeleton = run.results_of("Bash", MAIN)[:2]
    assert not opened.is_error, why
    # 1. dispatched with dispatch-prompt's skeleton: the subagent ran (its conversation exists)
    assert not skeleton.is_error and "task: <" in skeleton.text and "heavy test: do not run" in skeleton.text, why
    (sent,) = [b["input"] for r in run.conversation(MAIN)[3:4] for b in r.tool_uses() if b.get("name") == "Agent"]
    assert sent["subagent_type"] == "implementer" and "<" not in sent["prompt"], sent
    assert "task: t1 write src/feature.py\n" in sent["prompt"] and "heavy test: do not run" in sent["prompt"], sent
    assert run.conversation(SUB) and "task: t1 write src/feature.py" in run.conversation(SUB)[0].all_text, why
    assert len(run.decisions(event="SubagentStart")) == 1, why
    # 2. the subagent wrote its file, was refused the heavy run (B01), handed back its report
    write_res, heavy_res = run.results_of("Write", SUB) + run.results_of("Bash", SUB)
    assert not write_res.is_error and feature.read_text() == "def feature():\n    return 42\n", why
    assert heavy_res.is_error and "[B01]" in heavy_res.text, why
    (agent_res,) = run.results_of("Agent", MAIN)
    assert not agent_res.is_error and "Report: wrote src/feature.py" in agent_res.text, why
    # 3. the way-out, pasted: the capped run ran
    main_refused, pasted = run.results_of("Bash", MAIN)[2:4]
    assert main_refused.is_error and "[B01]" in main_refused.text, why
    assert "<" not in seen["pasted"] and "run-with-memory-cap" in seen["pasted"], seen
    assert not pasted.is_error and "1 passed" in pasted.text, why
    assert (repo.repo / RAN).read_text() == "ran\n", why
    # 4. the reminder woke the idle main agent
    reminder = run.results_of("Bash", MAIN)[6]
    assert not reminder.is_error and "set for" in reminder.text, why
    assert _woken(run.api), why
    listed = repo.tool("remind", "list", "--all").stdout
    assert "delivered (woke the idle main agent (asyncRewake))" in listed, listed
    # 5. the commit through the gate exists
    commit_res = run.results_of("Bash", MAIN)[4]
    assert not commit_res.is_error, why
    log1 = subprocess.run(["git", "-C", str(repo.repo), "log", "-1", "--format=%s", "--name-only"],
                          capture_output=True, text=True).stdout
    assert log1.startswith("add feature") and "src/feature.py" in log1, log1
    # 6. the round closed in the record
    close_res = run.results_of("Bash", MAIN)[5]
    assert not close_res.is_error, why
    assert "ok " in close_res.text and "(1 tasks, 0 open)" in close_res.text, why
    record = (repo.repo / "records" / "r1.md").read_text()
    assert "| t1 | write src/feature.py | - | yes | 1 | close |" in record, record
    # 3, again: the runner's ledger has the capped run, with its outcome
    runs = [json.loads(ln) for ln in (repo.state_dir / "runner" / "runs.jsonl").read_text().splitlines()]
    assert [(r["command"], r["outcome"], r["session"]) for r in runs] == [(HEAVY, "ok", run.session_id)], runs

    # 7. the user: doctor (the line the install printed), report --html (read by headless Chromium), log
    (check,) = [ln.split("check it with:", 1)[1].strip() for ln in repo.install_log.splitlines()
                if "check it with:" in ln]
    doctor = subprocess.run(check, shell=True, cwd=repo.repo, env=repo.base_env(), capture_output=True, text=True,
                            timeout=120)
    assert doctor.returncode == 0 and "all good" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "programs resolve on the agents' PATH" in doctor.stdout, doctor.stdout
    page = repo.root / "flow.html"
    report = subprocess.run([repo.tool_path("swarmgate"), "report", "--html", str(page)], cwd=repo.repo,
                            env=repo.base_env(), capture_output=True, text=True, timeout=120)
    assert report.returncode == 0 and "2 lane(s), 1 runner job(s)" in report.stdout, report.stdout + report.stderr
    dom = _dump_dom(page, repo.base_env())
    assert f"Agents of session {run.session_id} on one time axis" in dom, dom[:3000]
    lanes = re.findall(r'class="lane" data-agent="([^"]+)" data-type="([^"]+)"', dom)
    assert [t for _, t in lanes] == ["main", "implementer"], lanes
    assert "Round r1" in dom and "B01" in dom, dom[:3000]
    log = subprocess.run([repo.tool_path("swarmgate"), "log"], cwd=repo.repo, env={**repo.base_env(), "COLUMNS": "80"},
                         capture_output=True, text=True, timeout=60)
    assert log.returncode == 0, log.stdout + log.stderr
    lines = log.stdout.splitlines()
    assert any("implementer" in ln and "deny B01" in ln for ln in lines), log.stdout
    assert any("main" in ln and "deny B01" in ln for ln in lines), log.stdout
    assert max(len(ln) for ln in lines) <= 80, [ln for ln in lines if len(ln) > 80]
    print(_trace(run, [MAIN, SUB]) + f"\nmain woken by its reminder when idle: {_woken(run.api)}; "
          f"commit: {log1.splitlines()[0]}\nuser: doctor rc {doctor.returncode}; report --html: "
          f"{report.stdout.strip().splitlines()[-1]}; log: {len(lines)} lines, widest {max(map(len, lines))}")


def _trace(run, names: list[str]) -> str:
    """The journey as it ran (shown with ``pytest -s``): each agent's tool calls, in order, with
    the first line of what the client gave back, so a closing note can quote the walk itself."""
    out = []
    for name in names:
        results = {tr.tool_use_id: tr for tr in run.tool_results(name)}
        for use in run.conversation(name)[-1].tool_uses():   # the last request holds every turn
            got = results.get(use.get("id"))
            args = use.get("input") or {}
            what = args.get("command") or args.get("subagent_type") or args.get("file_path") or ""
            lines = got.text.strip().splitlines() if got else ["(no result)"]
            said = next((ln for ln in lines if re.search(r"\[[A-Z]\d\d\]", ln)), lines[0] if lines else "")
            mark = "error" if got is not None and got.is_error else "ok"
            out.append(f"{name} {use.get('name')}: {what[:150]}\n    -> {mark}: {said.strip()[:120]}")
    return "\n".join(out)


def _dump_dom(page: Path, env: dict) -> str:
    """The page as headless Chromium builds it (its DOM after the scripts ran)."""
    chromium = shutil.which("chromium", path=env["PATH"]) or shutil.which("chromium-browser", path=env["PATH"])
    if not chromium:
        pytest.skip("no chromium on the machine's PATH to read the report page")
    short = Path(tempfile.mkdtemp(prefix="sg-chr-", dir="/tmp"))   # Chromium's socket path must be short
    try:
        p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={short / 'u'}",
                            "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                           env={**env, "TMPDIR": str(short), "HOME": str(short)})
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert p.returncode == 0 and "</html>" in p.stdout, (p.returncode, p.stderr[-2000:])
    return p.stdout
