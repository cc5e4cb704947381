"""PostToolUse on Bash/Monitor (SPEC §4.7): the command history, and repeats flagged.

Every finished shell call appends one JSON line to
``state_paths.command_history_path()`` (machine-wide, so the host report and
swarm-watch read one history)::

    {"time", "session", "agent_id", "agent_type", "tool", "cwd", "command" (normalised:
     whitespace runs collapsed), "failed", "duration_ms", "exit_code", "interrupted", "output_bytes",
     "output_sha" (sha256 of stdout + stderr, 16 hex)}

Exit code: Claude Code 2.1.332 sends PostToolUse only for calls that
succeeded (measured: `echo out; exit 3` fired no PostToolUse); a call that
failed comes as PostToolUseFailure with ``error`` ("Exit code 3\nout"), which
P01 records too ("failed": true, output = the error text). So: the code
Claude Code reports (a field, or "exit code N" in the text), else 0 for
PostToolUse and 1 for PostToolUseFailure; null for an interrupted call.

The entry is written in P01's act (``record_command``); the check judges from
the history as it stands plus this entry, writing nothing.

P01 adds a line to the agent's context when the same command ran for the
REPEAT-th time (3) in a row in this session with unchanged output (and at
every REPEAT-th run after that): running it again will not tell anything new.

C04 brings alerts to the main agent: alerts written for this session (H02's
transcript audit, swarm-watch, the runner) since it last looked are added,
as a red line, to the context of its next tool call, and its act
(``mark_alerts_read``) marks those read. Cheap when there is nothing new: the
alert log's size and mtime are compared with what this session saw last.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from pathlib import Path

    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


REPEAT = 3
TAIL_BYTES = 512 * 1024   # of the history read to count repeats


def normalise(command: str) -> str:
    return " ".join(command.split())


def _text(v: object) -> str:
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    import json
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def exit_code_of(resp: object) -> int | None:
    """The exit code Claude Code reported, when it did (field or "Exit code N" text)."""
    if isinstance(resp, dict):
        for k in ("exit_code", "exitCode", "returnCode", "return_code", "code"):
            v = resp.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        texts = [resp.get("returnCodeInterpretation"), resp.get("stderr")]
    else:
        texts = [resp]
    import re
    for t in texts:
        if isinstance(t, str):
            m = re.search(r"\bexit code[: ]+(-?\d+)", t, re.IGNORECASE)
            if m:
                return int(m.group(1))
    return None


def entry(event: HookEvent, now: float) -> dict:
    import hashlib

    failed = event.name == "PostToolUseFailure"
    resp = event.payload.get("error") if failed else event.payload.get("tool_response")
    if isinstance(resp, dict):
        out = _text(resp.get("stdout")) + "\0" + _text(resp.get("stderr"))
        interrupted = bool(resp.get("interrupted"))
    else:
        out = _text(resp)
        interrupted = bool(event.payload.get("is_interrupt")) if failed else False
    data = out.encode("utf-8", "replace")
    code = exit_code_of(resp)
    if code is None and failed and not interrupted:
        code = 1  # failed without saying how: at least not 0
    if code is None and not interrupted and not failed:
        # Claude Code 2.1.332 sends PostToolUse only for calls that succeeded; a command that
        # exits non-zero goes to PostToolUseFailure ("Exit code N" in `error`) instead
        code = 0
    dur = event.payload.get("duration_ms")
    return {"time": round(now, 3), "session": event.session_id, "failed": failed, "agent_id": event.agent_id,
            "agent_type": event.agent_type, "tool": event.tool_name, "cwd": event.cwd,
            "command": normalise(event.shell_command or ""),
            "duration_ms": dur if isinstance(dur, (int, float)) and not isinstance(dur, bool) else None,
            "exit_code": code, "interrupted": interrupted,
            "output_bytes": len(data) - 1 if isinstance(resp, dict) else len(data),
            "output_sha": hashlib.sha256(data).hexdigest()[:16]}


def repeats(history: list, rec: dict) -> int:
    """How many of the latest runs of rec's command in rec's session (rec included, last) have rec's output."""
    n = 0
    for r in reversed(history):
        if r.get("session") != rec["session"] or r.get("command") != rec["command"]:
            continue
        if r.get("output_sha") != rec["output_sha"]:
            break
        n += 1
    return n


def pending_entry(event: HookEvent) -> dict:
    """This call's history entry and how many times in a row it has now run with this output,
    judged from the history as it stands (memoised on the event; nothing written)."""
    def build() -> dict:
        import time

        from swarmgate.state_paths import command_history_path
        from swarmgate.statefile import tail_jsonl

        rec = entry(event, time.time())
        n = repeats(tail_jsonl(command_history_path(), TAIL_BYTES) + [rec], rec) if rec["command"] else 0
        return {"entry": rec, "repeats": n}
    return event.derived("command_history", build)


def record_command(event: HookEvent, config: Config) -> None:  # noqa: ARG001 - the act signature
    """P01's act: append this call's entry to the history (the call has run)."""
    from swarmgate.state_paths import command_history_path
    from swarmgate.statefile import append_jsonl

    if event.shell_command:
        append_jsonl(command_history_path(), pending_entry(event)["entry"])


def check_p01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.break_switch import broken

    if not event.shell_command:
        return None
    r = pending_entry(event)
    if broken("p01-no-repeat-flag") or r["repeats"] < REPEAT or r["repeats"] % REPEAT:
        return None  # said at the 3rd identical run, then every 3rd: a hint, not noise
    e = r["entry"]
    cmd = e["command"] if len(e["command"]) <= 160 else e["command"][:157] + "..."
    return G.Finding(
        "P01", f"swarmgate [P01]: `{cmd}` has now run {r['repeats']} times in a row in this session with the same "
               f"output ({e['output_bytes']} bytes, sha {e['output_sha']}). Running it again will not tell you "
               f"anything new: change something first, or wait on a signal (a background task's "
               f"notification) instead of polling.",
        decision=G.CONTEXT)


# --- C04 ---------------------------------------------------------------------------

def _seen_path(session: str) -> Path:
    from swarmgate import state_paths
    return state_paths.session_dir(session) / "alerts-seen"


def unread_alerts(event: HookEvent) -> dict | None:
    """{"sig", "fresh"}: alerts for this session the main agent has not seen, judged without
    marking them (memoised on the event); None when there is nothing to look at."""
    def build() -> dict | None:
        from swarmgate import lean_os as os
        import time

        from swarmgate.alerts import unread
        from swarmgate.state_paths import alerts_dir
        from swarmgate.statefile import read_text

        log = os.path.join(str(alerts_dir()), "alerts.jsonl")
        try:
            st = os.stat(log)
        except OSError:
            return None
        sig = f"{st.st_size}:{st.st_mtime_ns}"
        if (read_text(_seen_path(event.session_id)) or "").strip() == sig:
            return None
        fresh = [a for a in unread("main:" + event.session_id, mark=False, since=time.time() - 12 * 3600)
                 if a.get("session") in (None, "", event.session_id)]
        return {"sig": sig, "fresh": fresh}
    return event.derived("unread_alerts", build)


def _c04_applies(event: HookEvent) -> bool:
    from swarmgate.break_switch import broken

    return not (event.agent_id or not event.session_id or broken("c04-no-alerts"))


def check_c04(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not _c04_applies(event):
        return None
    found = unread_alerts(event)
    if not found or not found["fresh"]:
        return None
    fresh = found["fresh"]
    lines = [f"- [{a.get('source') or a.get('kind') or 'alert'}] {str(a.get('message') or '')[:300]}"
             for a in fresh[-5:]]
    more = f" (showing the last 5 of {len(fresh)})" if len(fresh) > 5 else ""
    return G.Finding("C04", f"RED: swarmgate alerts for this session{more}:\n" + "\n".join(lines),
                     decision=G.CONTEXT)


def mark_alerts_read(event: HookEvent, config: Config) -> None:  # noqa: ARG001 - the act signature
    """C04's act: the alerts it showed are read (the reader's cursor and the log's signature)."""
    from swarmgate.alerts import mark_read
    from swarmgate.statefile import write_text_atomic

    if not _c04_applies(event):
        return
    found = unread_alerts(event)
    if not found:
        return
    if found["fresh"]:
        mark_read("main:" + event.session_id, max(float(a.get("time") or 0) for a in found["fresh"]))
    write_text_atomic(_seen_path(event.session_id), found["sig"] + "\n")


# output_sha of stdout "3 passed\n" with empty stderr (kept literal: no hashlib at import;
# tests/hooks check it against entry())
_SHA_3_PASSED = "898c9f4172edc7ae"


def _hist(n: int, command: str = "pytest -q tests/unit") -> dict:
    import json
    sha = _SHA_3_PASSED
    recs = [{"time": 1.0 + i, "session": "selftest-session", "command": command, "output_sha": sha}
            for i in range(n)]
    return {".selftest-state/commands/history.jsonl": "".join(json.dumps(r) + "\n" for r in recs)}


def _bash(command: str = "pytest -q tests/unit", stdout: str = "3 passed\n", agent: bool = False) -> dict:
    p = {"tool_name": "Bash", "tool_input": {"command": command, "description": "run the unit tests"},
         "tool_use_id": "toolu_p01", "duration_ms": 1200,
         "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False}}
    if agent:
        p.update(agent_id="a5", agent_type="implementer")
    return p


def _alert(session: str = "selftest-session") -> dict:
    import json
    rec = {"id": "1-1", "time": 4102444800.0, "kind": "transcript-audit", "source": "H02",
           "message": "subagent a9 ran `cargo test --workspace` (B01)", "session": session}
    return {".selftest-state/alerts/alerts.jsonl": json.dumps(rec) + "\n"}


GUARDS = (
    G.Guard(
        code="P01", summary="PostToolUse Bash/Monitor: command history; flag a command repeated with unchanged output",
        events=("PostToolUse", "PostToolUseFailure"), tools=G.SHELL_TOOLS, check=check_p01, advisory=True,
        act=record_command,
        doc=G.GuardDoc(
            why="An agent that re-runs the same check and gets the same output is polling or stuck; the third "
                "identical result is the moment to stop and change something. The history (duration, exit "
                "code, output size) is also what the host report and swarm-watch read.",
            example="`pytest -q tests/unit` run three times in a row, same output each time",
            instead="Change something before re-running, or wait for a notification instead of polling.",
            exceptions="Runs with different output, and other sessions' runs, do not count. Every call is "
                       "recorded whether or not it is flagged."),
        breaks={"p01-no-repeat-flag": "repeated commands with unchanged output are not flagged"},
        cases=lambda: (
            G.Case("third-identical-run", "PostToolUse", _bash(), fires=True, breaks=("p01-no-repeat-flag",),
                   files=_hist(2)),
            G.Case("third-identical-run-subagent", "PostToolUse", _bash(agent=True), fires=True,
                   breaks=("p01-no-repeat-flag",), files=_hist(2)),
            G.Case("second-run", "PostToolUse", _bash(), fires=False, files=_hist(1)),
            G.Case("output-changed", "PostToolUse", _bash(stdout="2 passed, 1 failed\n"), fires=False,
                   files=_hist(2)),
            G.Case("failed-run-recorded-not-flagged", "PostToolUseFailure",
                   {"tool_name": "Bash", "tool_input": {"command": "pytest -q tests/unit"}, "tool_use_id": "t",
                    "error": "Exit code 1\n1 failed", "duration_ms": 300}, fires=False, files=_hist(2)),
        )),
    G.Guard(
        code="C04", summary="PostToolUse (main agent): alerts written for this session since it last looked",
        events=("PostToolUse",), tools=(), check=check_c04, advisory=True, act=mark_alerts_read,
        doc=G.GuardDoc(
            why="An alert (a hook that did not fire for a subagent, a runaway process) is useless in a file "
                "nobody reads; the main agent sees it at its next tool call.",
            example="H02 found `cargo test --workspace` in a subagent's transcript -> next tool call of the main agent",
            instead="Nothing to do; read the alert and act on it.",
            exceptions="Subagents are not told (the main agent decides). Alerts of other sessions are not shown."),
        breaks={"c04-no-alerts": "alerts are not surfaced to the main agent"},
        cases=lambda: (
            G.Case("unread-alert", "PostToolUse", _bash("ls"), fires=True, breaks=("c04-no-alerts",),
                   files=_alert()),
            G.Case("other-sessions-alert", "PostToolUse", _bash("ls"), fires=False, files=_alert("other")),
            G.Case("subagent-not-told", "PostToolUse", _bash("ls", agent=True), fires=False, files=_alert()),
            G.Case("no-alerts", "PostToolUse", _bash("ls"), fires=False),
        )),
)
