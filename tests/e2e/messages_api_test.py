"""The scripted Messages API on its own (no Claude Code binary needed)."""
from __future__ import annotations

import json
import urllib.request

from messages_api import Conversation, MessagesAPI, Request, bash, done


def _post(url: str, body: dict) -> tuple[str, str]:
    req = urllib.request.Request(url + "/v1/messages?beta=true", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), resp.read().decode()


def _events(sse: str) -> list[tuple[str, dict]]:
    out = []
    for chunk in sse.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_streams_a_tool_call_then_ends_after_the_result():
    with MessagesAPI([Conversation("marker-1", [bash("echo hi"), done("bye")])]) as api:
        ctype, sse = _post(api.url, {"model": "m", "stream": True, "messages": [_user("go marker-1")]})
        assert ctype == "text/event-stream"
        events = _events(sse)
        names = [n for n, _ in events]
        assert names == ["message_start", "content_block_start", "content_block_delta",
                         "content_block_stop", "message_delta", "message_stop"]
        start, delta = events[1][1]["content_block"], events[2][1]["delta"]
        assert start["type"] == "tool_use" and start["name"] == "Bash"
        assert delta["type"] == "input_json_delta"
        assert json.loads(delta["partial_json"])["command"] == "echo hi"
        assert events[4][1]["delta"]["stop_reason"] == "tool_use"

        history = [_user("go marker-1"),
                   {"role": "assistant", "content": [start | {"input": {"command": "echo hi"}}]},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": start["id"],
                                                 "content": "PreToolUse:Bash hook error: [X01] no",
                                                 "is_error": True}]}]
        _, sse = _post(api.url, {"model": "m", "stream": True, "messages": history})
        events = _events(sse)
        assert events[2][1]["delta"] == {"type": "text_delta", "text": "bye"}
        assert events[-2][1]["delta"]["stop_reason"] == "end_turn"

    assert [r.conversation for r in api.requests] == ["marker-1", "marker-1"]
    (result,) = api.tool_results("marker-1")
    assert result.is_error and "[X01]" in result.text
    assert api.requests_containing("hook error") == [api.requests[1]]


def test_routes_conversations_by_first_user_message_and_answers_side_requests():
    convs = [Conversation("main-marker", [done("main")]), Conversation("main-marker-sub", [done("sub")])]
    with MessagesAPI(convs) as api:
        _post(api.url, {"stream": True, "messages": [_user("main-marker-sub task")]})
        _post(api.url, {"stream": True, "messages": [_user("main-marker go")]})
        _, body = _post(api.url, {"stream": False, "messages": [_user("write a title")]})
    assert [r.conversation for r in api.requests] == ["main-marker-sub", "main-marker", None]
    assert json.loads(body)["content"] == [{"type": "text", "text": "e2e"}]
    assert [r.reply.blocks[0]["text"] for r in api.requests] == ["sub", "main", "e2e"]


def test_callable_turns_see_the_request_and_script_errors_are_recorded():
    def echo_back(req: Request):
        return done(f"saw {len(req.messages)} messages")

    def broken(req: Request):
        raise RuntimeError("bad script")

    with MessagesAPI([Conversation("a", [echo_back]), Conversation("b", [broken])]) as api:
        _, sse = _post(api.url, {"stream": True, "messages": [_user("a")]})
        assert "saw 1 messages" in sse
        _post(api.url, {"stream": True, "messages": [_user("b")]})
    assert api.errors == ["script raised RuntimeError: bad script"]


def test_hook_texts_cut_hook_context_out_of_joined_blocks_and_compaction_is_recognised():
    joined = ("The following deferred tools are now available.\n\nSessionStart hook additional context: "
              "report A\n\nPreToolUse:Bash hook additional context: report B")
    req = Request("/v1/messages", {}, {"messages": [
        _user("first"), {"role": "system", "content": [{"type": "text", "text": joined}]},
        _user("Write it as an <analysis> block followed by a <summary> block. Respond with plain text only."),
    ]})
    assert req.hook_texts("SessionStart hook additional context:") == [
        "SessionStart hook additional context: report A\n\nPreToolUse:Bash hook additional context: report B"]
    assert req.hook_texts("PreToolUse:Bash hook additional context:") == [
        "PreToolUse:Bash hook additional context: report B"]
    assert req.is_compaction
    reply = Conversation("first", [done("never")]).reply(req)
    assert "<summary>first:after-compact" in reply.blocks[0]["text"]
    assert not Request("/v1/messages", {}, {"messages": [_user("first")]}).is_compaction
