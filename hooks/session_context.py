"""C01 (SPEC §4.5): at SessionStart (startup, resume, clear, compact, fork) tell the main
agent what it was doing and what happened to the machine.

Sections, each best effort and bounded in time; a section that cannot be
read says so in one line:

1. subagents of this session still running (session state; a subagent whose
   session process died is not running);
2. uncommitted changes in the worktree (`git status --porcelain`, files named,
   at most 40);
3. the scheduling record of the current round and its open tasks
   (swarmgate.agents.records.current_record);
4. alerts written since this session last looked (swarmgate.alerts, reader
   ``session:<id>``; its own and machine-wide ones);
5. processes the kernel killed for memory in the last 12 h, whole-machine OOMs
   apart from those inside a cgroup limit (hooks/kernel_oom.py; journalctl -k,
   else dmesg);
6. a red line when the upstream rules copy's stamp differs from its VERSION
   (swarmgate.agents.sop.stamp_status).

A compaction loses exactly these first: what is still running, what is not
committed, and which record holds the state of the work.
"""
from __future__ import annotations

import os

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


MAX_ALERTS = 10
MAX_KILLS = 8


def _clock(t: float | str) -> str:
    import time
    try:
        return time.strftime("%H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError):
        return "?"


def section_running(event: HookEvent) -> list:
    from swarmgate.hooks import session_state as S

    if not event.session_id:
        return ["(no session id in the payload: cannot tell)"]
    run = S.running(S.load(event.session_id))
    if not run:
        return ["none"]
    out = []
    for aid, a in run:
        name = f" \"{a['name']}\"" if a.get("name") else ""
        out.append(f"- {aid} {a.get('type') or '?'}{name}, since {_clock(a.get('started'))}")
    out.append("They report back when they finish; do not dispatch their work again.")
    return out


def section_record(event: HookEvent, config: Config) -> list:
    from swarmgate.agents import records as R

    try:
        path = R.current_record(event.repo, config, session=event.session_id or None)
    except Exception as e:  # noqa: BLE001
        return [f"(cannot read the records: {e})"]
    if not path:
        rel_dir = config["records"]["dir"]
        return [(f"none in {rel_dir}/: write one before dispatching (`swarmgate records new ROUND --goal ... "
                 f"--exit ...`)")]
    rel = os.path.relpath(path, event.repo)
    try:
        rec = R.load_record(path)
    except R.RecordError as e:
        return [f"{rel}: {e}"]
    out = [f"{rel} (round {rec.get('round')}): goal: {rec.get('goal') or '?'}; exit: {rec.get('exit') or '?'}"]
    open_ = R.open_tasks(rec)
    if not open_:
        out.append("every task has a verdict")
    else:
        out.append(f"open tasks ({len(open_)} of {len(rec['tasks'])}):")
        for t in open_[:15]:
            deps = ",".join(t.get("deps") or []) or "-"
            ready = {True: "inputs ready", False: "inputs not ready", None: "inputs ?"}[t.get("inputs_ready")]
            batch = t.get("batch") or "?"
            out.append(f"- {t['id']} {t.get('description') or ''} [batch {batch}, deps {deps}, {ready}]")
        if len(open_) > 15:
            out.append(f"- ... and {len(open_) - 15} more")
    out.append(f"Read {rel} before you dispatch anything.")
    return out


def session_alerts(event: HookEvent) -> list | None:
    """Alerts of this session (and machine-wide ones) it has not seen, read without marking them
    (memoised on the event); None without a session id."""
    def build() -> list[dict] | None:
        import time

        from swarmgate.alerts import unread

        if not event.session_id:
            return None
        return [a for a in unread("session:" + event.session_id, mark=False, since=time.time() - 24 * 3600)
                if a.get("session") in (None, "", event.session_id)]
    return event.derived("session_alerts", build)


def section_alerts(event: HookEvent) -> list:
    fresh = session_alerts(event)
    if fresh is None:
        return ["(no session id: cannot tell what is unread)"]
    if not fresh:
        return ["none"]
    out = [f"- {_clock(a.get('time'))} [{a.get('source') or a.get('kind') or 'alert'}] "
           f"{str(a.get('message') or '')[:300]}" for a in fresh[-MAX_ALERTS:]]
    if len(fresh) > MAX_ALERTS:
        out.insert(0, f"(the last {MAX_ALERTS} of {len(fresh)})")
    return out


def mark_alerts_read(event: HookEvent, config: Config) -> None:  # noqa: ARG001 - the act signature
    """C01's act: the alerts the report showed are read for this session."""
    from swarmgate.alerts import mark_read

    fresh = session_alerts(event)
    if fresh:
        mark_read("session:" + event.session_id, max(float(a.get("time") or 0) for a in fresh))


def section_oom(text: str | None = None, source: str = "", now: float | None = None) -> list:
    import time

    from swarmgate.hooks import kernel_oom as K

    t = time.time() if now is None else now
    if text is None:
        text, source = K.read_live()
        if not text:
            return [f"(could not read the kernel log: {source})"]
    kills = K.recent(K.parse(text, now=t, boot_time=K.boot_time()), t)
    machine = [k for k in kills if k.kind == K.MACHINE]
    cgroup = [k for k in kills if k.kind == K.CGROUP]
    if not kills:
        return [f"none (read {source})"]
    out = [f"(read {source})"]
    if machine:
        out.append(f"RED: whole machine ran out of memory {len(machine)} time(s); before you dispatch the "
                    f"same step again, find what took the memory and run it under run-with-memory-cap:")
        if len(machine) > MAX_KILLS:
            out.append(f"(the last {MAX_KILLS})")
        out += [f"- {K.describe(k)}" for k in machine[-MAX_KILLS:]]
    else:
        out.append("whole machine: none")
    if cgroup:
        out.append(f"inside a cgroup limit (the cap did its job; the job needs a bigger cap or less memory): "
                   f"{len(cgroup)}")
        if len(cgroup) > MAX_KILLS:
            out.append(f"(the last {MAX_KILLS})")
        out += [f"- {K.describe(k)}" for k in cgroup[-MAX_KILLS:]]
    else:
        out.append("inside a cgroup limit: none")
    return out


def section_sop(event: HookEvent, config: Config) -> tuple[bool, list]:
    from swarmgate.agents.sop import stamp_status

    try:
        ok, msg = stamp_status(event.repo, config)
    except Exception as e:  # noqa: BLE001
        return False, [f"(cannot check the upstream rules copy: {e})"]
    return ok, [msg if ok else "RED: " + msg]


SECTIONS = ("running", "git", "record", "alerts", "oom", "sop")


def build(event: HookEvent, config: Config, *, kernel_text: str | None = None, kernel_source: str = "") -> str:
    """The report. `git status` and the kernel log are the derived facts "git_status" and
    "kernel_log" (hooks/derivations.py: the processes start in the derive phase, not here);
    ``kernel_text`` given (tests) replaces the kernel log."""
    from swarmgate.hooks.derivations import get

    src = event.payload.get("source") or "startup"
    parts = [f"swarmgate session start ({src}): what you were doing and what happened meanwhile."]
    rules = plugin_main_rules(event)
    if rules:
        parts.insert(0, rules)
    heads = {
        "running": "Subagents of this session still running",
        "git": "Uncommitted changes in the worktree",
        "record": "Scheduling record of the current round",
        "alerts": "Alerts since you last looked",
        "oom": "Processes the kernel killed for memory in the last 12 h",
        "sop": "Upstream rules copy",
    }
    for name in SECTIONS:
        try:
            if name == "running":
                body = section_running(event)
            elif name == "git":
                body = get(event, config, "git_status")
            elif name == "record":
                body = section_record(event, config)
            elif name == "alerts":
                body = section_alerts(event)
            elif name == "oom":
                if kernel_text is None:
                    text, source = get(event, config, "kernel_log")
                    body = section_oom(text, source) if text else [f"(could not read the kernel log: {source})"]
                else:
                    body = section_oom(kernel_text, kernel_source)
            else:
                ok, body = section_sop(event, config)
                if ok and body and body[0].startswith("no upstream rules copy"):
                    continue
        except Exception as e:  # noqa: BLE001 - one unreadable section never hides the others
            body = [f"(could not read: {type(e).__name__}: {e})"]
        parts.append(f"## {heads[name]}\n" + "\n".join(body))
    return "\n\n".join(parts)


SOURCES = ("startup", "resume", "clear", "compact", "fork")
PLUGIN_ROOT_ENV = "SWARMGATE_PLUGIN_ROOT"   # set by the plugin's bin/swarmgate-hook: the plugin's folder
MAIN_IMPORT = "@.claude/main-agent.md"       # how `swarmgate install` gives the main agent its rules (CLAUDE.md)


def plugin_main_rules(event: HookEvent) -> str:
    """The main agent's rules (main-agent.md) when swarmgate's plugin started this hook: a plugin cannot
    edit CLAUDE.md, so its SessionStart context carries them, unless the repository's CLAUDE.md
    already imports the installed copy. '' otherwise."""
    root = os.environ.get(PLUGIN_ROOT_ENV)
    if not root:
        return ""
    from swarmgate.bounded_read import read_text
    try:
        if MAIN_IMPORT in read_text(os.path.join(event.repo, "CLAUDE.md"), 1 << 20):
            return ""
    except (OSError, UnicodeDecodeError):
        pass
    try:
        text = read_text(os.path.join(root, "main-agent.md"), 1 << 20).strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f"swarmgate: your rules as the main agent (main-agent.md of swarmgate's plugin, {root}):\n\n{text}"


def check_c01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.break_switch import broken

    src = event.payload.get("source") or "startup"
    if src not in SOURCES or broken("c01-no-report"):
        return None
    return G.Finding("C01", build(event, config), decision=G.CONTEXT)


def _state_running() -> dict:
    import json
    st = {"session": "selftest-session", "procs": [], "dispatches": [],
          "agents": {"a1": {"type": "implementer", "started": 1.0, "stopped": None, "proc": {"pid": 1},
                            "name": "parser", "dispatch": None}}}
    return {".selftest-state/sessions/selftest-session/state.json": json.dumps(st)}


_RECORD = ("# Round r1\n\ngoal: ship the parser\nexit: tests pass\n\n## Tasks\n\n"
           "| id | description | deps | inputs ready | batch | verdict |\n"
           "|----|-------------|------|--------------|-------|---------|\n"
           "| t1 | parse the header | - | yes | 1 | |\n")

GUARDS = (
    G.Guard(
        code="C01",
        summary=("SessionStart: running subagents, uncommitted files, the round's record, alerts, OOM kills, "
                 "rules stamp"),
        events=("SessionStart",), tools=(), check=check_c01, act=mark_alerts_read, advisory=True, budget_ms=15000,
        needs=("git_status", "kernel_log"),
        doc=G.GuardDoc(
            why="A compaction keeps a summary, and the summary loses first what is still running, what is not "
                "committed and which record holds the work. After a crash, a main agent that re-dispatched "
                "the same step without reading the kernel log caused the second OOM.",
            example="SessionStart {source: compact}",
            instead="Nothing to do; read it before dispatching.",
            exceptions="Each section is best effort; one that cannot be read says so in one line. The upstream "
                       "rules section appears only where the repository has a copy. Sources other than "
                       "startup, resume, clear, compact and fork get nothing."),
        breaks={"c01-no-report": "sessions start without the report"},
        cases=lambda: (
            G.Case("after-compact", "SessionStart", {"source": "compact"}, fires=True, breaks=("c01-no-report",),
                   files={**_state_running(), "records/r1.md": _RECORD}),
            G.Case("startup", "SessionStart", {"source": "startup"}, fires=True, breaks=("c01-no-report",)),
            G.Case("unknown-source", "SessionStart", {"source": "teleport"}, fires=False),
        )),
)
