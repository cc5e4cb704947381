"""Per-session state: subagents started and stopped, dispatches seen, scratch locks.

One JSON file per session id, ``<state>/sessions/<id>/state.json``, changed
only under ``state.lock`` beside it (swarmgate.statefile.locked), so hook
processes that run at the same time (Claude Code starts one per event, and
several at once for parallel tool calls) never lose each other's updates.

Shape::

    {"session": ID,
     "procs":  [{"pid", "start", "seen"}],             # session processes seen, newest last
     "agents": {AGENT_ID: {"type", "started", "stopped", "proc", "name", "dispatch",
                           "worktree": {"path", "head"} (isolation "worktree" only)}},
     "dispatches": [{"id" (tool_use_id), "type", "name", "time", "proc", "background",
                     "scratch": [PATH], "prompt": DIGEST, "agent": AGENT_ID | null}]}

A corrupt file is moved aside (``state.json.corrupt-<time>``) and rebuilt
empty, and that is said where the agent reads it: an alert for the session
(C04 at the main agent's next tool call, C01 at the next start) and a
``rebuilt`` entry in the new state, with which D07 tells each dispatch of
the next hour that it counts only the subagents started since.

Liveness. A session is its Claude Code process: the process that runs the
hook commands. ``session_process()`` is the hook's parent (os.getppid()),
walking past a shell that Claude Code may have put in between (``sh -c``);
its pid and start time (/proc/PID/stat field 22) are recorded with each
event. A subagent counts as running when its SubagentStart was seen, its
SubagentStop was not, and the session process recorded at its start is still
the same live process: a crashed session (no SubagentStop will ever come) or
a pid reused by another program never blocks a live session.

Linking a dispatch to the agent it becomes: PreToolUse(Agent) knows the
tool_use_id, name, type and prompt; SubagentStart knows only agent_id and
type. Claude Code 2.1.332 records the dispatch's tool_use_id in the subagent's
``agent-<id>.meta.json`` beside its transcript (``toolUseId``): where it
exists at start, that is the link. Else the agent is linked to the oldest
unlinked dispatch of its type; at stop the link is checked against the
agent's transcript (its first user message is the dispatch prompt) and corrected.

The mutating functions (record_*) are pure functions on the state dict;
``update(session, fn)`` applies one under the lock.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import time

# the session process is found in swarmgate.procinfo (every main agent's hook call asks, so it lives in
# the small module); re-exported for the state's users (S.session_process())
from swarmgate.procinfo import session_process  # noqa: F401

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Callable
    from pathlib import Path
    from typing import TypeVar

    T = TypeVar("T")


MAX_DISPATCHES = 500
MAX_AGENTS = 2000


# --- the session process ---------------------------------------------------------------

def proc_alive(proc: dict) -> bool:
    """A recorded {"pid", "start"} is the same live process (pid reuse reads as dead)."""
    from swarmgate import procinfo

    if not isinstance(proc, dict):
        return False
    return procinfo.holder_alive(proc)


# --- the file ----------------------------------------------------------------------------

def state_path(session_id: str) -> Path:
    from swarmgate import state_paths
    return state_paths.session_dir(session_id) / "state.json"


def lock_path(session_id: str) -> Path:
    from swarmgate import state_paths
    return state_paths.session_dir(session_id) / "state.lock"


def empty(session_id: str) -> dict:
    return {"session": session_id, "procs": [], "agents": {}, "dispatches": []}


REBUILT_NOTE_S = 3600.0  # how long D07 keeps telling that its count restarted after a rebuild


def marker_path(session_id: str) -> Path:
    from swarmgate import state_paths
    return state_paths.session_dir(session_id) / "rebuilt.json"


def _on_corrupt(session_id: str) -> Callable[[str], None]:
    """The report callback for a corrupt state file: it was moved aside (statefile.quarantine);
    say so where the agent will read it (an alert: C04 at the main agent's next tool call, C01 at
    the next session start) and leave a marker the next update folds into the state (D07 tells
    every dispatch of the next hour that its count restarted)."""
    def report(msg: str) -> None:
        import sys

        from swarmgate.alerts import write_alert
        from swarmgate.statefile import write_json_atomic

        print(f"swarmgate: {msg}", file=sys.stderr)
        now = time.time()
        write_alert("session-state-corrupt",
                    f"{msg}. Subagents of this session that started before are no longer known: the limit of "
                    f"running subagents (D07) counts only those started since, and the scratch locks of their "
                    f"dispatches are not released at their hand-back. Check what still runs before dispatching.",
                    source="session-state", session=session_id or None)
        try:
            write_json_atomic(marker_path(session_id), {"time": now, "why": msg})
        except Exception:  # noqa: BLE001 - the alert is the report; the marker only adds D07's note
            pass
    return report


def _marker(session_id: str) -> dict | None:
    from swarmgate.statefile import read_json
    try:
        m = read_json(marker_path(session_id), None)
    except Exception:  # noqa: BLE001
        return None
    return m if isinstance(m, dict) and isinstance(m.get("time"), (int, float)) else None


def rebuilt_note(st: dict, now: float) -> str | None:
    """Pure: the line D07 adds while the state was rebuilt less than REBUILT_NOTE_S ago."""
    r = st.get("rebuilt")
    if not isinstance(r, dict) or not isinstance(r.get("time"), (int, float)) or now - r["time"] > REBUILT_NOTE_S:
        return None
    when = time.strftime("%H:%M:%S", time.localtime(r["time"]))
    return (f"this session's state was corrupt and rebuilt at {when} ({r.get('why') or 'unreadable'}): D07 counts "
            f"only the subagents started since then; ones started before may still run and are not counted. "
            f"Check before dispatching more (their hand-backs, `swarmgate status`).")


def _normal(st: dict, session_id: str) -> dict:
    if not isinstance(st, dict):
        return empty(session_id)
    out = empty(session_id)
    if isinstance(st.get("rebuilt"), dict):
        out["rebuilt"] = st["rebuilt"]
    if isinstance(st.get("procs"), list):
        out["procs"] = [p for p in st["procs"] if isinstance(p, dict)]
    if isinstance(st.get("agents"), dict):
        out["agents"] = {str(k): v for k, v in st["agents"].items() if isinstance(v, dict)}
    if isinstance(st.get("dispatches"), list):
        out["dispatches"] = [d for d in st["dispatches"] if isinstance(d, dict)]
    return out


def load(session_id: str) -> dict:
    """The session's state (empty when none); a corrupt file is reported and rebuilt."""
    from swarmgate.statefile import read_json

    if not session_id:
        return empty("")
    st = _normal(read_json(state_path(session_id), None, report=_on_corrupt(session_id)), session_id)
    m = _marker(session_id)
    if m and "rebuilt" not in st:
        st["rebuilt"] = m
    return st


def update(session_id: str, fn: Callable[[dict], T], timeout: float = 10.0) -> T:
    """Apply ``fn(state) -> result`` under the session lock and save; returns the result."""
    from swarmgate.statefile import ensure_dir, locked, read_json, write_json_atomic
    from swarmgate import state_paths

    ensure_dir(state_paths.session_dir(session_id))
    with locked(lock_path(session_id), timeout=timeout):
        st = _normal(read_json(state_path(session_id), None, report=_on_corrupt(session_id)), session_id)
        m = _marker(session_id)
        if m:
            st["rebuilt"] = m  # folded into the state: kept as long as the state is
            try:
                os.unlink(marker_path(session_id))
            except OSError:
                pass
        result = fn(st)
        if len(st["dispatches"]) > MAX_DISPATCHES:
            st["dispatches"] = st["dispatches"][-MAX_DISPATCHES:]
        if len(st["agents"]) > MAX_AGENTS:
            keep = sorted(st["agents"].items(), key=lambda kv: kv[1].get("started") or 0)[-MAX_AGENTS:]
            st["agents"] = dict(keep)
        write_json_atomic(state_path(session_id), st)
        return result


# --- pure queries ---------------------------------------------------------------------------

def note_proc(st: dict, proc: dict, now: float) -> None:
    procs = st["procs"]
    if procs and procs[-1].get("pid") == proc.get("pid") and procs[-1].get("start") == proc.get("start"):
        procs[-1]["seen"] = now
        return
    procs.append({"pid": proc.get("pid"), "start": proc.get("start"), "seen": now})
    del procs[:-20]


def running(st: dict, alive: Callable[[dict], bool] = proc_alive) -> list[tuple[str, dict]]:
    """(agent_id, entry) of subagents started and not stopped whose session process lives."""
    out = []
    for aid, a in st["agents"].items():
        if a.get("stopped"):
            continue
        if not alive(a.get("proc")):
            continue
        out.append((aid, a))
    out.sort(key=lambda kv: kv[1].get("started") or 0)
    return out


def pending(st: dict, now: float, window: float, alive: Callable[[dict], bool] = proc_alive) -> list[dict]:
    """Dispatches let through in the last ``window`` seconds whose agent has not started yet."""
    return [d for d in st["dispatches"]
            if not d.get("agent") and now - float(d.get("time") or 0) < window and alive(d.get("proc"))]


def dispatch_by_id(st: dict, tool_use_id: str) -> dict | None:
    for d in st["dispatches"]:
        if d.get("id") == tool_use_id:
            return d
    return None


def dispatch_of(st: dict, agent_id: str) -> dict | None:
    a = st["agents"].get(agent_id) or {}
    did = a.get("dispatch")
    if did:
        d = dispatch_by_id(st, did)
        if d is not None:
            return d
    for d in st["dispatches"]:
        if d.get("agent") == agent_id:
            return d
    return None


def stopped_target(st: dict, to: str) -> tuple[str, dict] | None:
    """The subagent a SendMessage ``to`` names when it has already handed back, else None.

    ``to`` may be an agent id or a dispatch name. A name counts as handed back only
    when no running agent and no pending dispatch carries it now (names can be reused).
    """
    if not to:
        return None
    a = st["agents"].get(to)
    if a is not None:
        return (to, a) if a.get("stopped") else None
    named = [(aid, a) for aid, a in st["agents"].items() if a.get("name") == to]
    if not named:
        return None
    if any(not a.get("stopped") for _, a in named):
        return None
    if any(d.get("name") == to and not d.get("agent") for d in st["dispatches"]):
        return None
    named.sort(key=lambda kv: kv[1].get("stopped") or 0)
    return named[-1]


# --- pure mutations ---------------------------------------------------------------------

def record_dispatch(st: dict, *, tool_use_id: str, agent_type: str, name: str | None, proc: dict,
                    now: float, background: bool, scratch: list, prompt_digest: str) -> dict:
    d = {"id": tool_use_id or f"noid-{time.time_ns():x}", "type": agent_type, "name": name or None,
         "time": now, "proc": proc, "background": bool(background), "scratch": list(scratch),
         "prompt": prompt_digest, "agent": None}
    st["dispatches"] = [x for x in st["dispatches"] if x.get("id") != d["id"]]
    st["dispatches"].append(d)
    return d


def record_start(st: dict, agent_id: str, agent_type: str, proc: dict, now: float,
                 worktree: dict | None = None, dispatch_id: str = "") -> dict:
    """Mark ``agent_id`` started; link it to its dispatch: the one ``dispatch_id`` names (the
    tool_use_id Claude Code records in the subagent's meta.json), else the oldest unlinked
    dispatch of its type (compared case-insensitively).
    ``worktree`` ({"path", "head"}): the git worktree it works in (isolation "worktree"),
    registered as its work directory (H01 checks it at hand-back)."""
    note_proc(st, proc, now)
    a = st["agents"].get(agent_id)
    if a is None:
        a = {"type": agent_type, "started": now, "stopped": None, "proc": proc, "name": None,
             "dispatch": None}
        st["agents"][agent_id] = a
    elif a.get("stopped"):
        # the same agent started again (a continuation that got through): running once more
        a.update(started=now, stopped=None, proc=proc, resumed=(a.get("resumed") or 0) + 1)
    if worktree:
        a["worktree"] = dict(worktree)
    link_exact(st, agent_id, dispatch_id)
    if not a.get("dispatch"):
        for d in st["dispatches"]:
            if not d.get("agent") and str(d.get("type") or "").lower() == agent_type.lower():
                d["agent"] = agent_id
                a["dispatch"] = d.get("id")
                a["name"] = d.get("name")
                break
    return a


def link_exact(st: dict, agent_id: str, dispatch_id: str) -> bool:
    """Link ``agent_id`` to the dispatch whose tool_use_id is ``dispatch_id`` (what the client wrote
    in the subagent's meta.json), undoing a guessed link; True when linked so."""
    a = st["agents"].get(agent_id)
    exact = dispatch_by_id(st, dispatch_id) if dispatch_id and a is not None else None
    if exact is None:
        return False
    other = exact.get("agent")
    if other and other != agent_id and st["agents"].get(other, {}).get("linked_by") == "meta.json":
        return False   # another agent's own record names it
    old = dispatch_by_id(st, a.get("dispatch") or "") if a.get("dispatch") else None
    if old is not None and old is not exact:
        old["agent"] = None
    if other and other != agent_id and other in st["agents"]:
        st["agents"][other].update(dispatch=None, name=None)   # its guess was this one: it is re-linked at its stop
        if old is not None and old is not exact:
            old["agent"] = other
            st["agents"][other].update(dispatch=old.get("id"), name=old.get("name"))
    exact["agent"] = agent_id
    a.update(dispatch=exact.get("id"), name=exact.get("name"), linked_by="meta.json")
    return True


def relink(st: dict, agent_id: str, prompt_digest: str) -> None:
    """Correct the dispatch link of ``agent_id`` from its real prompt's digest."""
    if not prompt_digest:
        return
    a = st["agents"].get(agent_id)
    if a is None or a.get("linked_by") == "meta.json":   # the client said which dispatch it is
        return
    target = None
    for d in reversed(st["dispatches"]):
        if d.get("prompt") == prompt_digest and str(d.get("type") or "").lower() == str(a.get("type") or "").lower():
            if d.get("agent") == agent_id:
                return
            if target is None or not d.get("agent"):
                target = d
    if target is None:
        return
    old = dispatch_by_id(st, a.get("dispatch") or "") if a.get("dispatch") else None
    other = target.get("agent")
    target["agent"] = agent_id
    a["dispatch"] = target.get("id")
    a["name"] = target.get("name")
    if old is not None and old is not target:
        old["agent"] = other
        if other and other in st["agents"]:
            st["agents"][other]["dispatch"] = old.get("id")
            st["agents"][other]["name"] = old.get("name")
    elif other and other in st["agents"]:
        st["agents"][other]["dispatch"] = None


def record_stop(st: dict, agent_id: str, agent_type: str, proc: dict, now: float,
                prompt_digest: str = "") -> dict:
    """Mark ``agent_id`` stopped (creating the entry when its start was missed)."""
    note_proc(st, proc, now)
    a = st["agents"].get(agent_id)
    if a is None:
        a = record_start(st, agent_id, agent_type, proc, now)
        a["started"] = None
    relink(st, agent_id, prompt_digest)
    a["stopped"] = now
    return a


# --- the hook side: load + record in one call --------------------------------------------

def start(session_id: str, agent_id: str, agent_type: str, now: float | None = None,
          worktree: dict | None = None, dispatch_id: str = "") -> dict:
    proc = session_process()
    t = time.time() if now is None else now
    return update(session_id, lambda st: dict(record_start(st, agent_id, agent_type, proc, t, worktree,
                                                           dispatch_id)))


def subagent_meta(transcript_path: str, session_id: str, agent_id: str) -> dict:
    """What Claude Code 2.1.332 records beside a subagent's transcript
    (``<project dir>/<session>/subagents/agent-<id>.meta.json``: agentType, isBuiltIn, toolUseId of
    the dispatch, ...), {} when there is none (older clients, other clients)."""
    import json

    if not (transcript_path and session_id and agent_id) or "/" in agent_id or "/" in session_id:
        return {}
    path = os.path.join(os.path.dirname(transcript_path), session_id, "subagents", f"agent-{agent_id}.meta.json")
    try:
        from swarmgate.bounded_read import read_text
        data = json.loads(read_text(path, 1 << 16))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def first_user_prompt(transcript_path: str, max_lines: int = 50) -> str:
    """The text of the first user message of a transcript (a subagent's dispatch prompt)."""
    import json

    if not transcript_path:
        return ""
    from swarmgate.bounded_read import read_text
    try:
        head = read_text(transcript_path, 1 << 20, truncate=True)  # the first lines are all it needs
        for i, line in enumerate(head.split("\n")):
            if i >= max_lines:
                break
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("type") != "user":
                continue
            msg = rec.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                texts = [b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text"]
                if texts:
                    return "\n".join(texts)
    except OSError:
        return ""
    return ""
