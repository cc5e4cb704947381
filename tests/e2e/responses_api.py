"""A scripted stand-in for the OpenAI Responses API, for driving the real Codex CLI binary.

Codex CLI 0.169.0, pointed at it through a model provider (`base_url =
"http://127.0.0.1:PORT/v1"`, `wire_api = "responses"`), POSTs `/v1/responses` with
`"stream": true` and the whole conversation in `input` (developer and user messages,
the model's function_call / custom_tool_call items and their *_output items). It is
answered with server-sent events: `response.created`, `response.output_item.added` and
`.done` per item, `response.completed` with the usage.

A turn is the list of items the model produces: `shell(cmd)` (the exec_command tool, which
reaches hooks as `Bash`), `patch(text)` (apply_patch, a freeform custom tool),
`spawn(message)` (multi_agent_v1's spawn_agent: the subagent is a conversation of its own,
whose user message is ``message``), `wait_spawned()` (wait_agent on the agents spawned so
far), `call(name, args)`, `done(text)`. Turn i answers the request that already holds i
groups of model items. The model Codex runs with comes from a catalog (codex_catalog.json
beside this file: a hand-written entry whose tools are exec_command, apply_patch and the
multi_agent_v1 namespace).
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from collections.abc import Callable

from loopback_api import Conversation, LoopbackAPI, RecordedRequest

_ids = itertools.count(1)

# how a PreToolUse refusal reaches the model (codex-rs core, hook_runtime.rs)
BLOCKED = "Command blocked by PreToolUse hook: "
MODEL_ITEMS = ("function_call", "custom_tool_call", "reasoning", "local_shell_call")


@dataclass
class Turn:
    items: list[dict]


def done(text: str = "done") -> Turn:
    return Turn([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}])


def call(name: str, args: dict, namespace: str | None = None, call_id: str | None = None) -> Turn:
    item = {"type": "function_call", "name": name, "arguments": json.dumps(args),
            "call_id": call_id or f"call_e2e_{next(_ids):04d}"}
    if namespace:
        item["namespace"] = namespace
    return Turn([item])


def shell(command: str) -> Turn:
    """The unified exec tool (exec_command): Codex's hooks see it as `Bash` with `tool_input.command`."""
    return call("exec_command", {"cmd": command})


def typing(session_id: int, chars: str) -> Turn:
    """write_stdin: type into a running exec session."""
    return call("write_stdin", {"session_id": session_id, "chars": chars, "yield_time_ms": 1000})


def patch(text: str) -> Turn:
    """apply_patch (freeform): the whole patch is the tool input."""
    return Turn([{"type": "custom_tool_call", "name": "apply_patch", "input": text,
                  "call_id": f"call_e2e_{next(_ids):04d}"}])


def spawn(message: str) -> Turn:
    return call("spawn_agent", {"message": message}, namespace="multi_agent_v1")


def wait_spawned(timeout_ms: int = 60000) -> Callable[[Request], Turn]:
    """wait_agent on every agent spawned in this conversation so far (ids read from the outputs)."""
    def turn(req: Request) -> Turn:
        ids = []
        for out in req.tool_outputs():
            try:
                ids.append(json.loads(out.text)["agent_id"])
            except (ValueError, KeyError, TypeError):
                continue
        return call("wait_agent", {"targets": ids, "timeout_ms": timeout_ms}, namespace="multi_agent_v1")
    return turn


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c) for c in content)
    if isinstance(content, dict):
        return str(content.get("text") or content.get("output") or "")
    return ""


@dataclass
class ToolOutput:
    call_id: str
    text: str


class Request(RecordedRequest):

    @property
    def items(self) -> list[dict]:
        items = self.body.get("input")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    def user_texts(self) -> list[str]:
        return [_text(i.get("content")) for i in self.items if i.get("role") == "user"]

    @property
    def first_user_text(self) -> str:
        """Every user message (the first is Codex's environment context; the task follows)."""
        return "\n".join(self.user_texts())

    @property
    def all_text(self) -> str:
        return "\n".join(_text(i.get("content")) or _text(i.get("output")) or str(i.get("arguments") or
                                                                                 i.get("input") or "")
                         for i in self.items)

    @property
    def assistant_turns(self) -> int:
        n, inside = 0, False
        for i in self.items:
            mine = i.get("type") in MODEL_ITEMS or i.get("role") == "assistant"
            if mine and not inside:
                n += 1
            inside = mine
        return n

    def calls(self) -> list[dict]:
        return [i for i in self.items if i.get("type") in ("function_call", "custom_tool_call")]

    def tool_outputs(self) -> list[ToolOutput]:
        return [ToolOutput(str(i.get("call_id", "")), _text(i.get("output")))
                for i in self.items if i.get("type") in ("function_call_output", "custom_tool_call_output")]


class ResponsesAPI(LoopbackAPI):
    """The scripted Responses API. Use as a context manager; ``url`` is its base URL (append /v1)."""

    def __init__(self, conversations: list[Conversation] | None = None,
                 side: Callable[[Request], Turn] = lambda req: done("e2e")) -> None:
        super().__init__(conversations, side)

    def _handle_post(self, h: BaseHTTPRequestHandler) -> None:
        body = self.read_json(h)
        if h.path.split("?", 1)[0] != "/v1/responses":
            self._record_other(h, "POST")
            self.reply_json(h, 404, self.not_found())
            return
        req = Request(h.path, dict(h.headers.items()), body)
        turn = self.answer(self.conversations, req, self.side, done)
        req.reply = turn
        self.record(req)
        rid = f"resp_e2e_{next(_ids):04d}"
        items = [dict(it, id=it.get("id") or f"item_e2e_{next(_ids):04d}") for it in turn.items]
        events: list[tuple[str | None, dict]] = [("response.created", {"type": "response.created",
                                                                       "response": {"id": rid}})]
        for n, it in enumerate(items):
            events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                          "output_index": n, "item": it}))
            events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                         "output_index": n, "item": it}))
        events.append(("response.completed", {"type": "response.completed", "response": {
            "id": rid, "output": items,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}}))
        self.reply_sse(h, events)

    def outputs(self, name: str | None = None) -> list[ToolOutput]:
        """Every distinct tool output Codex sent back (optionally in one conversation)."""
        seen: dict[str, ToolOutput] = {}
        for r in (self.conversation_requests(name) if name else list(self.requests)):
            for out in r.tool_outputs():
                seen.setdefault(out.call_id, out)
        return list(seen.values())

    def output_of(self, call_id: str) -> ToolOutput | None:
        return next((o for o in self.outputs() if o.call_id == call_id), None)
