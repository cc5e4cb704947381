"""A small MCP server over stdio for the end-to-end tests (server name: whatever the config calls it).

Newline-delimited JSON-RPC 2.0, the MCP stdio transport: `initialize`, `tools/list`, `tools/call`.
Tools:
- write_note {path, content}: writes the file (a file writer the built-in tools' guards do not know);
- run {command}: runs it with /bin/sh (a command runner);
- ask_person {question}: stands for a tool that puts a question to a person (here nobody answers).
Every call is appended to $MCP_CALLS_LOG (when set), so a test can tell what really ran.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

TOOLS = [
    {"name": "write_note", "description": "Write a note file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                     "required": ["path", "content"]}},
    {"name": "run", "description": "Run a shell command.",
     "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"name": "ask_person", "description": "Ask the person a question and wait for the answer.",
     "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}},
]


def call(name: str, args: dict) -> str:
    log = os.environ.get("MCP_CALLS_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"tool": name, "args": args}) + "\n")
    if name == "write_note":
        with open(args["path"], "w") as f:
            f.write(args.get("content", ""))
        return f"wrote {args['path']}"
    if name == "run":
        p = subprocess.run(["/bin/sh", "-c", args["command"]], capture_output=True, text=True, timeout=30)
        return p.stdout + p.stderr
    if name == "ask_person":
        return "nobody answered"
    raise KeyError(name)


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        mid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if mid is None:
            continue   # a notification
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {}}, "serverInfo": {"name": "e2e-mcp", "version": "1.0"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            try:
                result = {"content": [{"type": "text", "text": call(params["name"], params.get("arguments") or {})}],
                          "isError": False}
            except Exception as e:  # noqa: BLE001 - a tool error is the tool's answer
                result = {"content": [{"type": "text", "text": f"error: {e}"}], "isError": True}
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid,
                                         "error": {"code": -32601, "message": f"no method {method}"}}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
