"""Dispatch guards (SPEC §4.1): PreToolUse on Agent/Task.

D01 heavy-test line, D07 concurrency, D12 denied types, D15 thread cap,
D16 scratch locks, D20 unfilled placeholders, D21 unknown type.

Judge (``judged``, memoised on the event, pure): D01 D12 D15 D20 D21 from the
parsed prompt (the derived fact "dispatch_prompt") and the config; D07 counts
this session's running subagents plus the dispatches let through in the last
``[dispatch] pending_seconds`` that have not reached SubagentStart yet (read
without a lock); D16 reads the scratch lock records (without taking any).
Counting the pending ones is what stops six quick dispatches in a row (or six
Agent calls in one message, which Claude Code checks one after another before
any starts) from all passing; background dispatches (`run_in_background`, the
default in Claude Code 2.1) count exactly like foreground ones.

Act (``admit_dispatch``, the act of all seven guards, run once and only when
the combined decision lets the dispatch go ahead): under the session lock it
counts again (D07) and takes the scratch locks (D16, all or none, under their
own lock), and only then records the dispatch in the session state. When the
world changed between judge and act (a parallel dispatch took the last slot or
the directory), it records nothing and refuses late. So a refused dispatch,
whichever guard refused it, never counts against D07 nor holds a scratch
directory.

A guard switched off in the config is not judged, one in "warn" mode is judged
but does not stop the recording (it does not refuse).
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from collections.abc import Callable

    from swarmgate.config import Config
    from swarmgate.guard import Check, Finding
    from swarmgate.agents.agent_definitions import ResolvedType
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.dispatch_prompt_parse import ParsedPrompt


DEFAULT_TYPE = "general-purpose"  # what Claude Code runs when subagent_type is omitted
CODES = ("D01", "D07", "D12", "D15", "D16", "D20", "D21")
# The first dispatch guard judged pays for all seven, and the act takes two locks; on a loaded
# machine that is more than the default per-guard budget, and a timeout would refuse.
BUDGET_MS = 15000
_NEEDS = ("dispatch_prompt", "agent_types")


def agent_type_of(event: HookEvent) -> str:
    t = event.tool_input.get("subagent_type")
    return t.strip() if isinstance(t, str) and t.strip() else DEFAULT_TYPE


def prompt_of(event: HookEvent) -> str:
    p = event.tool_input.get("prompt")
    return p if isinstance(p, str) else ""


def lockable_scratch(event: HookEvent, parsed: ParsedPrompt) -> list:
    """The `scratch:` directories D16 locks. A subagent dispatched with isolation "worktree" works in
    its own git worktree, where a relative scratch path lands (H01 resolves it there at hand-back):
    nobody else can share it, so only its absolute (or ~) paths are locked."""
    scratch = list(dict.fromkeys(parsed.scratch))
    if event.tool_input.get("isolation") == "worktree":
        from swarmgate import lean_os as os
        scratch = [p for p in scratch if os.path.isabs(os.path.expanduser(p))]
    return scratch


def parsed_prompt(event: HookEvent, config: Config) -> ParsedPrompt:
    from swarmgate.hooks.derivations import get
    return get(event, config, "dispatch_prompt")


# --- pure judgements ---------------------------------------------------------------

def judge_d01(parsed: ParsedPrompt, config: Config) -> Finding | None:
    line = config["dispatch"]["heavy_line"]
    if parsed.has_heavy_line:
        return None
    return G.Finding(
        "D01", f"the dispatch prompt lacks the line `{line}`. Heavy tests belong to the main agent; "
               f"a subagent must be told so in its prompt.",
        f"add this line, on its own, to the prompt: {line}")


def denied(agent_type: str, config: Config) -> bool:
    """Whether ``agent_type`` (the resolved name) is in [dispatch] denied_types (case-insensitive, as
    Claude Code matches types)."""
    return agent_type.lower() in {d.lower() for d in config["dispatch"]["denied_types"]}


def _project_types(catalog: list) -> list:
    return sorted(r.name for r in catalog if r.source == "project")


def _dispatch_types(catalog: list) -> list:
    """The project's types, else (the plugin alone: no `swarmgate install` here) swarmgate's plugin's."""
    return _project_types(catalog) or sorted(r.name for r in catalog
                                             if r.source == "plugin" and r.name.lower().startswith("swarmgate:"))


def judge_d12(agent_type: str, config: Config, known: list, requested: str = "") -> Finding | None:
    """``agent_type``: the type Claude Code will run (resolved); ``requested``: as written."""
    if not denied(agent_type, config):
        return None
    shown = ", ".join(known) if known else "none defined yet (run `swarmgate install`)"
    clerk = next((k for k in known if k.lower() == "swarmgate:clerk"), "clerk") \
        if not any(k.lower() == "clerk" for k in known) else "clerk"   # the plugin's, in a plugin-only repository
    omitted = " (no subagent_type given: Claude Code would run general-purpose)" \
        if agent_type == DEFAULT_TYPE and not requested else ""
    as_written = f" ({requested!r} as written)" if requested and requested != agent_type else ""
    return G.Finding(
        "D12", f"subagent_type {agent_type!r}{as_written} may not be dispatched{omitted}: it is in "
               f"[dispatch] denied_types. A general agent gets no type rules and no write scope.",
        f"dispatch a project-defined type instead (one-off work goes to `{clerk}`); defined types: {shown}. "
        f"`dispatch-prompt TYPE` prints the prompt skeleton.")


def judge_d15(parsed: ParsedPrompt, config: Config,
              broken: Callable[[str], bool] = lambda name: False) -> Finding | None:
    from swarmgate.host_defaults import thread_default

    default = thread_default(config)
    d = config["dispatch"]
    label, rlabel = d["thread_cap_line"], d["thread_cap_reason_line"]
    caps = parsed.thread_caps
    if not caps:
        return None
    if len(caps) > 1:
        where = ", ".join(str(c.line_no) for c in caps)
        return G.Finding(
            "D15", f"the prompt has {len(caps)} `{label}:` lines (lines {where}); a subagent obeys one "
                   f"number, so there must be exactly one.",
            f"keep one line `{label}: {default}`.")
    cap = caps[0]
    if cap.value is None:
        if broken("d15-loose-value"):
            return None
        return G.Finding(
            "D15", f"`{label}: {cap.raw}` (line {cap.line_no}) is not exactly one integer. Anything beside "
                   f"the number (\"31 (fewer if busy)\") hands the choice back to the subagent, which then "
                   f"picks its own thread count.",
            f"write `{label}: {default}` (the registered [threads] heavy_default); to use another number, "
            f"write it alone and put `{rlabel}: <why>` on the next line.")
    if cap.value == default or broken("d15-any-number"):
        return None
    if cap.reason and cap.reason.strip():
        from swarmgate.hooks.dispatch_prompt_parse import find_placeholders
        if not find_placeholders(cap.reason):
            return None
    return G.Finding(
        "D15", f"`{label}: {cap.value}` (line {cap.line_no}) differs from the registered thread default "
               f"{default} ([threads] heavy_default) and the next line gives no `{rlabel}:`.",
        f"use `{label}: {default}`, or keep {cap.value} and add on the very next line "
        f"`{rlabel}: <why this run needs {cap.value}>`.")


def judge_d20(parsed: ParsedPrompt) -> Finding | None:
    holes = parsed.placeholders
    if not holes:
        return None
    shown = ", ".join(dict.fromkeys(holes))
    return G.Finding(
        "D20", f"the prompt still has {len(holes)} unfilled placeholder(s) from `dispatch-prompt`: {shown}.",
        "replace every `<... fill in>` with the real text, then dispatch again.")


def judge_d21(requested: str, resolved: ResolvedType | None, config: Config, catalog: list) -> Finding | None:
    """``resolved``: what Claude Code runs for ``requested`` (agent_definitions.resolve), None when
    nothing: D21 refuses what the client would not find, and a definition it cannot read."""
    if resolved is not None and denied(resolved.name, config):
        return None  # D12 judges those
    if resolved is not None and resolved.error:
        return G.Finding("D21", f"the definition of subagent_type {requested!r} ({resolved.path}) cannot be read: "
                                f"{resolved.error}",
                         "fix the frontmatter of that file (see docs/agents.md), then dispatch again.")
    if resolved is not None:
        return None
    project = _project_types(catalog)
    others = sorted(r.name for r in catalog if r.source in ("user", "plugin"))
    rel = config["dispatch"]["agents_dir"].rstrip("/")
    shown = ", ".join(project) if project else "none (run `swarmgate install`)"
    if others:
        shown += f"; user-level and plugin types: {', '.join(others)}"
    return G.Finding(
        "D21", f"unknown subagent_type {requested!r}: no definition in {rel}/ (nor a user-level, plugin or "
               f"built-in type) has that `name:`, compared as Claude Code does (case-insensitively). Only "
               f"types the project defines carry the rules and write scope their work needs.",
        f"dispatch one of the defined types: {shown}; `dispatch-prompt TYPE` prints its skeleton.")


# --- judge: all seven at once, reading state without taking a lock -----------------------

def _broken(name: str) -> bool:
    from swarmgate.break_switch import broken
    return broken(name)


def _catalog(event: HookEvent, config: Config) -> list:
    from swarmgate.hooks.derivations import get
    return get(event, config, "agent_types")


def resolved_type(event: HookEvent, config: Config) -> ResolvedType | None:
    """What the client runs for this dispatch's subagent_type (None: it would not find it)."""
    from swarmgate.agents.agent_definitions import find
    return find(_catalog(event, config), agent_type_of(event))


def type_name(event: HookEvent, config: Config) -> str:
    """The canonical name of the type this dispatch runs (as written when it resolves to nothing)."""
    r = resolved_type(event, config)
    return r.name if r is not None else agent_type_of(event)


def judged(event: HookEvent, config: Config) -> dict:
    """{code: Finding | None} for the seven dispatch guards (memoised on the event; pure)."""
    return event.derived("dispatch_judged", lambda: _judged(event, config))


def _modes(config: Config) -> dict:
    return {c: config.guard_mode(c) for c in CODES}


def _counting(config: Config) -> bool:
    return config.guard_mode("D07") != "off" and not _broken("d07-no-limit")


def _locking(config: Config, scratch: list) -> bool:
    return bool(scratch) and config.guard_mode("D16") != "off" and not _broken("d16-no-scratch-lock")


def _owner(event: HookEvent, config: Config) -> dict:
    """Who this dispatch is: its session, tool_use_id, name and type, the session process."""
    def build() -> dict:
        import time

        from swarmgate.hooks import session_state as S

        proc = S.session_process()
        name = event.tool_input.get("name")
        return {"session": event.session_id,
                "dispatch": str(event.payload.get("tool_use_id") or f"noid-{time.time_ns():x}"),
                "name": name if isinstance(name, str) else None, "type": type_name(event, config),
                "pid": proc.get("pid"), "start": proc.get("start"), "proc": proc}
    return event.derived("dispatch_owner", build)


def _judged(event: HookEvent, config: Config) -> dict:
    import time

    on = _modes(config)
    out: dict = {c: None for c in CODES}
    parsed = parsed_prompt(event, config)
    atype = agent_type_of(event)
    if on["D01"] != "off" and not _broken("d01-no-heavy-line"):
        out["D01"] = judge_d01(parsed, config)
    if on["D12"] != "off" and not _broken("d12-allow-denied"):
        requested = event.tool_input.get("subagent_type")
        out["D12"] = judge_d12(type_name(event, config), config, _dispatch_types(_catalog(event, config)),
                               requested.strip() if isinstance(requested, str) else "")
    if on["D15"] != "off":
        out["D15"] = judge_d15(parsed, config, _broken)
    if on["D20"] != "off" and not _broken("d20-allow-placeholders"):
        out["D20"] = judge_d20(parsed)
    if on["D21"] != "off" and not _broken("d21-allow-unknown-type"):
        out["D21"] = judge_d21(atype, resolved_type(event, config), config, _catalog(event, config))
    if not event.session_id:
        return out  # no session id: nothing to count or lock against (never seen from Claude Code)

    from swarmgate.hooks import scratch_locks
    from swarmgate.hooks import session_state as S

    now = time.time()
    window = float(config["dispatch"]["pending_seconds"])
    if _counting(config):
        out["D07"] = _d07_all(event, config, S.load(event.session_id), now, window)
    scratch = lockable_scratch(event, parsed)
    if _locking(config, scratch):
        conflicts = scratch_locks.conflicts(scratch, _owner(event, config), event.cwd or event.repo, window, now)
        if conflicts:
            out["D16"] = _d16_finding(conflicts, config)
    return out


def _d07_judgement(st: dict, now: float, window: float, limit: int, mates: list | None = None) -> Finding | None:
    """D07's finding on ``st`` (a refusal at the limit; a note while the state was rebuilt lately).
    ``mates``: busy teammates this session leads (each counts as a running agent)."""
    from swarmgate.hooks import session_state as S

    run = S.running(st)
    pend = S.pending(st, now, window)
    mates = mates or []
    note = S.rebuilt_note(st, now)
    if len(run) + len(pend) + len(mates) >= limit:
        f = _d07_finding(run, pend, limit, now, mates)
        if note:
            f.message += " Note: " + note
        return f
    if note:
        return G.Finding("D07", "swarmgate D07: " + note, decision=G.CONTEXT)
    return None


def _d07_repo(event: HookEvent, config: Config, st: dict, now: float, window: float) -> Finding | None:
    """D07 across the repository: every live session's running subagents, dispatches not started yet
    and busy teammates (hooks/repo_sessions.py) against [dispatch] max_concurrent_repo (0: no cap)."""
    from swarmgate.hooks import repo_sessions as R

    limit = int(config["dispatch"]["max_concurrent_repo"])
    if limit <= 0:
        return None
    total, parts = R.count(event.repo, now, window, own=event.session_id, own_state=st)
    if total < limit:
        return None
    return G.Finding(
        "D07", f"{total} agents are already running on this repository across its sessions, the limit is {limit} "
               f"([dispatch] max_concurrent_repo): {'; '.join(parts) or 'counted'}.",
        "wait until one hands back (in any session: `swarmgate status` shows them), then dispatch; or fold this "
        "work into the next batch of the scheduling record.")


def _d07_all(event: HookEvent, config: Config, st: dict, now: float, window: float) -> Finding | None:
    """The session's cap (its subagents, dispatches and the teammates it leads), then the repository's."""
    from swarmgate.hooks import repo_sessions as R

    mates = R.teammates_of(event.repo, event.session_id)
    f = _d07_judgement(st, now, window, int(config["dispatch"]["max_concurrent"]), mates)
    if f is not None and f.decision == G.DENY:
        return f
    return _d07_repo(event, config, st, now, window) or f


# --- act: count again and record, under the locks ---------------------------------------

def admit_dispatch(event: HookEvent, config: Config) -> list[Finding] | None:
    """The act of the dispatch guards: under the session lock, count again (D07) and take the
    scratch locks (D16); record the dispatch only when neither refuses now. Returns the late
    refusals (a slot or a directory taken by a parallel dispatch since the judgement), else None."""
    import time

    if not event.session_id:
        return None
    from swarmgate.hooks import scratch_locks
    from swarmgate.hooks import session_state as S
    from swarmgate.hooks.dispatch_prompt_parse import prompt_digest

    on = _modes(config)
    parsed = parsed_prompt(event, config)
    owner = _owner(event, config)
    proc = owner["proc"]
    now = time.time()
    window = float(config["dispatch"]["pending_seconds"])
    scratch = lockable_scratch(event, parsed)
    base = event.cwd or event.repo
    late: list = []

    def step(st: dict) -> None:
        refused = False
        if _counting(config):
            f = _d07_all(event, config, st, now, window)
            if f is not None:
                late.append(f)
                refused = f.decision == G.DENY and on["D07"] == "on"
        if _locking(config, scratch):
            lock_owner = {k: owner[k] for k in ("session", "dispatch", "name", "type", "pid", "start")}
            conflicts, _stale = scratch_locks.acquire(scratch, lock_owner, base, window, now, take=not refused)
            if conflicts:
                late.append(_d16_finding(conflicts, config))
                refused = refused or on["D16"] == "on"
        if not refused:
            S.note_proc(st, proc, now)
            S.record_dispatch(st, tool_use_id=owner["dispatch"], agent_type=owner["type"], name=owner["name"],
                              proc=proc, now=now, background=bool(event.tool_input.get("run_in_background")),
                              scratch=list(dict.fromkeys(parsed.scratch)),
                              prompt_digest=prompt_digest(prompt_of(event)))

    from swarmgate.hooks import repo_sessions as R
    from swarmgate.statefile import ensure_dir, locked

    # the repository's lock first (D07 counts every session of it), then the session's own
    ensure_dir(R.repo_dir(event.repo))
    with locked(R.lock_path(event.repo), timeout=10.0):
        S.update(event.session_id, step)
        R.note(event.repo, event.session_id, {"pid": proc.get("pid"), "start": proc.get("start")}, held=True)
    return late or None


def _clock(t: float | str) -> str:
    import time
    try:
        return time.strftime("%H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError):
        return "?"


def _d07_finding(run: list, pend: list, limit: int, now: float, mates: list | None = None) -> Finding:
    mates = mates or []
    parts = [f"{aid} ({a.get('type') or '?'}{', ' + a['name'] if a.get('name') else ''}, since "
             f"{_clock(a.get('started'))})" for aid, a in run]
    parts += [f"{d.get('name') or d.get('type')} (dispatched {now - float(d.get('time') or now):.0f}s ago, "
              f"not started yet)" for d in pend]
    parts += [f"teammate {m.get('name')} (busy)" for m in mates]
    return G.Finding(
        "D07", f"{len(run) + len(pend) + len(mates)} subagents are already running in this session, the limit is "
               f"{limit} "
               f"([dispatch] max_concurrent): {'; '.join(parts)}.",
        "wait until one hands back (a background agent notifies you when it completes), then dispatch; "
        "or fold this work into the next batch of the scheduling record.")


def _d16_finding(conflicts: list, config: Config) -> Finding:
    label = config["dispatch"]["scratch_line"]
    parts = [f"{path} is held by {who}" for path, who in conflicts]
    return G.Finding(
        "D16", "a scratch directory this dispatch names is locked by a live holder: " + "; ".join(parts) + ".",
        f"give this agent its own directory (`{label}: <another path>`), or wait until the holder hands back "
        f"(its lock is released at its SubagentStop).")


def _check(code: str) -> Check:
    def check(event: HookEvent, config: Config) -> Finding | None:
        return judged(event, config).get(code)
    check.__name__ = f"check_{code.lower()}"
    return check


# --- cases -------------------------------------------------------------------------

_AGENT_MD = ("---\nname: implementer\ndescription: implements one task\ntools: Read, Edit, Bash\n"
             "builds: yes\n---\nYou implement the task in your prompt.\n")
_CLERK_MD = "---\nname: clerk\ndescription: one-off work\ntools: Read, Bash\n---\nDo the one thing asked.\n"
_FILES = {".claude/agents/implementer.md": _AGENT_MD, ".claude/agents/clerk.md": _CLERK_MD}
_RENAMED = {".claude/agents/impl-file.md": "---\nname: parser\ndescription: parses\n---\nParse.\n"}
_USER = {".selftest-claude/agents/helper.md": "---\nname: user-helper\ndescription: a user's own\n---\nHelp.\n"}
_PLUGIN = {  # an installed, enabled plugin with one agent (as `claude plugin install` leaves it)
    ".selftest-claude/settings.json": '{"enabledPlugins": {"helpers@local": true}}',
    ".selftest-claude/plugins/installed_plugins.json":
        '{"version": 2, "plugins": {"helpers@local": [{"scope": "user", "installPath": "cache/local/helpers/1.0.0"}]}}',
    ".selftest-claude/plugins/cache/local/helpers/1.0.0/agents/checker.md":
        "---\nname: checker\ndescription: checks\n---\nCheck.\n"}
_THREADS_31 = "[threads]\nheavy_default = 31\n"   # the cases that write 31 register it


def _auto_threads() -> int:
    """[threads] heavy_default = "auto" on this machine (swarmgate/host_defaults.py)."""
    from swarmgate.host_defaults import auto_threads, machine_cores
    return auto_threads(machine_cores())


_GOOD = ("task: add the parser for the v2 header\nexit criterion: tests/unit/header_test.py passes\n"
         "heavy test: do not run\nthread cap: 31\n")


def _dispatch(prompt: str = _GOOD, agent_type: str | None = "implementer", **extra) -> dict:
    ti = {"description": "implement the parser", "prompt": prompt}
    if agent_type is not None:
        ti["subagent_type"] = agent_type
    ti.update(extra)
    return {"tool_name": "Agent", "tool_use_id": "toolu_selftest_1", "tool_input": ti}


def _state_file(session: str, agents: dict, dispatches: list | None = None) -> dict:
    import json
    return {f".selftest-state/sessions/{session}/state.json":
            json.dumps({"session": session, "procs": [], "agents": agents, "dispatches": dispatches or []})}


def _agents(n: int, live: bool, stopped: int = 0) -> dict:
    # pid 1 always exists; a start time no process can have makes the record a reused pid
    proc = {"pid": 1} if live else {"pid": 1, "start": 1 << 62}
    return {f"a{i}": {"type": "implementer", "started": 1.0 + i, "stopped": (9.0 if i < stopped else None),
                      "proc": proc, "name": f"worker-{i}", "dispatch": None} for i in range(n)}


_SCRATCH = "/var/tmp/swarmgate-selftest-d16-scratch"


def _scratch_lock(live: bool) -> dict:
    import json
    from swarmgate.hooks.scratch_locks import record_name
    rec = {"path": _SCRATCH, "session": "other-session", "dispatch": "toolu_other", "name": "builder",
           "type": "implementer", "pid": 1, "since": 1.0}
    if not live:
        rec["start"] = 1 << 62
    files = {f".selftest-state/locks/scratch/{record_name(_SCRATCH)}": json.dumps(rec)}
    files.update(_state_file("other-session",
                             {"b1": {"type": "implementer", "started": 1.0, "stopped": None,
                                     "proc": {"pid": 1} if live else {"pid": 1, "start": 1 << 62},
                                     "name": "builder", "dispatch": "toolu_other"}},
                             [{"id": "toolu_other", "type": "implementer", "name": "builder", "time": 1.0,
                               "proc": {"pid": 1}, "scratch": [_SCRATCH], "agent": "b1"}]))
    return files


GUARDS = (
    G.Guard(
        code="D01", summary="a dispatch prompt carries the heavy-test line",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D01"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="Heavy tests (the whole suite, long replays) take the machine; when several subagents "
                "each run them, the machine runs out of memory. Only the main agent runs them, and every "
                "subagent is told so in its prompt, where it cannot be compressed away.",
            example='Agent {"subagent_type": "implementer", "prompt": "task: ...\\nthread cap: 31"}',
            instead="Start the prompt from `dispatch-prompt TYPE`, which carries the line "
                    "`heavy test: do not run` ([dispatch] heavy_line).",
            exceptions="The wording is the config's [dispatch] heavy_line; a Markdown bullet before it is fine."),
        breaks={"d01-no-heavy-line": "a prompt without the heavy-test line is let through"},
        cases=lambda: (
            G.Case("missing-heavy-line", "PreToolUse", _dispatch("task: x\nthread cap: 31\n"), fires=True,
                   breaks=("d01-no-heavy-line",), files=_FILES),
            G.Case("task-tool-missing-line", "PreToolUse",
                   dict(_dispatch("task: x\n"), tool_name="Task"), fires=True,
                   breaks=("d01-no-heavy-line",), files=_FILES),
            G.Case("heavy-line-present", "PreToolUse", _dispatch(), fires=False, files=_FILES),
            G.Case("heavy-line-as-bullet", "PreToolUse",
                   _dispatch("task: x\n- heavy test: do not run\n"), fires=False, files=_FILES),
        )),
    G.Guard(
        code="D07", summary="at most [dispatch] max_concurrent subagents run at once in one session, "
                            "max_concurrent_repo across the repository's sessions",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D07"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="Each subagent builds and tests its own branch; past a handful at once the machine runs out "
                "of memory or cores and everyone's work slows or dies. Running = SubagentStart seen, "
                "SubagentStop not yet, in this session; dispatches let through in the last "
                "[dispatch] pending_seconds that have not started yet count too, so six quick dispatches "
                "cannot all pass. Entries of a session process that died (or whose pid was reused) "
                "do not count.",
            example="a sixth Agent call while five subagents of this session are running",
            instead="Wait for one to hand back (background agents notify on completion), then dispatch.",
            exceptions="Subagents of other sessions count only against [dispatch] max_concurrent_repo (every live "
                       "session of the repository, busy teammates included; 0: no repository cap)."),
        breaks={"d07-no-limit": "any number of subagents may run at once"},
        cases=lambda: (   # built on first use: the state files cost json's import
            G.Case("sixth-subagent", "PreToolUse", _dispatch(), fires=True, breaks=("d07-no-limit",),
                   files={**_FILES, **_state_file("selftest-session", _agents(5, live=True))}),
            G.Case("sixth-background-subagent", "PreToolUse", _dispatch(run_in_background=True), fires=True,
                   breaks=("d07-no-limit",),
                   files={**_FILES, **_state_file("selftest-session", _agents(5, live=True))}),
            G.Case("four-running", "PreToolUse", _dispatch(), fires=False,
                   files={**_FILES, **_state_file("selftest-session", _agents(5, live=True, stopped=1))}),
            G.Case("crashed-session-entries-dropped", "PreToolUse", _dispatch(), fires=False,
                   files={**_FILES, **_state_file("selftest-session", _agents(5, live=False))}),
        )),
    G.Guard(
        code="D12", summary="denied subagent types (general-purpose) are not dispatched",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D12"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="A general-purpose agent carries no type rules and no write scope: it does whatever the "
                "prompt suggests, and nothing tells it what its job may not do.",
            example='Agent {"subagent_type": "general-purpose", ...} (or no subagent_type at all)',
            instead="Dispatch a project-defined type; one-off work goes to `clerk`.",
            exceptions="The list is [dispatch] denied_types."),
        breaks={"d12-allow-denied": "denied types are dispatched"},
        cases=lambda: (
            G.Case("general-purpose", "PreToolUse", _dispatch(agent_type="general-purpose"), fires=True,
                   breaks=("d12-allow-denied",), files=_FILES),
            G.Case("no-type-means-general-purpose", "PreToolUse", _dispatch(agent_type=None), fires=True,
                   breaks=("d12-allow-denied",), files=_FILES),
            G.Case("general-purpose-in-another-case", "PreToolUse", _dispatch(agent_type="General-Purpose"),
                   fires=True, breaks=("d12-allow-denied",), files=_FILES),
            G.Case("clerk", "PreToolUse", _dispatch(agent_type="clerk"), fires=False, files=_FILES),
        )),
    G.Guard(
        code="D15", summary="`thread cap:` holds one integer equal to [threads] heavy_default",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D15"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="A subagent obeys one number for the threads of heavy work. `thread cap: 31 (fewer if "
                "busy)` hands the choice back to it, and it picks its own; busy machines are the runner's "
                "admission's job, not the prompt's.",
            example="thread cap: 31 (fewer if busy)   /   thread cap: 16 with no reason",
            instead="`thread cap: N` with N the registered default, as `dispatch-prompt TYPE` prints it ([threads] "
                    "heavy_default; auto, the default: this machine's cores less one); another number alone on "
                    "the line, with `thread cap reason: <why>` on the next line.",
            exceptions="A prompt without a thread cap line is not judged by D15."),
        breaks={"d15-loose-value": "a thread cap that is not one integer is accepted",
                "d15-any-number": "a thread cap other than the default is accepted without a reason"},
        cases=lambda: (
            G.Case("cap-with-words", "PreToolUse",
                   _dispatch("heavy test: do not run\nthread cap: 31 (fewer if busy)\n"), fires=True,
                   breaks=("d15-loose-value",), files=_FILES),
            G.Case("other-number-no-reason", "PreToolUse",
                   _dispatch("heavy test: do not run\nthread cap: 16\n"), fires=True,
                   breaks=("d15-any-number",), files=_FILES, config=_THREADS_31),
            G.Case("two-cap-lines", "PreToolUse",
                   _dispatch("heavy test: do not run\nthread cap: 31\nthread cap: 31\n"), fires=True,
                   files=_FILES),
            G.Case("default-cap", "PreToolUse", _dispatch(), fires=False, files=_FILES, config=_THREADS_31),
            G.Case("auto-default-is-the-cores-less-one", "PreToolUse",
                   _dispatch(f"heavy test: do not run\nthread cap: {_auto_threads()}\n"), fires=False,
                   files=_FILES),
            G.Case("auto-default-is-not-31-here", "PreToolUse",
                   _dispatch(f"heavy test: do not run\nthread cap: {_auto_threads() + 30}\n"), fires=True,
                   breaks=("d15-any-number",), files=_FILES),
            G.Case("other-number-with-reason", "PreToolUse",
                   _dispatch("heavy test: do not run\nthread cap: 16\n"
                             "thread cap reason: the replay tool deadlocks above 16 threads\n"),
                   fires=False, files=_FILES),
            G.Case("no-cap-line", "PreToolUse", _dispatch("heavy test: do not run\n"), fires=False,
                   files=_FILES),
        )),
    G.Guard(
        code="D16", summary="each `scratch:` directory is locked exclusively at dispatch",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D16"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="Two agents building in one scratch directory overwrite each other's artefacts and report "
                "results of a build that is not theirs. The lock records the dispatching session, the "
                "dispatch (tool_use_id, name) and the session process's pid + start time; a holder whose "
                "process died, whose pid was reused, or whose agent handed back is stale and is taken over.",
            example="scratch: /work/tmp/build-a   while another live agent holds /work/tmp/build-a",
            instead="Give each agent its own directory, or wait until the holder hands back.",
            exceptions="Locks are released at the holder's SubagentStop."),
        breaks={"d16-no-scratch-lock": "scratch directories are not locked"},
        cases=lambda: (   # built on first use: the state files cost json's import
            G.Case("held-by-live-agent", "PreToolUse", _dispatch(_GOOD + f"scratch: {_SCRATCH}\n"), fires=True,
                   breaks=("d16-no-scratch-lock",), files={**_FILES, **_scratch_lock(live=True)}),
            G.Case("stale-holder-taken-over", "PreToolUse", _dispatch(_GOOD + f"scratch: {_SCRATCH}\n"),
                   fires=False, files={**_FILES, **_scratch_lock(live=False)}),
            G.Case("free-directory", "PreToolUse", _dispatch(_GOOD + f"scratch: {_SCRATCH}\n"), fires=False,
                   files=_FILES),
        )),
    G.Guard(
        code="D20", summary="no unfilled `<... fill in>` placeholders in a dispatch prompt",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D20"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="The skeleton from `dispatch-prompt` marks what the main agent must write; a placeholder "
                "left in means the subagent guesses its task, its exit criterion or its scratch path.",
            example="task: <task fill in>",
            instead="Fill every placeholder, then dispatch.",
            exceptions="Only the `<... fill in>` form counts; other angle brackets are text."),
        breaks={"d20-allow-placeholders": "unfilled placeholders are let through"},
        cases=lambda: (
            G.Case("skeleton-as-printed", "PreToolUse",
                   _dispatch("task: <task fill in>\nheavy test: do not run\nthread cap: 31\n"), fires=True,
                   breaks=("d20-allow-placeholders",), files=_FILES),
            G.Case("filled", "PreToolUse", _dispatch(), fires=False, files=_FILES),
            G.Case("generic-angle-brackets", "PreToolUse",
                   _dispatch(_GOOD + "compare Vec<u8> with <T as Trait>\n"), fires=False, files=_FILES),
        )),
    G.Guard(
        code="D21", summary="a dispatched subagent_type resolves as Claude Code resolves it (project, user, "
                            "plugin or built-in type)",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=_check("D21"), budget_ms=BUDGET_MS,
        needs=_NEEDS, act=admit_dispatch, act_refuses=True,
        doc=G.GuardDoc(
            why="A type the client cannot find fails the dispatch after the fact, and a misspelt type "
                "(`implementor`) is a type without rules or write scope. swarmgate finds types as Claude "
                "Code 2.1.332 does: the frontmatter `name:` of a definition (not its file name), compared "
                "case-insensitively (`Implementer` runs `implementer`), in the project's [dispatch] "
                "agents_dir, then ~/.claude/agents, then the enabled plugins' agents as `<plugin>:<name>`, "
                "then the built-ins (general-purpose, Explore, Plan, statusline-setup, claude, fork). D12 "
                "then judges the type that will run.",
            example='Agent {"subagent_type": "implementor", ...} when only implementer is defined',
            instead="Dispatch a defined type (`ls .claude/agents`), or define the type.",
            exceptions="Types in [dispatch] denied_types are judged by D12. A definition that cannot be read "
                       "is refused, naming the file."),
        breaks={"d21-allow-unknown-type": "unknown subagent types are dispatched"},
        cases=lambda: (
            G.Case("unknown-type", "PreToolUse", _dispatch(agent_type="implementor"), fires=True,
                   breaks=("d21-allow-unknown-type",), files=_FILES),
            G.Case("file-name-is-not-the-type", "PreToolUse", _dispatch(agent_type="impl-file"), fires=True,
                   breaks=("d21-allow-unknown-type",), files={**_FILES, **_RENAMED}),
            G.Case("plugin-agent-without-its-plugin", "PreToolUse", _dispatch(agent_type="checker"), fires=True,
                   breaks=("d21-allow-unknown-type",), files={**_FILES, **_PLUGIN}),
            G.Case("defined-type", "PreToolUse", _dispatch(), fires=False, files=_FILES),
            G.Case("case-variant", "PreToolUse", _dispatch(agent_type="IMPLEMENTER"), fires=False, files=_FILES),
            G.Case("frontmatter-name", "PreToolUse", _dispatch(agent_type="parser"), fires=False,
                   files={**_FILES, **_RENAMED}),
            G.Case("user-level-type", "PreToolUse", _dispatch(agent_type="user-helper"), fires=False,
                   files={**_FILES, **_USER}),
            G.Case("plugin-type", "PreToolUse", _dispatch(agent_type="Helpers:Checker"), fires=False,
                   files={**_FILES, **_PLUGIN}),
            G.Case("builtin-type", "PreToolUse", _dispatch(agent_type="explore"), fires=False, files=_FILES),
            G.Case("denied-type-left-to-d12", "PreToolUse", _dispatch(agent_type="general-purpose"),
                   fires=False, files=_FILES),
        )),
)
