"""What the scripted model APIs share: a threaded HTTP server on 127.0.0.1 that records every
request, and conversations picked by a marker in the first user message.

Each stand-in (messages_api.py for Claude Code, responses_api.py for Codex CLI, gemini_api.py
for Gemini CLI) subclasses ``LoopbackAPI`` with its own ``_handle_post`` and its own Request
class. A Request class gives ``first_user_text`` (where markers are looked for) and
``assistant_turns`` (how many model turns the conversation already holds: turn *i* of a script
answers the request that holds *i*), which is all ``Conversation`` needs. The server is
stateless about conversations: each request carries the whole conversation.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Callable, Iterable


@dataclass
class RecordedRequest:
    """One recorded POST: path (with query), headers and the parsed JSON body; the Conversation that
    answered it (None for a side request) and the turn it got. Each API's Request adds how to read
    its body (``first_user_text``, ``assistant_turns``, ``all_text``, the tool results)."""
    path: str
    headers: dict
    body: dict
    conversation: str | None = None
    reply: Any = None


@dataclass
class Conversation:
    """A scripted conversation, recognised by ``marker`` in its first user message.

    Turn i answers the request that already holds i model turns. A turn is the API's own
    Turn object, or a callable ``(Request) -> Turn`` for replies that depend on what came
    back (e.g. the id of a spawned agent). ``turn_for`` is None once the script ran out.
    """
    marker: str
    turns: list
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or self.marker

    def matches(self, req: Any) -> bool:
        return self.marker in req.first_user_text

    def turn_for(self, req: Any):
        i = req.assistant_turns
        if i >= len(self.turns):
            return None
        spec = self.turns[i]
        return spec(req) if callable(spec) else spec


def pick(conversations: Iterable[Conversation], req: Any) -> Conversation | None:
    """The conversation with the longest matching marker (so `script:x` and `script:x-sub` can
    coexist); None for a side request. Sets ``req.conversation``."""
    matching = [c for c in conversations if c.matches(req)]
    if not matching:
        return None
    conv = max(matching, key=lambda c: len(c.marker))
    req.conversation = conv.name
    return conv


class LoopbackAPI:
    """A scripted API server on a free loopback port. Use as a context manager; ``url`` is its base URL."""

    def __init__(self, conversations: list[Conversation] | None = None, side: Callable | None = None) -> None:
        self.conversations = list(conversations or [])
        self.side = side  # answers a request no conversation claims (a title, a classifier)
        self.requests: list = []
        self.other: list[tuple[str, str]] = []  # (method, path) of anything no script answers
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                api._handle_post(self)

            def do_GET(self):  # noqa: N802
                api._record_other(self, "GET")
                api.reply_json(self, 404, api.not_found())

            def do_HEAD(self):  # noqa: N802
                api._record_other(self, "HEAD")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # what subclasses answer
    def _handle_post(self, h: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def not_found(self) -> dict:
        return {"error": {"message": "not scripted"}}

    # helpers for subclasses
    @staticmethod
    def read_json(h: BaseHTTPRequestHandler) -> dict:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        return body if isinstance(body, dict) else {}

    @staticmethod
    def reply_json(h: BaseHTTPRequestHandler, code: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def reply_sse(h: BaseHTTPRequestHandler, events: Iterable[tuple[str | None, dict]]) -> None:
        """Server-sent events, `event: NAME` lines only where a name is given; closes the connection."""
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            h.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        h.wfile.flush()
        h.close_connection = True

    def _record_other(self, h: BaseHTTPRequestHandler, method: str) -> None:
        with self._lock:
            self.other.append((method, h.path))

    def record(self, req) -> None:
        with self._lock:
            self.requests.append(req)

    def answer(self, conversations: Iterable[Conversation], req, side: Callable, finished: Callable):
        """The turn that answers ``req``: its conversation's next turn, ``finished(text)`` once the
        script ran out, ``side(req)`` for a request no conversation claims; a script that raises
        is recorded and answered with a plain text."""
        try:
            conv = pick(conversations, req)
            if conv is None:
                return side(req)
            turn = conv.turn_for(req)
            return finished(f"[{conv.name}] script finished") if turn is None else turn
        except Exception as e:  # noqa: BLE001 - a script bug: tell the binary and the test
            with self._lock:
                self.errors.append(f"script raised {type(e).__name__}: {e}")
            return finished(f"e2e script error: {e}")

    # queries
    def conversation_requests(self, name: str) -> list:
        with self._lock:
            return [r for r in self.requests if r.conversation == name]

    def side_requests(self) -> list:
        with self._lock:
            return [r for r in self.requests if r.conversation is None]

    def requests_containing(self, needle: str) -> list:
        with self._lock:
            return [r for r in self.requests if needle in r.all_text]
