"""Drive the real Claude Code binary through swarmgate's installed hooks.

``ClaudeRepo`` is a temporary git repository with swarmgate installed into
it, a temporary HOME (transcripts land in ``<home>/.claude/projects/...``;
the real ~/.claude is never touched), a temporary TMPDIR and
SWARMGATE_STATE_DIR. ``ClaudeRepo.run(prompt, conversations)`` starts a
scripted Messages API on loopback, runs ``claude -p PROMPT --output-format
json`` against it, and returns a ``ClaudeRun``: exit code, parsed JSON
output, every request the binary made, the decision log, the transcripts.

The binary is found through SWARMGATE_CLAUDE_BIN or
``<checkout>/.e2e/node_modules/.bin/claude``; when it is missing the tests
skip with the reason (fail instead under SWARMGATE_REQUIRE_REAL_PARTS=1).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from messages_api import Conversation, MessagesAPI, Request, ToolResult

from tests.proc_env import pids_with_env

from swarmgate.clients import pins

PINNED_VERSION = pins()["claude"]["version"]  # one place for every client's pin: swarmgate/client_pins.json
CHECKOUT = Path(__file__).resolve().parents[2]
E2E_BIN = CHECKOUT / ".e2e" / "node_modules" / ".bin"  # where .ci/run installs the pinned clients
DEFAULT_BIN = E2E_BIN / "claude"
RUN_TIMEOUT_S = 90
REAPER = Path(__file__).resolve().parent / "reaper.py"
RUN_MARK = "SWARMGATE_E2E_RUN"  # env var every process of one run inherits, with the run's token


class ClaudeMissing(Exception):
    """The pinned binary cannot be used here; the message says why and how to get it."""


def claude_binary() -> str:
    """Path of the pinned Claude Code binary, or raise ClaudeMissing with the way to install it."""
    path = os.environ.get("SWARMGATE_CLAUDE_BIN") or str(DEFAULT_BIN)
    how = (f"install it with `cd {CHECKOUT} && mkdir -p .e2e && cd .e2e && npm install "
           f"@anthropic-ai/claude-code@{PINNED_VERSION}` or set SWARMGATE_CLAUDE_BIN")
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise ClaudeMissing(f"Claude Code binary not found at {path}; {how}")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ClaudeMissing(f"{path} --version failed ({e}); {how}") from e
    if PINNED_VERSION not in out:
        raise ClaudeMissing(f"{path} is {out.strip()!r}, the tests are pinned to {PINNED_VERSION}; {how}")
    return path


def swarmgate_entry() -> str:
    """The installed `swarmgate` console script beside the running interpreter."""
    cand = Path(sys.executable).parent / "swarmgate"
    if cand.exists():
        return str(cand)
    raise ClaudeMissing(f"no swarmgate entry point beside {sys.executable}; run ./install.sh first")


def agent_path() -> str:
    """PATH for the client: the caller's, without this checkout's .venv/bin (the machine's PATH,
    as a user starts the client). The hooks are called by absolute path; swarmgate's tools reach
    the agents' commands as in a user's session, through SessionStart's env-file line (the tools'
    directory, swarmgate/tools_dir.py), so a scripted `run-with-memory-cap ...` really runs, in the
    test's own slice (``[memory] slice``) and state directory.
    """
    venv_bin = str(Path(sys.executable).parent)
    return os.pathsep.join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                           if p and os.path.abspath(p) != venv_bin)


def project_dir_name(path: Path) -> str:
    """Claude Code's directory name for a project: every character but letters, digits and - as -."""
    return "".join(c if c.isalnum() or c == "-" else "-" for c in str(path))


@dataclass
class ClaudeRun:
    """What one `claude -p` run did."""
    repo: Path
    home: Path
    returncode: int
    stdout: str
    stderr: str
    api: MessagesAPI
    output: dict = field(default_factory=dict)
    token: str = ""  # the SWARMGATE_E2E_RUN value every process of this run inherited

    # the JSON result
    @property
    def session_id(self) -> str:
        return str(self.output.get("session_id", ""))

    @property
    def permission_denials(self) -> list:
        return list(self.output.get("permission_denials") or [])

    @property
    def subagent_stats(self) -> dict:
        return dict(self.output.get("subagent_stats") or {})

    @property
    def result_text(self) -> str:
        return str(self.output.get("result", ""))

    # the API side
    @property
    def requests(self) -> list[Request]:
        return list(self.api.requests)

    def conversation(self, name: str) -> list[Request]:
        return self.api.conversation_requests(name)

    def tool_results(self, name: str | None = None) -> list[ToolResult]:
        return self.api.tool_results(name)

    def results_of(self, tool_name: str, conversation: str | None = None) -> list[ToolResult]:
        """Tool results answering calls of ``tool_name`` (in one conversation or all)."""
        reqs = self.conversation(conversation) if conversation else self.requests
        ids = {b.get("id") for r in reqs for b in r.tool_uses() if b.get("name") == tool_name}
        return [tr for tr in self.tool_results(conversation) if tr.tool_use_id in ids]

    # the hook side
    def decisions(self, **match) -> list[dict]:
        """Decision-log records whose fields equal every ``match`` item (e.g. event="PreToolUse")."""
        return read_decisions(self.repo, **match)

    # transcripts
    @property
    def project_dir(self) -> Path:
        return self.home / ".claude" / "projects" / project_dir_name(self.repo)

    @property
    def transcript_path(self) -> Path:
        return self.project_dir / f"{self.session_id}.jsonl"

    def subagent_transcripts(self) -> list[Path]:
        return sorted((self.project_dir / self.session_id / "subagents").glob("agent-*.jsonl"))

    def describe(self) -> str:
        """A summary for assertion messages: exit, stderr tail, requests, decisions."""
        lines = [f"exit {self.returncode}; result: {self.result_text[:300]!r}",
                 f"stderr: {self.stderr[-1500:]!r}"]
        for r in self.requests:
            lines.append(f"request [{r.conversation or 'side'}] turns={r.assistant_turns} "
                         f"results={[(t.is_error, t.text[:160]) for t in r.last_tool_results()]}")
        for d in self.decisions():
            lines.append(f"decision {d.get('event')} {d.get('tool')} agent={d.get('agent_type')} "
                         f"{d.get('decision')} {d.get('codes')} {d.get('latency_ms')} ms"
                         + (f" reason={d.get('reason', '')[:300]!r}" if d.get("reason") else ""))
        if self.api.errors:
            lines.append(f"script errors: {self.api.errors}")
        return "\n".join(lines)


def read_decisions(repo: Path, **match) -> list[dict]:
    """Decision-log records of ``repo`` whose fields equal every ``match`` item."""
    path = Path(repo) / ".swarmgate" / "log" / "decisions.jsonl"
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if all(rec.get(k) == v for k, v in match.items()):
                out.append(rec)
    return out


class WiredRepo:
    """A temporary git repository wired with swarmgate by the real installer (for ``client``), with
    its own HOME, TMPDIR and SWARMGATE_STATE_DIR. Subclasses run one client in it."""

    client = "claude"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.repo = self.root / "repo"
        self.home = self.root / "home"
        self.tmp = self.root / "tmp"
        self.state_dir = self.root / "state"
        for d in (self.repo, self.home, self.tmp, self.state_dir):
            d.mkdir(parents=True, exist_ok=True)
        self._git("init", "-q", "-b", "main")
        self._git("config", "user.email", "e2e@example.invalid")
        self._git("config", "user.name", "e2e")
        (self.repo / "README.md").write_text("e2e test repository\n")
        self._git("add", "README.md")
        self._git("commit", "-q", "-m", "initial")
        self.install_log = ""
        self.last_token = ""
        self.install()
        # These tests check what the binary and the hooks say to each other, not hook latency
        # (bench/ measures that): on a loaded 2-core CI machine a guard overrunning its 3 s budget
        # would refuse (fail closed) and turn an unrelated scenario red.
        self.config_set("hooks", "guard_budget_ms", 15000)
        # subagents' commands run in containment cgroups under the runner's slice: a slice of this
        # test's own, with a small total, never the machine's (removed by ``cleanup``)
        self.slice = f"swarmgate-e2e-{os.getpid()}-{time.monotonic_ns() % 10**8}"
        self.config_set("memory", "slice", self.slice)
        self.config_set("memory", "total", "2G")
        self._git("add", "-A")  # start from a clean worktree, as a wired repository would be
        self._git("commit", "-q", "-m", "wire swarmgate")

    def cleanup(self) -> None:
        """Remove this repository's slice: agent cgroups (and runs) a session left behind, if any."""
        old = os.environ.get("SWARMGATE_STATE_DIR")
        os.environ["SWARMGATE_STATE_DIR"] = str(self.state_dir)
        try:
            from swarmgate.hosts import cgroups  # noqa: PLC0415 - only where cgroups are used at all
            try:
                backend = cgroups.get("auto")
            except cgroups.CgroupError:
                return
            backend.remove_slice(self.slice)
        finally:
            if old is None:
                os.environ.pop("SWARMGATE_STATE_DIR", None)
            else:
                os.environ["SWARMGATE_STATE_DIR"] = old

    def _git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.repo, check=True, capture_output=True,
                       env=self._git_env())

    def _git_env(self) -> dict:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "GIT_CONFIG_NOSYSTEM": "1"}

    # wiring
    def install(self, *extra: str) -> None:
        """Wire swarmgate into the repository with the real installer (`swarmgate install PATH --client C`)."""
        p = subprocess.run([swarmgate_entry(), "install", str(self.repo), "--client", self.client, *extra],
                           capture_output=True, text=True, env=self.env(), timeout=60)
        self.install_log = p.stdout + p.stderr
        if p.returncode != 0:
            raise AssertionError(f"swarmgate install failed ({p.returncode}):\n{self.install_log}")

    def add_agent(self, agent_type: str, description: str = "a test agent",
                  body: str = "You do what the prompt says.") -> Path:
        """Create .claude/agents/<type>.md so the type exists for Claude Code and swarmgate."""
        path = self.repo / ".claude" / "agents" / f"{agent_type}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {agent_type}\ndescription: {description}\n---\n\n{body}\n")
        return path

    def config_set(self, section: str, key: str, value) -> None:
        """Set ``key = value`` under ``[section]`` of the repository's .claude/swarmgate.toml.

        The way a person edits it: the line is replaced if the key is set there,
        else added right under the section header (which must exist).
        """
        path = self.repo / ".claude" / "swarmgate.toml"
        lines = path.read_text().splitlines()
        header = f"[{section}]"
        if header not in (ln.strip() for ln in lines):
            raise AssertionError(f"no {header} section in {path}")
        start = next(i for i, ln in enumerate(lines) if ln.strip() == header)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
                   len(lines))
        new = f"{key} = {json.dumps(value)}"
        for i in range(start + 1, end):
            if lines[i].split("=", 1)[0].strip() == key:
                lines[i] = new
                break
        else:
            lines.insert(start + 1, new)
        path.write_text("\n".join(lines) + "\n")

    @staticmethod
    def tool_path(name: str) -> str:
        """Absolute path of one of swarmgate's console scripts (for a scripted agent to call)."""
        return str(Path(sys.executable).parent / name)

    def tool(self, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run one of swarmgate's console scripts in the repository, with this repo's HOME and state."""
        return subprocess.run([self.tool_path(name), *args], cwd=self.repo, env=self.env(),
                              capture_output=True, text=True, timeout=timeout)

    def run_marked(self, cmd: list[str], make_env, timeout: float, what: str) -> tuple[int, str, str, str]:
        """(exit code, stdout, stderr, token) of ``cmd`` run under reaper.py in the repository, with the
        environment ``make_env({RUN_MARK: token})``; whatever it leaves running is killed by pid."""
        token = f"{os.getpid()}-{time.monotonic_ns()}"
        self.last_token = token  # every process of this run inherits SWARMGATE_E2E_RUN=<token>
        proc = subprocess.Popen([sys.executable, str(REAPER), *cmd], cwd=self.repo, env=make_env({RUN_MARK: token}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # the reaper kills the client and everything it left, then exits
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
            raise AssertionError(f"{what} did not finish within {timeout} s; stderr: {err[-2000:]!r}") from None
        finally:
            _kill_marked(token)
        return proc.returncode, out, err, token

    def base_env(self) -> dict:
        """A clean environment: nothing from the caller's except PATH, the locale and the test mark."""
        env = {
            "PATH": agent_path(),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "SWARMGATE_STATE_DIR": str(self.state_dir),
            "PYTHONDONTWRITEBYTECODE": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        if "SWARMGATE_TEST_SESSION" in os.environ:  # the test session's leftover check (tests/conftest.py)
            env["SWARMGATE_TEST_SESSION"] = os.environ["SWARMGATE_TEST_SESSION"]
        return env

    def env(self, api_url: str = "", extra: dict | None = None) -> dict:
        env = self.base_env()
        env.update(extra or {})
        return env


class ClaudeRepo(WiredRepo):
    """A temporary repository wired with swarmgate, and the means to run Claude Code in it."""

    def __init__(self, root: Path, claude_bin: str) -> None:
        self.claude_bin = claude_bin
        super().__init__(root)

    def env(self, api_url: str = "", extra: dict | None = None) -> dict:
        """A clean environment, and the scripted API's address when there is one."""
        env = self.base_env()
        if api_url:
            env.update({
                "ANTHROPIC_BASE_URL": api_url,
                "ANTHROPIC_API_KEY": "sk-e2e-not-a-key",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "IS_SANDBOX": "1",  # root may use bypassPermissions only in a sandbox
            })
        env.update(extra or {})
        return env

    # running
    def run(self, prompt: str, conversations: list[Conversation], *, args: tuple[str, ...] = (),
            env: dict | None = None, timeout: float = RUN_TIMEOUT_S) -> ClaudeRun:
        """Run `claude -p PROMPT` against a scripted API; kill whatever it leaves running."""
        api = MessagesAPI(conversations)
        with api:
            cmd = [self.claude_bin, "-p", prompt, "--output-format", "json",
                   "--permission-mode", "bypassPermissions", *args]
            code, out, err, token = self.run_marked(cmd, lambda extra: self.env(api.url, {**(env or {}), **extra}),
                                                    timeout, "claude -p")
        try:
            output = json.loads(out) if out.strip() else {}
        except ValueError:
            output = {}
        return ClaudeRun(self.repo, self.home, code, out, err, api,
                         output if isinstance(output, dict) else {}, token)


    def run_streaming(self, prompt: str, conversations: list[Conversation], *, until, args: tuple[str, ...] = (),
                      env: dict | None = None, timeout: float = RUN_TIMEOUT_S) -> ClaudeRun:
        """Run `claude -p --input-format stream-json` with ``prompt`` as the first message on stdin and
        stdin kept open (as an interactive session would stay), until ``until(api)`` is true (checked
        every 0.2 s) or ``timeout``; then close stdin and let it end. ``output`` is the last result
        line of its stream-json output. Everything it left running is killed, as with ``run``."""
        api = MessagesAPI(conversations)
        token = f"{os.getpid()}-{time.monotonic_ns()}"
        self.last_token = token
        env = {**(env or {}), RUN_MARK: token}
        with api:
            cmd = [sys.executable, str(REAPER), self.claude_bin, "-p", "--input-format", "stream-json",
                   "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", *args]
            proc = subprocess.Popen(cmd, cwd=self.repo, env=self.env(api.url, env), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            chunks: dict = {"out": [], "err": []}

            def drain(stream, into: list) -> None:   # its output must flow, or the client blocks writing it
                for line in stream:
                    into.append(line)

            readers = [threading.Thread(target=drain, args=(proc.stdout, chunks["out"]), daemon=True),
                       threading.Thread(target=drain, args=(proc.stderr, chunks["err"]), daemon=True)]
            for t in readers:
                t.start()
            try:
                proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
                proc.stdin.flush()
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline and proc.poll() is None and not until(api):
                    time.sleep(0.2)
                proc.stdin.close()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.terminate()   # the reaper kills claude and what it left
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                for t in readers:
                    t.join(10)
            finally:
                _kill_marked(token)
        out, err = "".join(chunks["out"]), "".join(chunks["err"])
        output: dict = {}
        for line in out.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("type") == "result":
                output = rec
        return ClaudeRun(self.repo, self.home, proc.returncode, out, err, api, output, token)


def marked_pids(token: str) -> list[int]:
    """Processes whose environment carries a run's token (the backstop behind the reaper)."""
    return pids_with_env(RUN_MARK, token)


def _kill_marked(token: str) -> None:
    """Kill, by pid, every process that still carries this run's token; wait till they are gone."""
    deadline = time.monotonic() + 10
    while True:
        pids = marked_pids(token)
        if not pids:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"processes {pids} of this run survive SIGKILL")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
