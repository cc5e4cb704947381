"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code binary.

It listens on 127.0.0.1 (a free port), records every request, and answers
each POST /v1/messages with the next scripted assistant turn, streamed as SSE
the way the binary expects (message_start, content_block_start/delta/stop
with text_delta or input_json_delta, message_delta with the stop_reason,
message_stop).

Conversations: Claude Code holds several conversations against one API: the
main agent's, one per subagent (its first user message holds the dispatch
prompt), and side requests (title generation and the like). The server is
stateless about them: each request carries the whole conversation, so a
``Conversation`` is picked by a marker in the first user message (the
longest marker that matches wins) and its next turn is the number of
assistant messages already in the request.

    api = MessagesAPI([
        Conversation("run-echo", [
            bash("echo hello-e2e"),
            done("finished"),
        ]),
    ])

A turn may also be a callable ``(Request) -> Turn`` for replies that depend
on what came back (e.g. the id of a dispatched agent). Compaction requests
(the binary asking for a summary) are answered by the conversation itself;
afterwards it continues as the conversation ``<marker>:after-compact``.
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback_api import Conversation as _Conversation
from loopback_api import LoopbackAPI, RecordedRequest, pick

_ids = itertools.count(1)


# --- turns -------------------------------------------------------------------------------------

@dataclass
class Turn:
    """One assistant message: content blocks and the stop reason."""
    blocks: list[dict]
    stop_reason: str = "end_turn"
    input_tokens: int = 10  # reported usage; near the context window it makes the binary compact


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_block(name: str, tool_input: dict, tool_id: str | None = None) -> dict:
    return {"type": "tool_use", "id": tool_id or f"toolu_e2e_{next(_ids):04d}", "name": name,
            "input": tool_input}


def done(text: str = "done") -> Turn:
    """A final text answer: ends the conversation's turn."""
    return Turn([text_block(text)], "end_turn")


def tool(name: str, tool_input: dict, *, say: str = "", tool_id: str | None = None) -> Turn:
    """Call one tool (optionally after a line of text)."""
    blocks = [text_block(say)] if say else []
    blocks.append(tool_block(name, tool_input, tool_id))
    return Turn(blocks, "tool_use")


def tools(*calls: tuple[str, dict]) -> Turn:
    """Call several tools in one assistant message (they run in parallel)."""
    return Turn([tool_block(n, i) for n, i in calls], "tool_use")


def compact_after(turn: Turn) -> Turn:
    """The same turn, reporting a nearly full context window (1M tokens in 2.1.332), so the
    binary compacts the conversation before its next request (SessionStart source=compact)."""
    return Turn(turn.blocks, turn.stop_reason, input_tokens=990_000)


def bash(command: str, description: str = "run a command", **extra: Any) -> Turn:
    return tool("Bash", {"command": command, "description": description, **extra})


def dispatch(subagent_type: str, prompt: str, description: str = "do a task", **extra: Any) -> Turn:
    """Dispatch a subagent (the Agent tool). Foreground unless run_in_background is given."""
    extra.setdefault("run_in_background", False)
    return tool("Agent", {"description": description, "prompt": prompt,
                          "subagent_type": subagent_type, **extra})


# --- requests ----------------------------------------------------------------------------------

def _block_text(block: Any) -> str:
    """All text inside a content block (tool_result content may be a string or a list)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        c = block.get("content")
        if isinstance(c, list):
            return "\n".join(_block_text(b) for b in c)
        return str(c or "")
    if kind == "tool_use":
        return json.dumps(block.get("input", {}))
    return ""


def _content_blocks(message: dict) -> list:
    c = message.get("content")
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return c if isinstance(c, list) else []


@dataclass
class ToolResult:
    tool_use_id: str
    is_error: bool
    text: str


class Request(RecordedRequest):
    """One recorded Messages API POST (loopback_api.RecordedRequest)."""

    @property
    def messages(self) -> list[dict]:
        m = self.body.get("messages")
        return m if isinstance(m, list) else []

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def system_text(self) -> str:
        s = self.body.get("system")
        if isinstance(s, list):
            return "\n".join(_block_text(b) for b in s)
        return str(s or "")

    def user_texts(self) -> list[str]:
        """Texts of the user messages, each message's blocks joined."""
        return ["\n".join(_block_text(b) for b in _content_blocks(m))
                for m in self.messages if m.get("role") == "user"]

    @property
    def first_user_text(self) -> str:
        u = self.user_texts()
        return u[0] if u else ""

    @property
    def all_text(self) -> str:
        """Everything the model sees: system prompt and every message's text."""
        parts = [self.system_text]
        for m in self.messages:
            parts.extend(_block_text(b) for b in _content_blocks(m))
        return "\n".join(parts)

    @property
    def assistant_turns(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def tool_results(self) -> list[ToolResult]:
        out = []
        for m in self.messages:
            if m.get("role") != "user":
                continue
            for b in _content_blocks(m):
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out.append(ToolResult(str(b.get("tool_use_id", "")), bool(b.get("is_error")),
                                          _block_text(b)))
        return out

    def last_tool_results(self) -> list[ToolResult]:
        """Tool results in the last user message (the answer to the previous turn's calls)."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return [ToolResult(str(b.get("tool_use_id", "")), bool(b.get("is_error")), _block_text(b))
                        for b in _content_blocks(m)
                        if isinstance(b, dict) and b.get("type") == "tool_result"]
        return []

    def hook_texts(self, prefix: str) -> list[str]:
        """What a hook added, e.g. prefix "SessionStart hook additional context:" or
        "PreToolUse:Bash hook additional context:": each text from the prefix to the end of
        its block (the binary joins other context before and after it in one block)."""
        out = []
        for m in self.messages:
            for t in map(_block_text, _content_blocks(m)):
                i = t.find(prefix)
                while i >= 0:
                    j = t.find(prefix, i + len(prefix))
                    out.append(t[i:j if j >= 0 else len(t)])
                    i = j
        return out

    @property
    def is_compaction(self) -> bool:
        """The binary asks for a summary of the conversation (manual /compact or auto-compact)."""
        u = self.user_texts()
        return bool(u) and "<summary>" in u[-1] and "Respond with plain text only" in u[-1]

    def tool_uses(self) -> list[dict]:
        """Every tool_use block the assistant sent in this conversation so far."""
        return [b for m in self.messages if m.get("role") == "assistant"
                for b in _content_blocks(m) if isinstance(b, dict) and b.get("type") == "tool_use"]


# --- conversations -----------------------------------------------------------------------------

TurnSpec = Turn | Callable[[Request], Turn]


class Conversation(_Conversation):
    """A scripted conversation, recognised by ``marker`` in its first user message (loopback_api).

    When the script runs out, the conversation ends with a plain text answer. A compaction
    request is answered with a summary; afterwards the conversation goes on as
    ``<marker>:after-compact``."""

    def reply(self, req: Request) -> Turn:
        if req.is_compaction:
            # the summary becomes the first user message of the compacted conversation, so the
            # conversation goes on as `<marker>:after-compact` (script it as its own Conversation)
            return done(f"<analysis>scripted</analysis>\n<summary>{self.marker}:after-compact "
                        f"(summary of the scripted conversation)</summary>")
        turn = self.turn_for(req)
        return done(f"[{self.name}] script finished") if turn is None else turn


def side_reply(req: Request) -> Turn:
    """Answer for requests no conversation claims (titles, summaries, classifiers)."""
    return done("e2e")


# --- SSE encoding ------------------------------------------------------------------------------

def sse_events(turn: Turn, model: str, msg_id: str) -> Iterable[tuple[str, dict]]:
    yield "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model or "claude-e2e",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": 1, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0}}}
    for i, b in enumerate(turn.blocks):
        if b["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": b["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(b["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def message_json(turn: Turn, model: str, msg_id: str) -> dict:
    return {"id": msg_id, "type": "message", "role": "assistant", "model": model or "claude-e2e",
            "content": turn.blocks, "stop_reason": turn.stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": turn.input_tokens, "output_tokens": 5}}


# --- the server --------------------------------------------------------------------------------

class MessagesAPI(LoopbackAPI):
    """The scripted API server. Use as a context manager; ``url`` is its base URL."""

    def __init__(self, conversations: list[Conversation] | None = None,
                 side: Callable[[Request], Turn] = side_reply) -> None:
        super().__init__(conversations, side)

    def not_found(self) -> dict:
        return {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}}

    def _route(self, req: Request) -> Turn:
        """The conversation with the longest matching marker answers (so `script:x` and
        `script:x-sub` can coexist); a request no marker matches is a side request."""
        conv = pick(self.conversations, req)
        if conv is None:
            return self.side(req)
        return conv.reply(req) if isinstance(conv, Conversation) else (conv.turn_for(req) or done())

    def _handle_post(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path
        route = path.split("?", 1)[0]
        body = self.read_json(h)
        if route.endswith("/count_tokens"):
            self._record_other(h, "POST")
            self.reply_json(h, 200, {"input_tokens": 100})
            return
        if route != "/v1/messages":
            self._record_other(h, "POST")
            self.reply_json(h, 404, self.not_found())
            return
        req = Request(path, dict(h.headers.items()), body)
        try:
            turn = self._route(req)
        except Exception as e:  # noqa: BLE001 - a script bug: tell the binary and the test
            with self._lock:
                self.errors.append(f"script raised {type(e).__name__}: {e}")
            turn = done(f"e2e script error: {e}")
        req.reply = turn
        self.record(req)
        msg_id = f"msg_e2e_{next(_ids):04d}"
        if not req.body.get("stream"):
            self.reply_json(h, 200, message_json(turn, req.model, msg_id))
            return
        self.reply_sse(h, sse_events(turn, req.model, msg_id))

    # queries
    def tool_results(self, name: str | None = None) -> list[ToolResult]:
        """Every distinct tool result the binary sent back (optionally in one conversation)."""
        seen: dict[str, ToolResult] = {}
        reqs = self.conversation_requests(name) if name else list(self.requests)
        for r in reqs:
            for tr in r.tool_results():
                seen.setdefault(tr.tool_use_id, tr)
        return list(seen.values())

    def result_for(self, tool_use_id: str) -> ToolResult | None:
        for tr in self.tool_results():
            if tr.tool_use_id == tool_use_id:
                return tr
        return None

