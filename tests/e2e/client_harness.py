"""Drive the real Codex CLI and Gemini CLI binaries through swarmgate's installed hooks.

``CodexRepo`` and ``GeminiRepo`` are temporary git repositories wired by the real installer
(`swarmgate install PATH --client codex|gemini`), each with its own HOME (and CODEX_HOME or
GEMINI_CLI_HOME, TMPDIR: the person's real configuration is never read or touched) and
SWARMGATE_STATE_DIR. ``.run(prompt, conversations)`` starts the scripted model API on
loopback, runs the client non-interactively against it, and returns a ``ClientRun``: exit
code, output, every request the binary made, the decision log.

How each client is driven offline (shared/FACTS.md):
- Codex: config.toml in CODEX_HOME names a model provider at the stand-in (`wire_api =
  "responses"`, no retries) and a model catalog (codex_catalog.json); the project is trusted
  there; `codex exec --dangerously-bypass-approvals-and-sandbox --dangerously-bypass-hook-trust
  -C REPO PROMPT` (the hook-trust bypass stands for a person trusting the hooks in /hooks;
  tests/e2e/client_doctor_e2e_test.py goes through the real trust states instead);
- Gemini: user settings select `gemini-api-key` auth; GOOGLE_GEMINI_BASE_URL points at the
  stand-in; `gemini -p PROMPT -m gemini-2.5-pro --yolo` with GEMINI_CLI_TRUST_WORKSPACE=true
  (always -m: without it a routing classifier retries for ~95 s).

Binaries: SWARMGATE_CODEX_BIN / SWARMGATE_GEMINI_BIN, else `.e2e/node_modules/.bin/<name>`
(.ci/run installs the versions pinned in swarmgate/client_pins.json). Missing or another
version: the tests skip with the reason (fail under SWARMGATE_REQUIRE_REAL_PARTS=1).
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import gemini_api
import responses_api
from harness import E2E_BIN, RUN_TIMEOUT_S, WiredRepo, read_decisions
from loopback_api import Conversation

from swarmgate.clients import pins

HERE = Path(__file__).resolve().parent
CODEX_CATALOG = HERE / "codex_catalog.json"


class BinaryMissing(Exception):
    """The pinned client cannot be used here; the message says why and how to get it."""


def client_binary(client: str, home: Path) -> str:
    """Path of the pinned ``client`` binary, or BinaryMissing with the way to install it.

    ``--version`` runs with a throwaway HOME: Codex writes into its home even for that."""
    pin = pins()[client]
    path = os.environ.get(f"SWARMGATE_{client.upper()}_BIN") or str(E2E_BIN / pin["bin"])
    how = (f"install it with `mkdir -p .e2e && cd .e2e && npm install {pin['npm']}@{pin['version']}` in the "
           f"swarmgate checkout, or set SWARMGATE_{client.upper()}_BIN")
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise BinaryMissing(f"{client} binary not found at {path}; {how}")
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "CODEX_HOME": str(home),
           "GEMINI_CLI_HOME": str(home), "TMPDIR": str(home)}
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, env=env).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BinaryMissing(f"{path} --version failed ({e}); {how}") from e
    if pin["version"] not in out.split() and not any(w.endswith(pin["version"]) for w in out.split()):
        raise BinaryMissing(f"{path} is {out.strip()!r}, the tests are pinned to {pin['version']}; {how}")
    return path


@dataclass
class ClientRun:
    """What one non-interactive run of a client did."""
    client: str
    repo: Path
    returncode: int
    stdout: str
    stderr: str
    api: object
    token: str = ""
    notes: list = field(default_factory=list)

    @property
    def requests(self) -> list:
        return list(self.api.requests)

    def conversation(self, name: str) -> list:
        return self.api.conversation_requests(name)

    def decisions(self, **match) -> list[dict]:
        return read_decisions(self.repo, client=self.client, **match)

    def results_of(self, tool: str, conversation: str | None = None) -> list:
        """What the model got back for its calls of ``tool`` (Codex: call outputs; Gemini: function responses)."""
        reqs = self.conversation(conversation) if conversation else self.requests
        if self.client == "codex":
            ids = {c.get("call_id") for r in reqs for c in r.calls() if c.get("name") == tool}
            return [o for o in self.api.outputs(conversation) if o.call_id in ids]
        return [fr for fr in self.api.responses(conversation) if fr.name == tool]

    def describe(self) -> str:
        lines = [f"{self.client} exit {self.returncode}", f"stdout: {self.stdout[-1500:]!r}",
                 f"stderr: {self.stderr[-2500:]!r}"]
        for r in self.requests:
            last = r.tool_outputs()[-1:] if self.client == "codex" else r.function_responses()[-1:]
            lines.append(f"request [{r.conversation or 'side'}] turns={r.assistant_turns} last={last!r:.300}")
        for d in read_decisions(self.repo):
            lines.append(f"decision {d.get('client')} {d.get('event')} {d.get('tool')}/{d.get('client_tool')} "
                         f"agent={d.get('agent_type')} {d.get('decision')} {d.get('codes')}"
                         + (f" reason={d.get('reason', '')[:300]!r}" if d.get("reason") else ""))
        if self.api.errors:
            lines.append(f"script errors: {self.api.errors}")
        return "\n".join(lines)


class CodexRepo(WiredRepo):
    """A repository wired for Codex CLI, and the means to run `codex exec` in it."""

    client = "codex"

    def __init__(self, root: Path, codex_bin: str) -> None:
        self.codex_bin = codex_bin
        self.codex_home = Path(root) / "home" / ".codex"
        super().__init__(root)
        self.codex_home.mkdir(parents=True, exist_ok=True)

    def env(self, api_url: str = "", extra: dict | None = None) -> dict:
        env = self.base_env()
        env.update({"CODEX_HOME": str(self.codex_home), "SWARMGATE_E2E_KEY": "sk-e2e-not-a-key",
                    "NO_COLOR": "1", "RUST_LOG": "error"})
        env.update(extra or {})
        return env

    def write_config(self, api_url: str, trusted: bool = True, extra: str = "") -> None:
        """CODEX_HOME/config.toml: the stand-in as the model provider, the project trusted."""
        text = (f'model = "e2e-model"\nmodel_provider = "e2e"\nmodel_catalog_json = {json.dumps(str(CODEX_CATALOG))}\n'
                'check_for_update_on_startup = false\n\n'
                f'[model_providers.e2e]\nname = "e2e"\nbase_url = "{api_url}/v1"\nwire_api = "responses"\n'
                'env_key = "SWARMGATE_E2E_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n')
        if trusted:
            text += f'\n[projects.{json.dumps(str(self.repo))}]\ntrust_level = "trusted"\n'
        (self.codex_home / "config.toml").write_text(text + extra)

    def run(self, prompt: str, conversations: list[Conversation], *, args: tuple[str, ...] = (),
            bypass_hook_trust: bool = True, trusted: bool = True, timeout: float = RUN_TIMEOUT_S) -> ClientRun:
        api = responses_api.ResponsesAPI(conversations)
        with api:
            self.write_config(api.url, trusted)
            cmd = [self.codex_bin, "exec", "--dangerously-bypass-approvals-and-sandbox",
                   *(["--dangerously-bypass-hook-trust"] if bypass_hook_trust else []), "-C", str(self.repo),
                   *args, prompt]
            code, out, err, token = self.run_marked(cmd, lambda extra: self.env(api.url, extra), timeout, "codex exec")
        return ClientRun("codex", self.repo, code, out, err, api, token)


class GeminiRepo(WiredRepo):
    """A repository wired for Gemini CLI, and the means to run `gemini -p` in it."""

    client = "gemini"
    model = "gemini-2.5-pro"

    def __init__(self, root: Path, gemini_bin: str) -> None:
        self.gemini_bin = gemini_bin
        super().__init__(root)
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                        "general": {"disableAutoUpdate": True}}))

    def env(self, api_url: str = "", extra: dict | None = None) -> dict:
        env = self.base_env()
        env.update({"GEMINI_CLI_HOME": str(self.home), "NO_COLOR": "1"})
        if api_url:
            env.update({"GEMINI_API_KEY": "e2e-not-a-key", "GOOGLE_GEMINI_BASE_URL": api_url,
                        "GEMINI_CLI_TRUST_WORKSPACE": "true"})
        env.update(extra or {})
        return env

    def run(self, prompt: str, conversations: list[Conversation], *, args: tuple[str, ...] = (),
            env: dict | None = None, timeout: float = RUN_TIMEOUT_S) -> ClientRun:
        api = gemini_api.GeminiAPI(conversations)
        with api:
            cmd = [self.gemini_bin, "-p", prompt, "-m", self.model, "--yolo", *args]
            code, out, err, token = self.run_marked(cmd, lambda extra: self.env(api.url, {**(env or {}), **extra}),
                                                    timeout, "gemini -p")
        return ClientRun("gemini", self.repo, code, out, err, api, token)
