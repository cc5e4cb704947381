"""Claude Code's hook protocol: parse the stdin payload, render the answer (SPEC §3).

Parsing only; no judging. Facts observed from Claude Code 2.1.332:
- every event: session_id, transcript_path, cwd, hook_event_name;
- tool events: tool_name, tool_input, tool_use_id (PostToolUse: tool_response);
- inside a subagent, tool events carry agent_id and agent_type: their absence
  means the main agent;
- any exit code other than 0 and 2, a crash or a timeout lets the call proceed,
  so the hook always answers with exit 0 + JSON (or 2 + stderr as fallback).
"""
from __future__ import annotations

from swarmgate import fast_json as json  # json's results without json's import cost

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Callable
    from typing import TypeVar

    T = TypeVar("T")


EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SubagentStart", "SubagentStop", "Stop",
          "UserPromptSubmit", "PreCompact", "Notification", "SessionEnd", "TaskCreated", "TaskCompleted",
          "TeammateIdle")
CONTEXT_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SubagentStart",
                  "UserPromptSubmit")
STOP_EVENTS = ("Stop", "SubagentStop")


class HookInputError(Exception):
    """The payload cannot be read; the message names what is wrong."""


class HookEvent:
    """A parsed hook payload in swarmgate's event model (Claude Code's names: every client's
    adapter maps its own events and tools onto these). ``memo`` caches derived parses shared by
    guards. ``client`` names the client that sent it; ``client_tool`` is that client's own tool
    name when it differs from ``tool_name``; ``written`` lists the paths a file tool writes when
    the adapter read them from somewhere else than ``file_path`` (Codex's apply_patch)."""
    __slots__ = ("name", "payload", "session_id", "cwd", "transcript_path", "tool_name",
                 "tool_input", "agent_id", "agent_type", "repo", "memo", "client", "client_tool", "written")

    def __init__(self, name: str, payload: dict, repo: str, client: str = "claude") -> None:
        self.name = name
        self.payload = payload
        self.session_id = str(payload.get("session_id") or "")
        self.cwd = str(payload.get("cwd") or "")
        self.transcript_path = str(payload.get("transcript_path") or "")
        tool = payload.get("tool_name")
        self.tool_name = tool if isinstance(tool, str) else None
        ti = payload.get("tool_input")
        self.tool_input = ti if isinstance(ti, dict) else {}
        aid = payload.get("agent_id")
        self.agent_id = str(aid) if aid else None
        atype = payload.get("agent_type")
        self.agent_type = str(atype) if atype else None
        self.repo = repo
        self.memo: dict = {}
        self.client = client
        self.client_tool: str | None = None
        self.written: list | None = None

    @property
    def is_subagent(self) -> bool:
        """Tool events from inside a subagent carry agent_id/agent_type."""
        return bool(self.agent_id or self.agent_type)

    @property
    def agent_key(self) -> str:
        """The subagent's own name: what its containment cgroup and its sightings are keyed by."""
        return self.agent_id or self.agent_type or "subagent"

    @property
    def root(self) -> str:
        """The directory path rules are judged relative to: the linked git worktree of this
        repository the agent works in (a subagent dispatched with isolation "worktree": its
        ``cwd`` is the worktree, CLAUDE_PROJECT_DIR the project), else the repository
        (hooks/agent_worktree.py)."""
        r = self.memo.get("work_root")
        if r is None:
            from swarmgate.hooks.agent_worktree import work_root
            r = self.memo["work_root"] = work_root(self.cwd, self.repo)
        return r

    @property
    def actor(self) -> str:
        """The agent type acting ("main" for the main agent)."""
        return self.agent_type or ("subagent" if self.agent_id else "main")

    @property
    def shell_command(self) -> str | None:
        """The shell text of a Bash or Monitor call."""
        if self.tool_name in ("Bash", "Monitor"):
            cmd = self.tool_input.get("command")
            return cmd if isinstance(cmd, str) else None
        return None

    @property
    def file_paths(self) -> list[str]:
        """Paths a file tool writes (Write/Edit/MultiEdit: file_path; NotebookEdit: notebook_path)."""
        if self.written is not None:
            return list(self.written)
        out = []
        for key in ("file_path", "notebook_path"):
            v = self.tool_input.get(key)
            if isinstance(v, str) and v:
                out.append(v)
        return out

    def derived(self, key: str, build: Callable[[], T]) -> T:
        """Compute a derived parse once per event (e.g. the bash tree)."""
        if key not in self.memo:
            self.memo[key] = build()
        return self.memo[key]


def under_claude_code() -> bool:
    """The hook runs under Claude Code (it sets CLAUDECODE=1 in its hooks' environment, which an
    agent's commands cannot change): the client that runs a rewritten call (updatedInput). A hook
    called any other way (a test, `swarmgate replay`, another client) makes no cgroup and rewrites
    nothing. A self-test case judges as if under it."""
    from swarmgate import lean_os as os
    return os.environ.get("CLAUDECODE") == "1" or os.environ.get("SWARMGATE_SELFTEST_CASE") == "1"


def load_object(text: str) -> dict:
    """The JSON object on stdin; HookInputError names what is wrong."""
    if not text or not text.strip():
        raise HookInputError("hook input on stdin is empty (expected one JSON object)")
    try:
        payload = json.loads(text)
    except ValueError as e:
        raise HookInputError(f"hook input is not valid JSON: {e}") from None
    if "\\ud" in text or "\\uD" in text:  # only a JSON escape can carry a surrogate in
        payload = without_lone_surrogates(payload)
    if not isinstance(payload, dict):
        raise HookInputError(f"hook input is a JSON {type(payload).__name__}, expected an object")
    return payload


def event_from(event_name: str, payload: dict, repo: str | None = None, client: str = "claude") -> HookEvent:
    """A HookEvent from a payload already in swarmgate's event model (Claude Code's names)."""
    for key in ("tool_input",):
        if key in payload and not isinstance(payload[key], dict):
            raise HookInputError(f"hook input field `{key}` is a {type(payload[key]).__name__}, expected an object")
    tool_events = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
    if event_name in tool_events and not isinstance(payload.get("tool_name"), str):
        raise HookInputError(f"{event_name} hook input lacks `tool_name`")
    if repo is None:
        from swarmgate.config import find_repo
        repo = find_repo(payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload.get("cwd") else None)
    return HookEvent(event_name, payload, repo, client)


def parse_payload(event_name: str, text: str, repo: str | None = None) -> HookEvent:
    """The payload on stdin as a HookEvent; HookInputError names what is wrong."""
    return event_from(event_name, load_object(text), repo)


def without_lone_surrogates(value: object) -> object:
    """``value`` with every lone UTF-16 surrogate in its strings (keys too) replaced by U+FFFD.

    JSON may escape a lone surrogate (`"x\\ud800"`); Python decodes it into a str that no codec
    will encode, so the first guard that writes, logs or stats it would crash. The client encodes
    such a string as UTF-8 before it runs or writes anything, which also turns the lone surrogate
    into U+FFFD: judging the replaced text judges what will run. A valid pair (an escaped emoji)
    becomes its character."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    return value


# --- what a decision means for the call: the one place for the stop rule ------------------

def stop_blocked(decision: str, stop_hook_active: bool) -> bool:
    """A refusal blocks a stop only once: when a stop hook has already continued this stop
    (``stop_hook_active``), the stop goes through with the reasons as a note, never forever."""
    return decision == "deny" and not stop_hook_active


def stop_word(stop_hook_active: bool) -> str:
    """The decision log's word for a refused stop: "block", or "allow" once it goes through."""
    return "allow" if stop_hook_active else "block"


def goes_ahead(event_name: str, decision: str, stop_hook_active: bool = False) -> bool:
    """Whether the combined decision lets the call go ahead: not denied (an asked tool call may
    run once the person agrees, so it goes ahead), and a stop not blocked (a refused stop goes
    through once a stop hook has continued it). A deferred call (headless: it waits for a person
    who decides later) does not go ahead now. A PostToolUse the hook blocks does not go ahead
    either, though its tool has run: one rule for every event. The engine runs the guards'
    acts only then (swarmgate/guard.py)."""
    if event_name in STOP_EVENTS:
        return not stop_blocked(decision, stop_hook_active)
    return decision not in ("deny", "defer")


def render(event_name: str, decision: str, reason: str, context: str, note: str = "",
           stop_hook_active: bool = False, updated_input: dict | None = None) -> dict:
    """The JSON answer for ``event_name``.

    decision: "deny" | "ask" | "defer" | "allow"; reason: why (deny/ask/defer); context: text
    added to the agent's context; note: a line for the person (systemMessage);
    updated_input: PreToolUse, the whole tool input to run instead (Claude Code
    2.1.332 runs it, for subagents too; never sent with a deny); PostToolUse, ``{"tool_response":
    OUTPUT}``: an MCP tool's output the model sees instead (``updatedMCPToolOutput``).
    """
    out: dict = {}
    if event_name == "PreToolUse":
        hso: dict = {"hookEventName": "PreToolUse"}
        if decision in ("deny", "ask", "defer"):
            hso["permissionDecision"] = decision
            hso["permissionDecisionReason"] = reason
        if context:
            hso["additionalContext"] = context
        if updated_input is not None and decision != "deny":
            hso["updatedInput"] = updated_input
        if len(hso) > 1:
            out["hookSpecificOutput"] = hso
    elif event_name in STOP_EVENTS:
        if stop_blocked(decision, stop_hook_active):
            out["decision"] = "block"
            out["reason"] = reason + (("\n" + context) if context else "")
        elif context or reason:
            # a stop is never blocked forever: report without blocking
            note = "\n".join(x for x in (note, reason, context) if x)
    elif event_name in CONTEXT_EVENTS:
        if decision == "deny" and event_name == "PostToolUse":
            out["decision"] = "block"
            out["reason"] = reason
        hso = {"hookEventName": event_name}
        if context:
            hso["additionalContext"] = context
        if event_name == "PostToolUse" and updated_input is not None and "tool_response" in updated_input:
            # Claude Code 2.1.332 replaces the output of an MCP tool only (not Bash's, not Read's)
            hso["updatedMCPToolOutput"] = updated_input["tool_response"]
        if len(hso) > 1:
            out["hookSpecificOutput"] = hso
    elif context:
        # an event whose answer cannot reach the model (Notification): the note goes to the person
        note = "\n".join(x for x in (note, context) if x)
    if note:
        out["systemMessage"] = note
    return out


def unjudged(event_name: str, msg: str) -> dict:
    """The one fail-closed answer, when the hook cannot judge at all (bad input, a bad config,
    an engine that cannot load or crashed): a tool call is refused with ``msg``; any other event
    gets ``msg`` as a note (a stop is never blocked by a hook that cannot judge it)."""
    if event_name == "PreToolUse":
        return render("PreToolUse", "deny", msg, "")
    return {"systemMessage": msg}


def dumps(answer: dict) -> str:
    """The answer as JSON in ASCII (non-ASCII as \\u escapes): always encodable, whatever a
    guard put into a reason (a file name read back with surrogateescape, say)."""
    return json.dumps(answer, ensure_ascii=True)


# --- the dialect interface (swarmgate.codex_protocol and swarmgate.gemini_protocol have the same) ---

CLIENT = "claude"


# Claude Code events judged as another: a skill's shell command (PreSkillShellCommand, outside the
# Bash tool) arrives shaped as a PreToolUse of Bash (tool_name "Bash", tool_input.command; measured
# with 2.1.332) and goes through the Bash guards.
ALIASES = {"PreSkillShellCommand": "PreToolUse"}


def canonical_event(name: str) -> str | None:
    """swarmgate's event for the client's event name (None: not one this client sends)."""
    return ALIASES.get(name) or (name if name in EVENTS else None)


def skill_output(decision: str, reason: str, context: str) -> tuple[str, int, str]:
    """The answer to PreSkillShellCommand: ``{"decision": "block", "reason"}`` refuses the skill's
    command (an ask or a defer too: a skill cannot wait for a person, and Claude Code 2.1.332 blocks
    them itself); a rewrite of the command is not supported there, so none is sent."""
    out: dict = {}
    if decision in ("deny", "ask", "defer"):
        out = {"decision": "block", "reason": reason}
    if context:
        out["systemMessage"] = context
    return dumps(out), 0, ""


def output(event_name: str, decision: str, reason: str, context: str, note: str = "",
           stop_hook_active: bool = False, updated_input: dict | None = None) -> tuple[str, int, str]:
    """(stdout, exit code, stderr) that tell Claude Code the combined decision."""
    return dumps(render(event_name, decision, reason, context, note, stop_hook_active, updated_input)), 0, ""


def refusal(event_name: str, msg: str) -> tuple[str, int, str]:
    """The answer when the hook cannot judge (``unjudged``), as (stdout, exit code, stderr)."""
    return dumps(unjudged(event_name, msg)), 0, ""


def exit2_refusal(event_name: str, msg: str) -> tuple[str, int, str]:
    """``refusal`` for Codex CLI and Gemini CLI, which let a call through on anything they cannot parse:
    a tool call is refused by exit 2 with the reason on stderr and nothing on stdout (the one answer both
    honour without any JSON); any other event gets the reason as a note."""
    if event_name == "PreToolUse":
        return "", 2, msg
    return dumps({"systemMessage": msg}), 0, ""
