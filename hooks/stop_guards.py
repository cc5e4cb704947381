"""Stop and SubagentStop (SPEC §4.6): H01 scratch check, H02 transcript audit, S01 round
closed, and C03, the short summary of what they checked.

SubagentStop, judged once per event (``stop_outcome``, pure):
1. the agent's dispatch is found in the session state as it stands (the link
   made at SubagentStart is checked against the first user message of its
   transcript, which is its dispatch prompt);
2. H01: directories the agent must clean up before handing back: those
   registered under it by `work-dir-owner` (``[workdirs] root``, owner record
   with this session and ``agent`` = its id or name) and the ``scratch:``
   directories of its dispatch. Any that still exist refuse the hand-back
   unless its last message says ``<path> not deleted: <reason>``;
3. H02: the transcript (``agent_transcript_path``) is read and every shell and
   file tool call that ran is judged again through the engine's own path
   (``hook_engine.judge_recorded``: the registered PreToolUse guards, actor =
   the subagent's type). A call a guard refuses now but that ran anyway means
   a hook did not fire: a red line goes to the person now. H02 never blocks.

Act (``finish_stop``), only when the hand-back goes through (H01 silent,
warn/off, or ``stop_hook_active``: hook_protocol.goes_ahead): the stop is
recorded in the session state (the link made again under the lock), the
agent's D16 scratch locks are released, and H02's misses become an alert
record (swarmgate.alerts, kind ``transcript-audit``) that reaches the main
agent at its next tool call (C04) or session start (C01).

Stop (main agent): S01 refuses to end while the current scheduling record
(swarmgate.agents.records.current_record) has tasks with no verdict, or
tasks removed without one, unless work is still in flight (the payload's
``background_tasks`` or ``session_crons``, or subagents of this session still
running): then the agent is pausing, not ending the round.

Both respect ``stop_hook_active``: the engine never blocks a stop that a stop
hook already continued once.
"""
from __future__ import annotations

import os

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


MAX_AUDITED_CALLS = 400
AUDIT_TOOLS = G.SHELL_TOOLS + G.FILE_TOOLS + ("PowerShell",)   # the calls that change the machine or the files
# first-line marks of a tool_result for a call that did not run: a hook's deny
# ("PreToolUse:Bash hook error: ..."), Claude Code's permission refusals
_NOT_RUN_MARKS = ("hook error", "requires approval", "doesn't want to proceed", "swarmgate refused")


def _broken(name: str) -> bool:
    from swarmgate.break_switch import broken
    return broken(name)


def _abs(path: str, event: HookEvent) -> str:
    if not path:
        return ""
    return path if os.path.isabs(path) else os.path.join(event.cwd or event.repo, path)


# --- H01 ----------------------------------------------------------------------------

def excused(path: str, message: str) -> bool:
    """True when ``message`` says ``<path> not deleted: <reason>`` (reason non-empty)."""
    import re

    if not message:
        return False
    pat = r"`?" + re.escape(path.rstrip("/")) + r"/?`?\s+not deleted\s*:\s*\S"
    return re.search(pat, message) is not None


WORKTREE_SOURCE = "your git worktree"   # how H01 names an agent's worktree among the leftovers


def judge_h01(dirs: list, message: str) -> Finding | None:
    """dirs = [(as named, absolute path, where it came from)] that still exist."""
    left = [(named, ab, src) for named, ab, src in dirs
            if not (excused(named, message) or excused(ab, message))]
    if not left:
        return None
    shown = "; ".join(f"{named} ({src})" for named, _, src in left)
    first = left[0][0]
    from shlex import quote
    trees = [named for named, _, src in left if src.startswith(WORKTREE_SOURCE)]
    registered = [ab for _, ab, src in left if src.startswith("registered by work-dir-owner")]
    if trees:
        return G.Finding(
            "H01", f"you leave these behind: {shown}. Claude Code keeps a worktree that holds changes, and "
                   f"nobody knows it is there unless you say so.",
            f"if the changes are your result, say so in your last message: `{trees[0]} not deleted: <reason>` "
            f"(e.g. `{trees[0]} not deleted: holds the change on its branch for the main agent to merge`); "
            f"if they are not needed, discard them (`git checkout -- . && git clean -fd`, and reset commits "
            f"you made) so that Claude Code removes the worktree; then hand back again.")
    return G.Finding(
        "H01", f"you created these and they still exist: {shown}. Build directories and repository "
               f"copies left behind fill the disk and confuse the next agent.",
        f"delete them (`rm -rf {' '.join(quote(ab) for _, ab, _ in left)}`) and hand back again; "
        f"if one must stay, say so in your last message: `{first} not deleted: <reason>`"
        + (f" (`work-dir-owner release {quote(registered[0])}` only drops its ownership file: the directory "
           f"stays)" if registered else "") + ".")


def _worktree_leftover(event: HookEvent, wt: dict | None) -> tuple | None:
    """(as named, path, where it came from) for the agent's worktree when it holds changes (Claude Code
    then keeps it); None when it has none or it is clean (Claude Code removes it after the hand-back)."""
    if not wt or wt["changes"] == []:
        return None
    rel = os.path.relpath(wt["path"], event.repo)
    named = wt["path"] if rel.startswith("..") else rel
    ch = wt["changes"]
    what = "git cannot tell what it holds" if ch is None else (
        f"{len(ch)} change(s): " + ", ".join(ch[:4]) + (" ..." if len(ch) > 4 else ""))
    return (named, wt["path"], f"{WORKTREE_SOURCE} (isolation: worktree), {what}")


def _h01_dirs(event: HookEvent, config: Config, dispatch: dict | None, agent: dict | None) -> list:
    out, seen = [], set()
    names = {event.agent_id or ""}
    if agent and agent.get("name"):
        names.add(agent["name"])
    from swarmgate.agents.work_dir_owner import registrations, work_root
    # a worktree agent's work-dir-owner reads the config of its own tree: the root under it counts too
    bases = tuple(dict.fromkeys(work_root(config, b) for b in (event.repo, event.root) if b))
    for root_abs in bases:
        for rec in registrations(root_abs, session=event.session_id):
            if rec.get("agent") and rec.get("agent") in names:
                p = rec["path"]
                if p not in seen:
                    seen.add(p)
                    out.append((p, p, f"registered by work-dir-owner: {rec.get('purpose') or 'no purpose'}"))
    for p in (dispatch or {}).get("scratch") or []:
        ab = os.path.realpath(_abs(os.path.expanduser(p), event))
        if ab not in seen:
            seen.add(ab)
            out.append((p, ab, "named `scratch:` in your dispatch"))
    return [x for x in out if os.path.isdir(x[1])]


# --- H02 ----------------------------------------------------------------------------

def transcript_calls(path: str, limit: int = MAX_AUDITED_CALLS) -> tuple[list, int]:
    """([(tool_use_id, tool name, input, ran, cwd)], lines read) from a transcript (JSONL).

    ``ran`` is False when the first line of the call's error result says a hook or the
    permission system refused it; True when it ran (a failing command ran too: "Exit code 1")
    or no result was written (the call was cut short). Lines read is -1 when the file cannot
    be opened (``unreadable(path)`` says why): then nothing was judged, which must never read
    as "nothing to report".
    """
    import json

    from swarmgate.bounded_read import TRANSCRIPT_MAX, read_text

    uses: dict = {}
    order: list = []
    results: dict = {}
    n = 0
    try:
        text = read_text(path, TRANSCRIPT_MAX)
    except OSError:
        return [], -1
    for line in text.split("\n"):
        if not line:
            continue
        n += 1
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and b.get("name") in AUDIT_TOOLS and len(order) < limit:
                tid = str(b.get("id") or f"line{n}")
                uses[tid] = (b.get("name"), b.get("input") if isinstance(b.get("input"), dict) else {},
                             rec.get("cwd") or "")
                order.append(tid)
            elif b.get("type") == "tool_result":
                results[str(b.get("tool_use_id") or "")] = b
    out = []
    for tid in order:
        name, ti, cwd = uses[tid]
        res = results.get(tid)
        ran = True
        if res is not None and res.get("is_error"):
            text = res.get("content")
            if isinstance(text, list):
                text = " ".join(str(x.get("text", "")) for x in text if isinstance(x, dict))
            first = (str(text or "").strip().splitlines() or [""])[0].lower()
            if first.startswith("pretooluse:") or any(m in first for m in _NOT_RUN_MARKS):
                ran = False
        out.append((tid, name, ti, ran, cwd))
    return out, n


def unreadable(path: str) -> str:
    """Why ``path`` cannot be read as a transcript (for the line that says so)."""
    from swarmgate.bounded_read import TRANSCRIPT_MAX, probe

    why = probe(path)
    if why is None:
        try:
            if os.path.getsize(path) > TRANSCRIPT_MAX:
                return f"it is larger than {TRANSCRIPT_MAX >> 20} MiB"
        except OSError as e:
            return e.strerror or type(e).__name__
        return "it could be opened a moment ago"
    return why


def audit(event: HookEvent, config: Config, calls: list) -> list:
    """[(tool name, what, [findings])] of calls that ran but that a guard refuses now: each call
    judged again through the engine's own path (hook_engine.judge_recorded: the registered
    refusing PreToolUse guards of its tool, with the current config). Untimed (H02 itself runs
    within its budget); a guard that crashes on old input is not evidence."""
    from swarmgate.hook_engine import judge_recorded

    out = []
    for tid, name, ti, ran, cwd in calls:
        if not ran:
            continue
        payload = {"session_id": event.session_id, "transcript_path": event.transcript_path,
                   "cwd": cwd or event.cwd, "hook_event_name": "PreToolUse", "tool_name": name,
                   "tool_input": ti, "tool_use_id": tid, "agent_id": event.agent_id or "audited-subagent",
                   "agent_type": event.agent_type or "subagent"}
        found = [f for f in judge_recorded(payload, config, event.repo, timed=False, failures=False)
                 if f.decision in (G.DENY, G.ASK, G.WARN)]
        if found:
            what = (ti.get("command") if name in G.SHELL_TOOLS else None) or " ".join(
                str(ti.get(k)) for k in ("file_path", "notebook_path") if isinstance(ti.get(k), str)) or name
            out.append((name, what, found))
    return out


def _short(text: str, n: int = 160) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[:n - 3] + "..."


def judge_h02(misses: list, agent: str) -> Finding | None:
    if not misses:
        return None
    lines = [f"- {name} `{_short(what)}`: {', '.join(sorted({f.code for f in found}))} "
             f"({_short(found[0].message, 200)})" for name, what, found in misses[:10]]
    more = f"\n- ... and {len(misses) - 10} more" if len(misses) > 10 else ""
    return G.Finding(
        "H02", f"RED: {len(misses)} call(s) of subagent {agent} ran although a guard refuses them: a hook did "
               f"not fire for them. Treat their results with suspicion.\n" + "\n".join(lines) + more,
        decision=G.CONTEXT)


# --- SubagentStop: judged from the state as it stands; recorded in the act ---------------

def _agent_view(event: HookEvent, st: dict, proc: dict, now: float, digest: str) -> tuple:
    """(dispatch, agent) of the stopping agent in ``st``, after linking it as the act will (in
    place: on a loaded copy when judging, on the locked state in the act)."""
    from swarmgate.hooks import session_state as S

    aid = event.agent_id or ""
    if aid and aid not in st["agents"]:
        S.record_start(st, aid, event.agent_type or "", proc, now)["started"] = None
    if aid:
        # the client's own record of which dispatch this agent is (meta.json toolUseId), where it
        # exists; else the transcript's first message (the dispatch prompt)
        meta = S.subagent_meta(event.transcript_path, event.session_id, aid)
        S.link_exact(st, aid, str(meta.get("toolUseId") or ""))
        S.relink(st, aid, digest)
    d = S.dispatch_of(st, aid) if aid else None
    return (dict(d) if d else None), st["agents"].get(aid)


def _stop_facts(event: HookEvent) -> dict:
    """What the judge and the act of a SubagentStop share (memoised on the event)."""
    def build() -> dict:
        import time

        from swarmgate.hooks import session_state as S
        from swarmgate.hooks.dispatch_prompt_parse import prompt_digest

        p = event.payload
        tpath = _abs(str(p.get("agent_transcript_path") or ""), event)
        return {"now": time.time(), "proc": S.session_process(), "transcript": tpath,
                "digest": prompt_digest(S.first_user_prompt(tpath)) if tpath else "",
                "message": p.get("last_assistant_message") if isinstance(p.get("last_assistant_message"), str)
                else ""}
    return event.derived("subagent_stop_facts", build)


def stop_outcome(event: HookEvent, config: Config) -> dict:
    """H01, H02 and C03's judgement of a SubagentStop (memoised; pure: the session state is read
    as it stands, nothing recorded, no lock taken, no alert written)."""
    return event.derived("subagent_stop_outcome", lambda: _stop_outcome(event, config))


def _stop_outcome(event: HookEvent, config: Config) -> dict:
    from swarmgate.hooks import session_state as S

    f = _stop_facts(event)
    out: dict = {"H01": None, "H02": None, "dirs": [], "calls": 0, "misses": [],
                 "transcript": f["transcript"], "unread": "", "worktree": None}
    h01 = config.guard_mode("H01") != "off" and not _broken("h01-allow-leftovers")
    if event.session_id:
        d, a = _agent_view(event, S.load(event.session_id), f["proc"], f["now"], f["digest"])
    else:
        d, a = None, None
    out["dirs"] = _h01_dirs(event, config, d, a) if h01 else []
    if h01:
        from swarmgate.hooks.derivations import get
        wt = out["worktree"] = get(event, config, "agent_worktree")
        left = _worktree_leftover(event, wt)
        if left is not None and left[1] not in {x[1] for x in out["dirs"]}:
            out["dirs"].append(left)
    out["H01"] = judge_h01(out["dirs"], f["message"]) if h01 else None

    tpath = f["transcript"]
    if config.guard_mode("H02") != "off" and tpath and not _broken("h02-no-audit"):
        aid = event.agent_id or ""
        who = f"{aid or '?'} ({event.agent_type or '?'})"
        calls, n = transcript_calls(tpath)
        if n < 0:
            out["unread"] = unreadable(tpath)
            out["H02"] = G.Finding(
                "H02", f"H02 could not read the transcript of subagent {who} ({tpath}: {out['unread']}): "
                       f"none of its calls was re-judged, so a hook that did not fire would go unnoticed. "
                       f"Re-judge it by hand once the file is readable: `swarmgate replay {tpath}`.",
                decision=G.CONTEXT)
            return out
        out["calls"] = sum(1 for c in calls if c[3])
        out["misses"] = audit(event, config, calls)
        out["H02"] = judge_h02(out["misses"], who)
    if config.guard_mode("H02") != "off" and not _broken("h02-no-audit"):
        out["H02"] = with_heavy_sightings(out["H02"], event)
    return out


def with_heavy_sightings(finding: Finding | None, event: HookEvent) -> Finding | None:
    """H02's red line also names the heavy programs seen running in this subagent's containment
    cgroup (X03 and swarm-watch wrote them as alerts): a run no other layer stopped."""
    from swarmgate.alerts import all_alerts

    aid = event.agent_id or ""
    if not aid:
        return finding
    seen = [a for a in all_alerts() if a.get("kind") == "heavy-in-agent-cgroup" and a.get("agent") == aid
            and a.get("session") in (None, "", event.session_id)]
    if not seen:
        return finding
    lines = "\n".join(f"- pid {a.get('pid')} `{_short(a.get('command') or '', 120)}` (heavy pattern "
                      f"`{a.get('pattern')}`)" for a in seen[:10])
    text = (f"RED: {len(seen)} heavy program(s) ran inside subagent {aid}'s containment cgroup although nothing "
            f"authorized them (found by X03 / swarm-watch):\n{lines}")
    if finding is None:
        return G.Finding("H02", text, decision=G.CONTEXT)
    return G.Finding("H02", finding.message + "\n" + text, finding.way_out, finding.decision)


def finish_stop(event: HookEvent, config: Config) -> Finding | None:
    """The act of H01, H02 and C03 (the hand-back goes through): record the stop in the session
    state, release the agent's D16 scratch locks, write H02's alert. Returns C03's summary with
    the locks released, in place of the judged one."""
    from swarmgate.hooks import scratch_locks
    from swarmgate.hooks import session_state as S

    f = _stop_facts(event)
    o = stop_outcome(event, config)
    aid = event.agent_id or ""
    released: list = []
    if event.session_id and aid:
        info: dict = {}

        def step(st: dict) -> None:
            info["dispatch"], _ = _agent_view(event, st, f["proc"], f["now"], f["digest"])
            S.record_stop(st, aid, event.agent_type or "", f["proc"], f["now"], f["digest"])

        S.update(event.session_id, step)
        d = info.get("dispatch")
        if d and d.get("scratch"):
            released = scratch_locks.release(event.session_id, d.get("id") or "", d["scratch"],
                                             event.cwd or event.repo)
        if o["misses"]:
            from swarmgate.alerts import write_alert
            who = f"{aid} ({event.agent_type or '?'})"
            write_alert("transcript-audit",
                        f"subagent {who} ran {len(o['misses'])} call(s) a guard refuses: "
                        + "; ".join(f"`{_short(w, 80)}` ({', '.join(sorted({x.code for x in fs}))})"
                                    for _, w, fs in o["misses"][:5]),
                        source="H02", session=event.session_id or None, agent=aid or None,
                        transcript=f["transcript"])
    return _c03_subagent(event, o, released) if released and not _broken("c03-no-summary") else None


def check_h01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    return stop_outcome(event, config)["H01"]


def check_h02(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    return stop_outcome(event, config)["H02"]


# --- S01 ----------------------------------------------------------------------------

def in_flight(event: HookEvent) -> list:
    """What is still running for this session (then a Stop is a pause, not the end of a round)."""
    from swarmgate.hooks import session_state as S

    p = event.payload
    out = []
    for t in p.get("background_tasks") or []:
        if isinstance(t, dict) and str(t.get("status", "running")).lower() in ("running", "pending", ""):
            out.append(f"{t.get('type') or 'task'} {t.get('description') or t.get('id') or ''}".strip())
    for c in p.get("session_crons") or []:
        if isinstance(c, dict):
            out.append(f"wake-up {c.get('id') or c.get('cron') or ''}".strip())
    if event.session_id:
        running = S.running(S.load(event.session_id))
        for aid, a in running:
            out.append(f"subagent {aid} ({a.get('type') or '?'})")
        out += _reminder_wake(event.session_id, {aid for aid, _ in running})
    return list(dict.fromkeys(out))


def _reminder_wake(session: str, running: set) -> list:
    """A reminder the main agent set with `remind` (T01's way-out) that will wake it: a wake-up like the
    client's own, so the idle Stop that waits for it is a pause (S01 refused it while the round was open,
    and the agent that followed T01 was told to give verdicts instead of waiting). Not where nothing can
    wake the session (`claude -p` without streaming input: `remind` says so when it is set)."""
    from swarmgate.agents import reminders as Rm

    due = Rm.next_due(session, None, running)
    if due is None or Rm.wake_mode() == "print":
        return []
    import time
    return [f"reminder due {time.strftime('%H:%M:%S', time.localtime(due))}"]


def round_status(event: HookEvent, config: Config) -> dict:
    return event.derived("round_status", lambda: _round_status(event, config))


def _round_status(event: HookEvent, config: Config) -> dict:
    from swarmgate.agents import records as R

    st: dict = {"path": None, "round": None, "open": [], "removed": [], "unverified": [], "has_verify": False,
                "error": None}
    try:
        path = R.current_record(event.repo, config, session=event.session_id or None)
    except Exception as e:  # noqa: BLE001
        st["error"] = str(e)
        return st
    if not path:
        return st
    st["path"] = path
    try:
        rec = R.load_record(path)
    except R.RecordError as e:
        st["error"] = str(e)
        return st
    st["round"] = rec.get("round")
    st["open"] = R.open_tasks(rec)
    st["has_verify"] = bool(rec.get("verify"))
    try:
        snap = R.read_snapshot(path)
        st["removed"] = R.removed_tasks(rec, snap)
    except Exception:  # noqa: BLE001 - the snapshot is a bonus; the open tasks decide
        snap, st["removed"] = {}, []
    if rec.get("verify") or any(isinstance(r, dict) and r.get("planned_verify") for r in snap.values()):
        from swarmgate.agents import record_verify as V
        try:
            results = V.latest_results(path)
        except Exception:  # noqa: BLE001 - unreadable results: no verify counts as passed
            results = {}
        st["unverified"] = R.unverified_closed(rec, snap, results)
    return st


def _unjudged(status: dict) -> int:
    return len(status["open"]) + len(status["removed"]) + len(status.get("unverified") or [])


def judge_s01(status: dict, flight: list, repo: str, check_verify: bool = True) -> Finding | None:
    unverified = status.get("unverified") or [] if check_verify else []
    if not status["path"] or (not status["open"] and not status["removed"] and not unverified):
        return None
    if flight:
        return None
    rel = os.path.relpath(status["path"], repo)
    rnd = status["round"] or rel
    parts, ways = [], []
    if status["open"] or status["removed"]:
        tasks = [f"{t['id']} ({_short(t.get('description') or '', 60)})" for t in status["open"][:12]]
        tasks += [f"{t.get('id')} (removed from the table without a verdict)" for t in status["removed"][:6]]
        first = (status["open"] or status["removed"])[0].get("id")
        parts.append(f"{len(status['open']) + len(status['removed'])} task(s) have no verdict: {', '.join(tasks)}. "
                     f"The record is your memory across compactions; a task left open is silently lost.")
        ways.append(f"give each a verdict: `swarmgate records verdict {rnd} {first} close|next-round|drop` "
                    f"(`swarmgate records restore {rnd}` puts removed rows back), or dispatch the next batch")
    if unverified:
        shown = "; ".join(f"{t['id']}: {why}" for t, why in unverified[:8])
        first = unverified[0][0]["id"]
        parts.append(f"{len(unverified)} closed task(s) have no passing verify: {shown}. A task is judged by its "
                     f"verify, not by the report of the agent that did it.")
        ways.append(f"run it: `swarmgate records verify {first}`; or, if it is done though its verify did not "
                    f"pass, say why in the verdict: `swarmgate records verdict {rnd} {first} close --reason "
                    f"\"<why>\"` (or give it next-round / drop)")
    return G.Finding("S01", f"round {rnd} ({rel}) is not closed: " + " ".join(parts), "; ".join(ways) + ".")


def check_s01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if _broken("s01-allow-open-round") or event.agent_id:
        return None
    status = round_status(event, config)
    if not status["path"] or not _unjudged(status):
        return None
    return judge_s01(status, in_flight(event), event.repo, check_verify=not _broken("s01-skip-verify"))


# --- C03: the summary -----------------------------------------------------------------

def _c03_subagent(event: HookEvent, o: dict, released: list) -> Finding:
    parts = []
    if o["dirs"]:
        parts.append(f"H01 {len(o['dirs'])} leftover director{'y' if len(o['dirs']) == 1 else 'ies'}")
    else:
        parts.append("H01 no leftover scratch or work directories")
    wt = o.get("worktree")
    if wt and wt["changes"] == []:
        parts.append(f"its worktree {wt['path']} holds no changes: Claude Code removes it after the hand-back")
    if released:
        parts.append(f"scratch locks released: {', '.join(released)}")
    if o["unread"]:
        parts.append(f"H02 could not read the transcript ({o['unread']}): nothing was re-judged")
    elif o["transcript"]:
        parts.append(f"H02 re-judged {o['calls']} call(s) from the transcript, "
                     f"{len(o['misses'])} a guard refuses")
    else:
        parts.append("H02 no transcript path in the payload")
    who = f"{event.agent_id or '?'} ({event.agent_type or '?'})"
    return G.Finding("C03", f"swarmgate hand-back check of {who}: " + "; ".join(parts) + ".",
                     decision=G.CONTEXT)


def check_c03(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if _broken("c03-no-summary"):
        return None
    if event.name == "SubagentStop":
        return _c03_subagent(event, stop_outcome(event, config), [])
    if event.agent_id:
        return None
    status = round_status(event, config)
    if not status["path"]:
        return None
    rel = os.path.relpath(status["path"], event.repo)
    n = _unjudged(status)
    if n == 0:
        text = f"S01 round {status['round']} ({rel}): every task has a verdict" + (
            " and every closed task's verify passed." if status["has_verify"] else ".")
    else:
        flight = in_flight(event)
        text = (f"S01 round {status['round']} ({rel}): {n} task(s) without a verdict or a passing verify"
                + (f"; still in flight: {', '.join(flight[:5])} (a pause, not the end of the round)" if flight else "")
                + ".")
    return G.Finding("C03", "swarmgate stop check: " + text, decision=G.CONTEXT)


# --- cases --------------------------------------------------------------------------

_SCR = "/var/tmp/swarmgate-selftest-h01-scratch"


def _state(agent_id: str = "a9", scratch: list | None = None) -> dict:
    import json
    st = {"session": "selftest-session", "procs": [],
          "agents": {agent_id: {"type": "implementer", "started": 1.0, "stopped": None, "proc": {"pid": 1},
                                "name": "builder", "dispatch": "toolu_h01"}},
          "dispatches": [{"id": "toolu_h01", "type": "implementer", "name": "builder", "time": 1.0,
                          "proc": {"pid": 1}, "scratch": scratch or [], "agent": agent_id, "prompt": ""}]}
    return {".selftest-state/sessions/selftest-session/state.json": json.dumps(st)}


def _stop(msg: str = "done", active: bool = False, transcript: str = "") -> dict:
    return {"agent_id": "a9", "agent_type": "implementer", "agent_transcript_path": transcript,
            "last_assistant_message": msg, "stop_hook_active": active}


_WORKDIR_CFG = '[workdirs]\nroot = "work"\n'
_OWNED = {"work/copy-a/.swarmgate-owner.json":
          '{"session": "selftest-session", "agent": "a9", "purpose": "repo copy for the build"}'}


_SIGHTING = ('{"id": "1", "time": 1, "kind": "heavy-in-agent-cgroup", "source": "X03", "session": "selftest-session", '
             '"agent": "a9", "pid": 4242, "command": "/opt/rust/bin/cargo test --workspace", '
             '"pattern": "cargo test --workspace", "message": "RED"}\n')


def _transcript(command: str, refused: bool = False) -> str:
    import json
    use = {"type": "assistant", "cwd": "", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x1", "name": "Bash", "input": {"command": command}}]}}
    result = {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x1", "is_error": refused,
         "content": "PreToolUse:Bash hook error: swarmgate refused this" if refused else "ok"}]}}
    first = {"type": "user", "message": {"role": "user", "content": "task: build\nheavy test: do not run"}}
    return "\n".join(json.dumps(x) for x in (first, use, result)) + "\n"


_RECORD_OPEN = ("# Round r1\n\ngoal: ship the parser\nexit: tests pass\n\n## Tasks\n\n"
                "| id | description | deps | inputs ready | batch | verdict |\n"
                "|----|-------------|------|--------------|-------|---------|\n"
                "| t1 | parse the header | - | yes | 1 | close |\n"
                "| t2 | wire the hook | t1 | no | 2 | |\n")
_RECORD_DONE = _RECORD_OPEN.replace("| 2 | |", "| 2 | next-round |")
# a reminder of the main agent, pending, due in 2100 (agents/reminders.py's file)
_REMINDER = ('{"id": "r1", "session": "selftest-session", "agent": null, "created": 1.0, "due": 4102444800.0, '
             '"message": "look at the run", "state": "pending"}')
_VERIFY = ("\n## Verify\n\n| task | command | expect exit | max retries |\n|---|---|---|---|\n"
           "| t1 | make test | 0 | 0 |\n")
_RECORD_UNVERIFIED = _RECORD_DONE + _VERIFY
_RECORD_EXCUSED = _RECORD_DONE.replace("| 1 | close |", "| 1 | close: checked by hand, make test needs the GPU |") \
    + _VERIFY

GUARDS = (
    G.Guard(
        code="H01", summary="a subagent may not hand back while its scratch or work directories exist",
        events=("SubagentStop",), tools=(), check=check_h01, act=finish_stop, budget_ms=15000,
        needs=("agent_worktree",),
        doc=G.GuardDoc(
            why="Build directories and repository copies left by finished agents fill the disk and are "
                "mistaken by the next agent for current work. The agent that made them is the one that "
                "knows they can go.",
            example="an implementer dispatched with `scratch: /work/tmp/b1` hands back while /work/tmp/b1 exists",
            instead="Delete them before handing back, or end the last message with "
                    "`<path> not deleted: <reason>`.",
            exceptions="Directories registered with work-dir-owner under this agent and `scratch:` "
                       "directories of its dispatch are checked; nothing else. Never blocks twice "
                       "(stop_hook_active)."),
        breaks={"h01-allow-leftovers": "subagents hand back with their directories left behind"},
        cases=lambda: (
            G.Case("scratch-left", "SubagentStop", _stop(), fires=True, breaks=("h01-allow-leftovers",),
                   files={**_state(scratch=["scratch-dir"]), "scratch-dir/target/x.o": "obj"}),
            G.Case("registered-copy-left", "SubagentStop", _stop(), fires=True,
                   breaks=("h01-allow-leftovers",), files={**_state(), **_OWNED}, config=_WORKDIR_CFG),
            G.Case("scratch-deleted", "SubagentStop", _stop(), fires=False, files=_state(scratch=[_SCR])),
            G.Case("left-with-reason", "SubagentStop",
                   _stop("report...\nscratch-dir not deleted: holds the bisect state for the next agent"),
                   fires=False, files={**_state(scratch=["scratch-dir"]), "scratch-dir/x": "x"}),
            G.Case("other-agents-copy", "SubagentStop", dict(_stop(), agent_id="a10"), fires=False,
                   files={**_state(), **_OWNED}, config=_WORKDIR_CFG),
        )),
    G.Guard(
        code="H02", summary="SubagentStop: report calls in the transcript that a guard refuses but that ran",
        events=("SubagentStop",), tools=(), check=check_h02, act=finish_stop, advisory=True, budget_ms=15000,
        doc=G.GuardDoc(
            why="Claude Code has had releases where settings hooks did not fire for subagents' tool calls. "
                "Re-judging the transcript at hand-back catches what slipped through: a heavy test a "
                "subagent ran, a write outside its scope.",
            example="a subagent's transcript holds Bash `cargo test --workspace` with a normal result",
            instead="Nothing to do in the subagent; the main agent treats the flagged results as suspect "
                    "and reports the hook failure.",
            exceptions="Calls refused at the time (a hook error result) are skipped. Never blocks."),
        breaks={"h02-no-audit": "transcripts are not audited"},
        cases=lambda: (
            G.Case("heavy-test-ran", "SubagentStop", _stop(transcript="t/agent-a9.jsonl"), fires=True,
                   breaks=("h02-no-audit",),
                   files={**_state(), "t/agent-a9.jsonl": _transcript("cargo test --workspace")}),
            G.Case("heavy-test-refused-at-the-time", "SubagentStop", _stop(transcript="t/agent-a9.jsonl"),
                   fires=False,
                   files={**_state(), "t/agent-a9.jsonl": _transcript("cargo test --workspace", refused=True)}),
            G.Case("light-commands", "SubagentStop", _stop(transcript="t/agent-a9.jsonl"), fires=False,
                   files={**_state(), "t/agent-a9.jsonl": _transcript("git status && ls -la")}),
            G.Case("heavy-program-seen-in-its-cgroup", "SubagentStop", _stop(), fires=True, breaks=("h02-no-audit",),
                   files={**_state(), ".selftest-state/alerts/alerts.jsonl": _SIGHTING}),
        )),
    G.Guard(
        code="S01", summary="the main agent may not end a round while the record has tasks with no verdict "
                            "or closed tasks whose verify did not pass",
        events=("Stop",), tools=(), check=check_s01, budget_ms=10000,
        doc=G.GuardDoc(
            why="The scheduling record is the main agent's memory across compactions. A task that leaves the "
                "round without a verdict (close / next round / drop) is forgotten for good. A task is judged by "
                "its verify command (the record's `## Verify` table), not by the report of the agent that did "
                "it: a closed task whose verify never passed is not done.",
            example="Stop while records/r1.md has `| t2 | wire the hook | t1 | no | 2 | |`, or closes t1 "
                    "while `swarmgate records verify t1` never passed",
            instead="`swarmgate records verdict ROUND ID close|next-round|drop` for each open task; "
                    "`swarmgate records verify ID` for each closed task with a verify, or a verdict that says why "
                    "it did not pass: `swarmgate records verdict ROUND ID close --reason \"...\"`.",
            exceptions="A Stop while background work, wake-ups (the client's, or a `remind` reminder that will "
                       "wake the main agent) or subagents of this session are in flight is a pause and is let "
                       "through. A verify changed or removed after it was planned does not "
                       "count as passed. Never blocks twice (stop_hook_active)."),
        breaks={"s01-allow-open-round": "a round ends with tasks left open",
                "s01-skip-verify": "a round ends with closed tasks whose verify did not pass"},
        cases=lambda: (
            G.Case("open-task", "Stop", {"stop_hook_active": False, "background_tasks": []}, fires=True,
                   breaks=("s01-allow-open-round",), files={"records/r1.md": _RECORD_OPEN}),
            G.Case("every-task-judged", "Stop", {"stop_hook_active": False}, fires=False,
                   files={"records/r1.md": _RECORD_DONE}),
            G.Case("pause-with-background-work", "Stop",
                   {"stop_hook_active": False, "background_tasks": [
                       {"id": "b1", "type": "subagent", "status": "running", "description": "batch 2"}]},
                   fires=False, files={"records/r1.md": _RECORD_OPEN}),
            G.Case("pause-for-a-reminder", "Stop", {"stop_hook_active": False, "background_tasks": []},
                   fires=False, files={"records/r1.md": _RECORD_OPEN,
                                       ".selftest-state/reminders/selftest-session/r1.json": _REMINDER}),
            G.Case("no-record", "Stop", {"stop_hook_active": False}, fires=False),
            G.Case("closed-without-a-passing-verify", "Stop", {"stop_hook_active": False}, fires=True,
                   breaks=("s01-allow-open-round", "s01-skip-verify"),
                   files={"records/r1.md": _RECORD_UNVERIFIED}),
            G.Case("closed-with-a-reason", "Stop", {"stop_hook_active": False}, fires=False,
                   files={"records/r1.md": _RECORD_EXCUSED}),
        )),
    G.Guard(
        code="C03", summary="Stop/SubagentStop: a short summary of what H01, H02 and S01 checked",
        events=("Stop", "SubagentStop"), tools=(), check=check_c03, act=finish_stop, advisory=True, budget_ms=15000,
        doc=G.GuardDoc(
            why="A check that runs silently cannot be told from one that did not run; the person sees in "
                "one line what was checked at each hand-back and stop.",
            example="swarmgate hand-back check of a9 (implementer): H01 no leftover ...; H02 re-judged 12 call(s)",
            instead="Nothing to do; it is a report.",
            exceptions="A main-agent Stop in a repository without a scheduling record adds nothing."),
        breaks={"c03-no-summary": "stops are checked without saying what was checked"},
        cases=lambda: (
            G.Case("hand-back-summary", "SubagentStop", _stop(), fires=True, breaks=("c03-no-summary",),
                   files=_state()),
            G.Case("stop-summary", "Stop", {"stop_hook_active": False}, fires=True, breaks=("c03-no-summary",),
                   files={"records/r1.md": _RECORD_DONE}),
            G.Case("stop-without-record", "Stop", {"stop_hook_active": False}, fires=False),
        )),
)
