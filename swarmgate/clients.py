"""The coding-agent clients swarmgate guards, and what each one lets a guard see and say.

One event model, three dialects: every client's hook input is mapped onto swarmgate's
event (Claude Code's event and tool names) by its dialect module, and the combined decision
back into that client's output:

- ``claude``: Claude Code, ``swarmgate.hook_protocol``;
- ``codex``: Codex CLI, ``swarmgate.codex_protocol``;
- ``gemini``: Gemini CLI, ``swarmgate.gemini_protocol``.

COVERAGE says, per client and guard code, whether the guard applies in full, in part (and
what it cannot see or say there), or not at all (and why). The engine skips an ``off`` guard
for that client and writes both kinds of note into the decision log; docs/clients.md holds
the same table (docs.coverage_markdown writes it; a test keeps them equal). Claude Code is the reference:
every guard applies in full there.

The version each client was checked against lives in client_pins.json beside this file, read
by .ci/run, the end-to-end tests and `swarmgate doctor` (one place for the pins).

Light at import: the hook imports this module for Codex and Gemini calls.
"""
from __future__ import annotations

CLIENTS = ("claude", "codex", "gemini")
NAMES = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}

FULL, PARTIAL, OFF = "full", "partial", "off"

_NO_IDENTITY = ("Gemini CLI sends no agent identity: every call is judged as the main agent's")
_TRANSCRIPTS = "reads Claude Code transcripts; {name} writes its own format, which it does not read"

# client -> code -> (status, what the guard cannot see or say there). Every registered guard
# code has an entry for every client but claude (tests/swarmgate/clients_test.py).
COVERAGE: dict[str, dict[str, tuple[str, str]]] = {
    "codex": {
        "G01": (FULL, ""),
        "B01": (FULL, "and a shell or interpreter that would wait for typed input (write_stdin, which reaches no "
                      "hook) is refused as unreadable"),
        "B02": (FULL, ""),
        "B10": (FULL, ""),
        "B30": (FULL, ""),
        "B31": (FULL, ""),
        "T01": (FULL, "Codex has no timer tools: the shell side (at, crontab, sleep-then-echo, watch) applies"),
        "W01": (FULL, "a subagent spawned without a role has agent_type `default`: give it a [write] row"),
        "L01": (FULL, ""),
        "L02": (FULL, "apply_patch's files are recorded as the Edit they are judged as"),
        "L03": (FULL, ""),
        "K01": (FULL, "Codex has no file-reading tool: it reads through its shell, judged there"),
        "K02": (FULL, ""),
        "K03": (OFF, "no answer field that replaces a tool's output is known for this client (not "
                     "measured); K01 and K02 keep secrets out before the call"),
        "R01": (FULL, ""),
        "A01": (OFF, "swarm-watch " + _TRANSCRIPTS.format(name="Codex")),
        "D01": (FULL, "on spawn_agent's message"),
        "D07": (OFF, "not checked against Codex's subagent lifecycle (spawn_agent, wait_agent, close_agent)"),
        "D12": (FULL, "on spawn_agent's agent_type (`default` when none is given)"),
        "D15": (FULL, "on spawn_agent's message"),
        "D16": (OFF, "scratch locks are released at SubagentStop by the dispatch record, which Codex's "
                     "spawn_agent does not give"),
        "D20": (FULL, "on spawn_agent's message"),
        "D21": (OFF, "Codex's agent roles live in its config.toml [agents], not in [dispatch] agents_dir"),
        "D30": (FULL, "on spawn_agent's message"),
        "M01": (OFF, "Codex's send_input/send_message are not mapped onto SendMessage"),
        "Q01": (FULL, "on request_user_input (mapped onto AskUserQuestion)"),
        "B40": (OFF, "Codex has no PowerShell tool"),
        "A02": (OFF, "Codex has no agent teams (no TaskCreated, TaskCompleted, TeammateIdle)"),
        "C05": (FULL, "at the next tool call (Codex has no asyncRewake: an idle agent is not woken)"),
        "N01": (OFF, "Codex has no Notification event"),
        "C02": (FULL, ""),
        "H01": (PARTIAL, "directories registered with work-dir-owner are checked; the dispatch's `scratch:` "
                         "directories are not known (the dispatch record is not linked to Codex's subagent: "
                         "measured, a subagent handed back with its scratch directory left)"),
        "H02": (OFF, "H02 " + _TRANSCRIPTS.format(name="Codex")),
        "S01": (FULL, ""),
        "C03": (FULL, ""),
        "P01": (FULL, "a failed command comes to PostToolUse (Codex has no PostToolUseFailure)"),
        "C04": (FULL, ""),
        "C01": (FULL, ""),
        "X01": (OFF, "Codex 0.169.0 gives SessionStart hooks no env file ($CODEX_ENV_FILE, $CLAUDE_ENV_FILE), "
                     "through which the shims go first on PATH (measured)"),
        "X02": (OFF, "it puts a subagent's command into its cgroup by rewriting the call (updatedInput); the "
                     "Codex dialect sends no rewrite (Codex takes one only with permissionDecision allow, not "
                     "checked against 0.169.0)"),
        "X03": (OFF, "it watches the subagent cgroups X02 makes, and X02 does not run under Codex"),
    },
    "gemini": {
        "G01": (FULL, ""),
        "B01": (PARTIAL, _NO_IDENTITY + ": a subagent's heavy command is refused only when it lacks the "
                         "main agent's SWARMGATE_HEAVY prefix"),
        "B02": (FULL, ""),
        "B10": (PARTIAL, _NO_IDENTITY + ": the subagent-only refusal of a full-scope run cannot apply"),
        "B30": (FULL, ""),
        "B31": (FULL, ""),
        "T01": (FULL, "Gemini has no timer tools: the shell side (at, crontab, sleep-then-echo, watch) applies"),
        "W01": (PARTIAL, _NO_IDENTITY + ": writes are judged by the `main` row of [write]"),
        "L01": (FULL, ""),
        "L02": (PARTIAL, _NO_IDENTITY + ": its subagents' writes are recorded as the main agent's, so one "
                         "of them may drop another's changes; other sessions' changes are guarded"),
        "L03": (FULL, ""),
        "K01": (PARTIAL, _NO_IDENTITY + ": a read of a secret is asked of the person, never refused as a "
                         "subagent's; read_file and grep_search are judged, read_many_files is not"),
        "K02": (FULL, ""),
        "K03": (OFF, "no answer field that replaces a tool's output is known for this client (not "
                     "measured); K01 and K02 keep secrets out before the call"),
        "R01": (PARTIAL, "BeforeTool cannot add context for the model: the report goes to the person "
                         "(systemMessage)"),
        "A01": (OFF, "swarm-watch " + _TRANSCRIPTS.format(name="Gemini")),
        "D01": (FULL, "on invoke_agent's prompt"),
        "D07": (OFF, "Gemini's subagents run inside the invoke_agent call and send no start or stop event"),
        "D12": (FULL, "on invoke_agent's agent_name"),
        "D15": (FULL, "on invoke_agent's prompt"),
        "D16": (OFF, "Gemini sends no SubagentStop, where scratch locks are released"),
        "D20": (FULL, "on invoke_agent's prompt"),
        "D21": (OFF, "Gemini's agents live in .gemini/agents, not in [dispatch] agents_dir"),
        "D30": (FULL, "on invoke_agent's prompt"),
        "M01": (OFF, "Gemini has no tool that messages a running subagent"),
        "Q01": (OFF, _NO_IDENTITY + ": a subagent's ask_user cannot be told from the main agent's"),
        "B40": (OFF, "Gemini has no PowerShell tool"),
        "A02": (OFF, "Gemini has no agent teams"),
        "C05": (PARTIAL, _NO_IDENTITY + ": a subagent's reminder is shown to whichever agent calls a tool next; "
                         "Gemini has no asyncRewake: an idle agent is not woken"),
        "N01": (FULL, "on Notification (ToolPermission)"),
        "C02": (OFF, "Gemini sends no SubagentStart"),
        "H01": (OFF, "Gemini sends no SubagentStop"),
        "H02": (OFF, "Gemini sends no SubagentStop (and H02 " + _TRANSCRIPTS.format(name="Gemini") + ")"),
        "S01": (PARTIAL, "on AfterAgent (after each turn of the agent); " + _NO_IDENTITY),
        "C03": (PARTIAL, "on AfterAgent; the summary goes to the person (systemMessage)"),
        "P01": (FULL, "on AfterTool"),
        "C04": (PARTIAL, _NO_IDENTITY + ": a subagent's AfterTool gets the main agent's alerts too"),
        "C01": (FULL, "prepended to the prompt in non-interactive mode (-p)"),
        "X01": (OFF, "Gemini gives SessionStart hooks no env file, through which the shims go first on PATH"),
        "X02": (OFF, _NO_IDENTITY + ": no call is known to be a subagent's"),
        "X03": (OFF, "it watches the subagent cgroups X02 makes, and X02 does not run under Gemini"),
    },
}

# What a client cannot express at all, whatever the guard (docs/clients.md).
CANNOT = {
    "claude": (),
    "codex": (
        "`ask`: a PreToolUse `ask` makes Codex let the call through, so swarmgate refuses instead and says why",
        "a failure of the hook (crash, non-JSON output, timeout) lets the call through: there is no onFailure; "
        "install ends the refusing hook's command in a fallback that exits 2, and the engine answers within its "
        "own time budget",
        "an answer with a field Codex does not know is invalid, and an invalid answer lets the call through: "
        "the Codex dialect writes only the fields its parser accepts for each event",
        "hooks of an untrusted project, and hooks whose definition changed since a person trusted them, are "
        "skipped without a word (`swarmgate doctor` checks both)",
        "typing into a running process: `write_stdin` reaches no hook (measured with 0.169.0); swarmgate "
        "refuses (B01) a shell or interpreter that would wait for typed input, the usual way in, but a program "
        "that runs what it reads some other way (a `while read` loop, an interpreter not on the list) stays open",
    ),
    "gemini": (
        "agent identity: a subagent's tool call looks exactly like the main agent's (nothing is guessed)",
        "`ask`: there is no person to ask in a hook, so swarmgate refuses instead and says why",
        "context before a tool call (BeforeTool): it goes to the person, not the model",
        "SubagentStart and SubagentStop: there are no such events",
        "a failure of the hook (crash, exit 1, non-JSON output with exit 0, timeout) lets the call through: "
        "there is no onFailure; install ends the refusing hook's command in a fallback that exits 2 with "
        "nothing on stdout (and every other hook's in `|| exit 1`: Gemini takes any other exit code as a "
        "refusal, and a refused AfterAgent makes the agent retry)",
        "a Claude-shaped answer (`permissionDecision`) is ignored without a word",
    ),
}


def dialect(client: str):
    """The dialect module of ``client`` (ValueError for an unknown client). Imported by name, not
    through importlib (which costs the hook an import of its own)."""
    if client == "codex":
        from swarmgate import codex_protocol
        return codex_protocol
    if client == "gemini":
        from swarmgate import gemini_protocol
        return gemini_protocol
    if client == "claude":
        from swarmgate import hook_protocol
        return hook_protocol
    raise ValueError(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")


def coverage(client: str, code: str) -> tuple[str, str]:
    """(status, note) of guard ``code`` under ``client``; a code missing from the table is off."""
    if client == "claude":
        return FULL, ""
    return COVERAGE.get(client, {}).get(code, (OFF, f"no entry for {code} in swarmgate.clients.COVERAGE"))


def apply_coverage(client: str, guards) -> tuple[list, list[str]]:
    """(the guards to run for ``client``, notes for the decision log: what was skipped and why,
    what a partial guard could not see). For claude: the guards unchanged, no notes."""
    if client == "claude":
        return list(guards), []
    run, notes, seen = [], [], set()
    for g in guards:
        status, note = coverage(client, g.code)
        if status == OFF:
            if g.code not in seen:
                notes.append(f"{g.code} not run under {NAMES[client]}: {note}")
        else:
            run.append(g)
            if status == PARTIAL and g.code not in seen:
                notes.append(f"{g.code} in part: {note}")
        seen.add(g.code)
    return run, notes


def pins() -> dict:
    """client -> {"npm": package, "version": pinned version, "bin": executable name}."""
    import json
    import os

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "client_pins.json"), encoding="utf-8") as f:
        return json.load(f)
