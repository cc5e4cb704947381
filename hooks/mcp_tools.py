"""MCP tools (`mcp__<server>__<tool>`) judged as what they do: `[mcp] tools` in the config says
which write files, which run commands and which ask a person.

An MCP server's tool can do what the built-in tools do, under a name no guard knows. The config
names them, with the argument that holds what matters::

    [mcp.tools]
    "mcp__files__write_file" = { writes = "path" }     # judged as Write (W01, G01) on that path
    "mcp__shell__exec" = { runs = "command" }          # judged as Bash (every shell guard)
    "mcp__people__ask" = { asks = true }               # judged as AskUserQuestion (Q01)

A listed call is judged as the built-in tool it stands for (its own name is kept as the
client tool in the decision log); a call whose argument is missing or not a string is refused
(it cannot be judged, and a writer that cannot be placed is not let through). Every MCP call is
logged (install routes `mcp__.*` to the hook), listed or not.

Parsing the config lives here (``from_config``); the mapping (``apply``) runs before the
guards are chosen.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent

PREFIX = "mcp__"
KINDS = {"writes": "Write", "runs": "Bash", "asks": "AskUserQuestion"}


def from_config(value: object) -> dict:
    """The validated `[mcp] tools` table: {tool name: {"writes": ARG} | {"runs": ARG} | {"asks": True}};
    ValueError names what is wrong (config.py puts the file and key in front)."""
    if not isinstance(value, dict):
        raise ValueError('expected a table of MCP tool names, e.g. "mcp__files__write_file" = { writes = "path" }')
    out: dict = {}
    for name, spec in value.items():
        if not isinstance(name, str) or not name.startswith(PREFIX) or name.count("__") < 2:
            raise ValueError(f"{name!r} is not an MCP tool name (mcp__<server>__<tool>)")
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in KINDS:
            raise ValueError(f"{name}: expected exactly one of writes = \"<argument>\", runs = \"<argument>\", "
                             f"asks = true")
        kind, arg = next(iter(spec.items()))
        if kind == "asks":
            if arg is not True:
                raise ValueError(f"{name}: asks must be true")
        elif not isinstance(arg, str) or not arg.strip():
            raise ValueError(f"{name}: {kind} must name the argument that holds the "
                             + ("path" if kind == "writes" else "command"))
        out[name] = {kind: arg}
    return out


def apply(event: HookEvent, config: Config) -> str:
    """Judge a listed MCP call as the built-in tool it stands for: the event's tool_name and
    tool_input become that tool's (the MCP name goes to ``client_tool``). Returns "" or, when the
    call cannot be judged (its argument is missing), why: the engine refuses it then."""
    name = event.tool_name or ""
    spec = config["mcp"]["tools"].get(name) if name.startswith(PREFIX) else None
    if not spec:
        return ""
    kind, arg = next(iter(spec.items()))
    ti = event.tool_input
    if kind == "asks":
        new = {"question": " ".join(str(v) for v in ti.values() if isinstance(v, str))[:500]}
    else:
        value = ti.get(arg)
        if not isinstance(value, str) or not value.strip():
            return (f"MCP tool {name} is listed in [mcp] tools as one that {kind} `{arg}`, but this call has no "
                    f"string `{arg}`: it cannot be judged.")
        new = {"file_path": value, "content": ""} if kind == "writes" else {"command": value, "description": name}
    event.client_tool = name
    event.tool_name = KINDS[kind]
    event.tool_input = new
    return ""
