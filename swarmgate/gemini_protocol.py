"""Gemini CLI's hook dialect (0.61.0): its hook input as swarmgate's event, the decision in its output.

Facts checked against the pinned binary (docs/clients.md, tests/e2e/gemini_e2e_test.py):
- every event: session_id, transcript_path (Gemini's own chat file), cwd, hook_event_name (its
  own names: BeforeTool, AfterTool, SessionStart, AfterAgent, ...), timestamp;
- tools: run_shell_command (command, dir_path, is_background), write_file (file_path,
  content), replace (file_path, old_string, new_string), invoke_agent (agent_name, prompt);
- **no agent identity**: a subagent's tool calls look exactly like the main agent's. Nothing
  here guesses one: every call is judged as the main agent's, and the decision log says so
  for the guards that would judge a subagent differently (swarmgate.clients);
- only `{"decision": "deny"|"block", "reason": ...}` on stdout, or exit 2 with the reason on
  stderr and nothing on stdout, refuses; a Claude-shaped permissionDecision is silently
  ignored. BeforeTool has no way to add context for the model (only AfterTool, SessionStart
  and BeforeAgent do): context there goes to the person as systemMessage;
- a crash (exit 1), non-JSON output with exit 0 or 1, and a timeout let the call proceed;
  there is no onFailure. The hook command install writes ends in `|| exit 2`, and the
  last-resort answer here is exit 2 with the reason on stderr.

Parsing and rendering only; no judging.
"""
from __future__ import annotations

from swarmgate.hook_protocol import exit2_refusal, dumps, event_from, load_object

CLIENT = "gemini"

# Gemini's event name -> swarmgate's
EVENTS = {
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "SessionStart": "SessionStart",
    "AfterAgent": "Stop",
    "BeforeAgent": "UserPromptSubmit",
    "SessionEnd": "SessionEnd",
    "PreCompress": "PreCompact",
    "Notification": "Notification",
}

# Gemini's tool name -> swarmgate's (tools not listed keep their own name: no guard runs on them)
TOOLS = {
    "run_shell_command": "Bash",
    "write_file": "Write",
    "replace": "Edit",
    "invoke_agent": "Agent",
    "read_file": "Read",                 # file_path (K01)
    "grep_search": "Grep",               # dir_path, include_pattern (K01)
    "ask_user": "AskUserQuestion",       # asks the person (Q01)
    "exit_plan_mode": "ExitPlanMode",    # puts a plan to the person (Q01)
}


def canonical_event(name: str) -> str | None:
    return EVENTS.get(name)


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        return _text(value.get("text") or value.get("message") or "")
    return ""


def translate(payload: dict) -> tuple[dict, str | None]:
    """(payload in swarmgate's event model, Gemini's tool name when it differs)."""
    import posixpath

    out = dict(payload)
    if out.get("transcript_path"):  # Gemini's chat file, not a Claude Code transcript
        out["client_transcript_path"] = out["transcript_path"]
        out["transcript_path"] = ""
    tool = payload.get("tool_name")
    ti = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else None
    resp = payload.get("tool_response")
    if isinstance(resp, dict):  # {llmContent, returnDisplay, error}: the shape the history reads
        out["tool_response"] = {"stdout": _text(resp.get("llmContent")), "stderr": _text(resp.get("error"))}
    if not isinstance(tool, str) or tool not in TOOLS or ti is None:
        return out, None
    canon = TOOLS[tool]
    out["tool_name"] = canon
    if tool == "run_shell_command":
        cwd = str(payload.get("cwd") or "")
        d = ti.get("dir_path")
        if isinstance(d, str) and d:  # the command runs there: relative writes are placed from it
            out["cwd"] = posixpath.normpath(d if d.startswith("/") else posixpath.join(cwd, d))
        out["tool_input"] = {"command": ti.get("command") if isinstance(ti.get("command"), str) else "",
                             "description": str(ti.get("description") or ""),
                             "run_in_background": ti.get("is_background") is True}
    elif tool == "invoke_agent":
        out["tool_input"] = {"prompt": str(ti.get("prompt") or ""), "subagent_type": str(ti.get("agent_name") or ""),
                             "description": "invoke_agent", "run_in_background": False}
    return out, tool


def parse_payload(event_name: str, text: str, repo: str | None = None):
    """Gemini's payload on stdin as a HookEvent in swarmgate's model (``event_name`` is swarmgate's)."""
    payload, client_tool = translate(load_object(text))
    event = event_from(event_name, payload, repo, CLIENT)
    event.client_tool = client_tool
    return event


def render(event_name: str, decision: str, reason: str, context: str, note: str = "",
           stop_hook_active: bool = False) -> dict:
    """The JSON answer for ``event_name`` in Gemini's shape."""
    out: dict = {}
    if event_name == "PreToolUse":
        if decision == "ask":
            decision, reason = "deny", (reason + "\n(swarmgate cannot ask a person from a Gemini CLI hook, so "
                                        "this is refused; run it yourself outside the agent if it is right.)")
        if decision == "deny":
            out["decision"] = "deny"
            out["reason"] = reason.strip() or "refused by swarmgate"
        if context:  # BeforeTool context never reaches the model: tell the person
            note = "\n".join(x for x in (note, context) if x)
    elif event_name == "Stop":
        if decision == "deny" and not stop_hook_active:
            out["decision"] = "deny"  # AfterAgent: the reason goes back to the agent as a new prompt
            out["reason"] = (reason + (("\n" + context) if context else "")).strip() or "refused by swarmgate"
        elif context or reason:
            note = "\n".join(x for x in (note, reason, context) if x)
    elif event_name in ("PostToolUse", "SessionStart", "UserPromptSubmit"):
        if decision == "deny" and event_name == "PostToolUse":
            out["decision"] = "deny"
            out["reason"] = reason.strip() or "refused by swarmgate"
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
