"""A scripted stand-in for the Gemini API, for driving the real Gemini CLI binary.

Gemini CLI 0.61.0, pointed at it with GOOGLE_GEMINI_BASE_URL (and a dummy GEMINI_API_KEY,
user settings selecting `gemini-api-key` auth), POSTs
`/v1beta/models/MODEL:streamGenerateContent?alt=sse` with the whole conversation in
`contents` (`role` user or model; `parts` holding text, `functionCall` {name, args} and
`functionResponse` {name, response, id}). It is answered with server-sent events, one
`data:` line holding a GenerateContentResponse. `:generateContent` gets the same response as
JSON and `:countTokens` a count.

A turn is the list of parts the model produces: `shell(cmd)` (run_shell_command),
`write_file(path, content)`, `replace(path, old, new)`, `call(name, args)`, `done(text)`.
Turn i answers the request that already holds i model contents. In non-interactive mode
(`-p`) the first user content holds Gemini's session context followed by the prompt, so the
marker goes in the prompt.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from collections.abc import Callable

from loopback_api import Conversation, LoopbackAPI, RecordedRequest

# how a BeforeTool refusal reaches the model (gemini-cli core, hook-utils.ts)
BLOCKED = "Tool execution blocked: "


@dataclass
class Turn:
    parts: list[dict]


def done(text: str = "done") -> Turn:
    return Turn([{"text": text}])


def call(name: str, args: dict) -> Turn:
    return Turn([{"functionCall": {"name": name, "args": args}}])


def shell(command: str, **extra: Any) -> Turn:
    return call("run_shell_command", {"command": command, "description": "run a command", **extra})


def write_file(path: str, content: str) -> Turn:
    return call("write_file", {"file_path": path, "content": content})


def replace(path: str, old: str, new: str) -> Turn:
    return call("replace", {"file_path": path, "old_string": old, "new_string": new, "instruction": "edit"})


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return ""
    if "text" in part:
        return str(part["text"])
    if "functionResponse" in part:
        return json.dumps((part["functionResponse"] or {}).get("response"))
    if "functionCall" in part:
        return json.dumps((part["functionCall"] or {}).get("args"))
    return ""


@dataclass
class FunctionResponse:
    name: str
    id: str
    text: str  # the response's output (or error), as the model reads it


class Request(RecordedRequest):

    @property
    def contents(self) -> list[dict]:
        c = self.body.get("contents")
        return [x for x in c if isinstance(x, dict)] if isinstance(c, list) else []

    @property
    def first_user_text(self) -> str:
        first = next((c for c in self.contents if c.get("role") == "user"), {})
        return "\n".join(_part_text(p) for p in first.get("parts") or [])

    @property
    def all_text(self) -> str:
        return "\n".join(_part_text(p) for c in self.contents for p in c.get("parts") or [])

    @property
    def assistant_turns(self) -> int:
        return sum(1 for c in self.contents if c.get("role") == "model")

    def function_responses(self) -> list[FunctionResponse]:
        out = []
        for c in self.contents:
            for p in c.get("parts") or []:
                fr = p.get("functionResponse") if isinstance(p, dict) else None
                if isinstance(fr, dict):
                    resp = fr.get("response") if isinstance(fr.get("response"), dict) else {}
                    text = resp.get("output", resp.get("error", resp))
                    out.append(FunctionResponse(str(fr.get("name", "")), str(fr.get("id", "")),
                                                text if isinstance(text, str) else json.dumps(text)))
        return out


def response_json(turn: Turn) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": turn.parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-pro"}


class GeminiAPI(LoopbackAPI):
    """The scripted Gemini API. Use as a context manager; ``url`` is its base URL."""

    def __init__(self, conversations: list[Conversation] | None = None,
                 side: Callable[[Request], Turn] = lambda req: done("e2e")) -> None:
        super().__init__(conversations, side)

    def _handle_post(self, h: BaseHTTPRequestHandler) -> None:
        body = self.read_json(h)
        route = h.path.split("?", 1)[0]
        if route.endswith(":countTokens"):
            self._record_other(h, "POST")
            self.reply_json(h, 200, {"totalTokens": 100})
            return
        if not route.endswith((":streamGenerateContent", ":generateContent")):
            self._record_other(h, "POST")
            self.reply_json(h, 404, self.not_found())
            return
        req = Request(h.path, dict(h.headers.items()), body)
        turn = self.answer(self.conversations, req, self.side, done)
        req.reply = turn
        self.record(req)
        if route.endswith(":streamGenerateContent"):
            self.reply_sse(h, [(None, response_json(turn))])
        else:
            self.reply_json(h, 200, response_json(turn))

    def responses(self, name: str | None = None) -> list[FunctionResponse]:
        """Every distinct function response Gemini sent back (optionally in one conversation)."""
        seen: dict[tuple, FunctionResponse] = {}
        for r in (self.conversation_requests(name) if name else list(self.requests)):
            for fr in r.function_responses():
                seen.setdefault((fr.id, fr.name), fr)
        return list(seen.values())
