"""Codex CLI's hook dialect (0.169.0): its hook input as swarmgate's event, the decision in its output.

Facts checked against the pinned binary (docs/clients.md, tests/e2e/codex_e2e_test.py):
- input is Claude-shaped: session_id, turn_id, transcript_path (Codex's own rollout JSONL), cwd,
  hook_event_name, model, permission_mode; tool events tool_name, tool_input, tool_use_id;
  a subagent's calls carry agent_id and agent_type ("default" for a subagent without a role);
- tools: the shell tool (exec_command) arrives as `Bash` with `tool_input.command`;
  `apply_patch` arrives with the whole patch in `tool_input.command`; `spawn_agent` with
  `message`; `write_stdin` (typing into a running exec session) with `chars`;
- output is parsed strictly (unknown fields make the answer invalid, and an invalid answer
  lets the call through): PreToolUse refuses with hookSpecificOutput.permissionDecision
  "deny" and a non-empty permissionDecisionReason, or exit 2 with the reason on stderr;
  `ask` is not supported (the call would proceed), so swarmgate refuses instead;
- a crash, non-JSON output and a timeout let the call proceed; there is no onFailure. The
  hook command install writes ends in `|| exit 2`, and the last-resort answer here is exit 2
  with the reason on stderr, which needs no JSON at all.

Parsing and rendering only; no judging.
"""
from __future__ import annotations

from swarmgate.hook_protocol import exit2_refusal, HookInputError, dumps, event_from, load_object

CLIENT = "codex"

# Codex's event name -> swarmgate's. The names are Claude Code's; Codex has no
# PostToolUseFailure (a failed command comes to PostToolUse with "Exit code: N").
EVENTS = {
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "SessionStart": "SessionStart",
    "SubagentStart": "SubagentStart",
    "SubagentStop": "SubagentStop",
    "Stop": "Stop",
    "UserPromptSubmit": "UserPromptSubmit",
    "PreCompact": "PreCompact",
    "SessionEnd": "SessionEnd",
}

# Codex's tool name -> swarmgate's (tools not listed keep their own name: no guard runs on them)
TOOLS = {
    "Bash": "Bash",
    "apply_patch": "Edit",
    "write_stdin": "Bash",
    "spawn_agent": "Agent",
    "request_user_input": "AskUserQuestion",   # asks the person (Q01)
}

_PATCH_HEADERS = ("*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: ")

# Programs that, given nothing to run, run what they read on stdin. In a Codex exec session that
# is what the model types later with write_stdin, which reaches no hook (measured with 0.169.0).
_SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "fish", "tcsh", "csh", "busybox"))
_INTERPRETERS = frozenset(("python", "python2", "python3", "ipython", "ipython3", "pypy", "pypy3", "node", "nodejs",
                           "bun", "deno", "perl", "ruby", "irb", "php", "lua", "luajit", "tclsh", "wish", "R",
                           "julia", "ghci", "scala", "sqlite3", "psql", "mysql", "gdb"))
_LINE_RUNNERS = frozenset(("xargs", "parallel"))
_PROGRAM_OPTS = frozenset(("-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r", "--command", "-f", "--file",
                           "-x", "--batch", "-ex"))
_STDIN_OPS = ("<", "<<", "<<-", "<<<", "<&")


def canonical_event(name: str) -> str | None:
    return EVENTS.get(name)


def patch_paths(patch: str) -> list[str]:
    """Every path an apply_patch text adds, deletes, updates or moves to, in order, once each.

    As lenient as Codex's own parser (markers may be padded with whitespace, a heredoc
    wrapper is allowed): a path Codex would write is never missed."""
    out: list[str] = []
    for line in patch.splitlines():
        t = line.strip()
        for head in _PATCH_HEADERS:
            if t.startswith(head):
                path = t[len(head):].strip()
                if path and path not in out:
                    out.append(path)
                break
    return out


def _is_interpreter(name: str) -> bool:
    return name in _INTERPRETERS or (name.startswith("python") and name[6:].replace(".", "").isdigit())


def reads_typed_input(cmd) -> bool:
    """Does this simple command (of the parsed tree) wait for commands on a stdin nothing gives it?

    A shell or an interpreter with no program (no -c/-e, no script operand, stdin neither redirected
    nor piped; -i/-s always), and xargs or parallel reading their lines from such a stdin. Under Claude Code and
    Gemini such a command reads nothing (their shell tools give no stdin); under Codex the model
    can type into it afterwards."""
    name = cmd.name
    if not (name in _SHELLS or name in _LINE_RUNNERS or _is_interpreter(name)) or not cmd.words:
        return False
    if getattr(cmd, "piped", False) or any(getattr(r, "op", "") in _STDIN_OPS
                                          for r in getattr(cmd, "redirects", ()) or ()):
        return False
    args = list(cmd.args)
    if name in _LINE_RUNNERS:
        return not any(a in ("-a", "--arg-file", "::::") or a.startswith("--arg-file=") for a in args)
    if "-i" in args or (name in _SHELLS and "-s" in args):
        return True
    for a in args:
        if a in _PROGRAM_OPTS or a.startswith(("--eval=", "--command=", "--file=")):
            return False
        if name in _SHELLS and a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return False   # bash -lc '...', sh -ec '...'
        if not a.startswith("-") and a not in ("repl",):
            return False   # a script, a module, a database or a subcommand to run
    return True


def typed_input_findings(analysis) -> list:
    """Unverifiable entries (the reader's kind) for every command of ``analysis`` that waits for typed
    input: under Codex what is typed into it reaches no hook, so it is judged like text fed to a shell
    that cannot be read (B01, per `[bash] unverifiable`)."""
    from swarmgate.hooks.bash_results import Unverifiable

    return [Unverifiable(f"`{cmd.name}` waits for input, and under Codex CLI what is typed into a running "
                         f"command (write_stdin) reaches no hook", cmd.text[:500])
            for cmd in getattr(analysis, "commands", ()) or () if reads_typed_input(cmd)]


def translate(payload: dict) -> tuple[dict, str | None, list | None]:
    """(payload in swarmgate's event model, Codex's tool name when it differs, written paths)."""
    out = dict(payload)
    # transcripts are Codex rollout files, not Claude Code transcripts: the guards that read
    # transcripts must not take one for the other (docs/clients.md says which cannot apply)
    for key in ("transcript_path", "agent_transcript_path"):
        if out.get(key):
            out["client_" + key] = out[key]
            out[key] = ""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or tool not in TOOLS:
        return out, None, None
    ti = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    canon = TOOLS[tool]
    out["tool_name"] = canon
    written = None
    if tool == "apply_patch":
        text = ti.get("command")
        if not isinstance(text, str):
            raise HookInputError("apply_patch hook input lacks the patch text in `tool_input.command`")
        written = patch_paths(text)
    elif tool == "write_stdin":
        # what is typed into a running exec session (a shell, most often) is judged as a command
        chars = ti.get("chars")
        out["tool_input"] = {"command": chars if isinstance(chars, str) else "",
                             "description": "typed into a running exec session (write_stdin)"}
    elif tool == "spawn_agent":
        message = ti.get("message")
        if not isinstance(message, str):
            items = ti.get("items") if isinstance(ti.get("items"), list) else []
            message = "\n".join(str(i.get("text")) for i in items if isinstance(i, dict) and i.get("text"))
        out["tool_input"] = {"prompt": message, "description": "spawn_agent",
                             "subagent_type": ti.get("agent_type") or "default",
                             "run_in_background": True}
    return out, (tool if tool != canon else None), written


def parse_payload(event_name: str, text: str, repo: str | None = None):
    """Codex's payload on stdin as a HookEvent in swarmgate's model (``event_name`` is swarmgate's)."""
    payload, client_tool, written = translate(load_object(text))
    event = event_from(event_name, payload, repo, CLIENT)
    event.client_tool = client_tool
    event.written = written
    return event


def render(event_name: str, decision: str, reason: str, context: str, note: str = "",
           stop_hook_active: bool = False) -> dict:
    """The JSON answer for ``event_name``, with only the fields Codex accepts for that event."""
    out: dict = {}
    if event_name == "PreToolUse":
        hso: dict = {"hookEventName": "PreToolUse"}
        if decision == "ask":
            decision, reason = "deny", (reason + "\n(Codex cannot ask a person from a hook, so this is "
                                        "refused; run it yourself outside the agent if it is right.)")
        if decision == "deny":
            hso["permissionDecision"] = "deny"
            hso["permissionDecisionReason"] = reason.strip() or "refused by swarmgate"
        if context:
            hso["additionalContext"] = context
        if len(hso) > 1:
            out["hookSpecificOutput"] = hso
    elif event_name in ("Stop", "SubagentStop"):
        if decision == "deny" and not stop_hook_active:
            out["decision"] = "block"
            out["reason"] = (reason + (("\n" + context) if context else "")).strip() or "refused by swarmgate"
        elif context or reason:
            note = "\n".join(x for x in (note, reason, context) if x)
    elif event_name == "PostToolUse":
        if decision == "deny":
            out["decision"] = "block"
            out["reason"] = reason.strip() or "refused by swarmgate"
        if context:
            out["hookSpecificOutput"] = {"hookEventName": "PostToolUse", "additionalContext": context}
    elif event_name in ("SessionStart", "SubagentStart", "UserPromptSubmit"):
        if context:
            out["hookSpecificOutput"] = {"hookEventName": event_name, "additionalContext": context}
    elif context:
        note = "\n".join(x for x in (note, context) if x)
    if note:
        out["systemMessage"] = note
    return out


def output(event_name: str, decision: str, reason: str, context: str, note: str = "",
           stop_hook_active: bool = False, updated_input: dict | None = None) -> tuple[str, int, str]:
    """(stdout, exit code, stderr). ``updated_input`` is not sent: no guard that rewrites a call runs
    under this client (swarmgate.clients.COVERAGE), so there is none to send."""
    return dumps(render(event_name, decision, reason, context, note, stop_hook_active)), 0, ""


refusal = exit2_refusal  # the last resort: exit 2, the reason on stderr, nothing on stdout
