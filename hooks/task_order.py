"""D30 (SPEC §12, seed 004): a dispatch for a task whose dependencies are not closed is refused.

Seed 004's pipeline only worked once "the writer finishes before the
synthesizer that reads it starts"; the scheduling record (records/<round>.md)
holds that order as each task's ``deps`` (its depends_on) and batch. D30 reads
the dispatch prompt's ``task:`` lines (label: ``[dispatch] task_line``) and,
for a value that names a task of a record (``t2``, ``r1/t2``, or ``t2 wire
the hook``: the first word is the id), refuses the dispatch while any of the
task's dependencies is not closed:

- a dependency without a verdict, with ``next-round`` or ``drop``, or missing
  from the table;
- a dependency closed although its verify has not passed (and its verdict
  says no why): the same rule S01 applies at the end of the round, so
  closing a dependency by hand does not open the way.

A ``task:`` value that is one bare word naming no task of any record and
shaped like an id (a digit or a ``ROUND/`` in it: ``t22``) is refused as well
(a mistyped id would otherwise switch the check off), when the repository has
records at all; a plain word (``task: refactor``) is free text. Free text (``task: add the parser``) names
no task and is not judged, unless ``[dispatch] require_task = true``: then a
dispatch while the current round has open tasks must name one of them.

Parsing the prompt is pure (``task_refs``); reading the records is the
derive step (``task_status``, memoised per event); ``judge_d30`` is pure.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")


def task_refs(prompt: str, label: str) -> list[tuple[str, bool]]:
    """[(first word of each `task:` line's value, whether that word is the whole value)] (pure)."""
    from swarmgate.hooks.dispatch_prompt_parse import labelled_value

    out = []
    for line in (prompt or "").splitlines():
        value = labelled_value(line, label)
        if value is None:
            continue
        value = value.strip().strip("`'\"")
        words = value.split()
        if not words:
            continue
        first = words[0].rstrip(":,;.—-").strip("`'\"")
        if first and set(first) <= ID_CHARS and first[0].isalnum():
            out.append((first, len(words) == 1))
    return out


def looks_like_id(word: str) -> bool:
    """A bare `task:` word that names no task is taken for a mistyped id when it has a digit or a
    round (`t22`, `r1/t3`); a plain word (`task: refactor`) is free text."""
    return "/" in word or any(c.isdigit() for c in word)


def task_status(event: HookEvent, config: Config) -> dict:
    """What the records say about each task the prompt names (derived once per event)."""
    return event.derived("d30_tasks", lambda: _task_status(event, config))


def _task_status(event: HookEvent, config: Config) -> dict:
    from swarmgate.agents import records as R

    prompt = event.tool_input.get("prompt") if isinstance(event.tool_input.get("prompt"), str) else ""
    refs = task_refs(prompt, config["dispatch"]["task_line"])
    out: dict = {"named": [], "unknown": [], "any_record": False, "current": None, "current_open": [],
                 "error": None}
    try:
        paths = R.list_records(event.repo, config)
    except Exception as e:  # noqa: BLE001
        out["error"] = str(e)
        return out
    out["any_record"] = bool(paths)
    if not paths:
        return out
    session = event.session_id or None
    try:
        cur = R.current_record(event.repo, config, session)
        if cur:
            rec = R.load_record(cur)
            out["current"] = rec["round"]
            out["current_open"] = [t["id"] for t in R.open_tasks(rec)]
    except R.RecordError as e:
        out["error"] = str(e)
    for ref, bare in refs:
        found = R.find_task(event.repo, config, ref, session)
        if found is None:
            if bare and looks_like_id(ref):
                out["unknown"].append(ref)
            continue
        path, rec, task = found
        blocking = R.open_dependencies(rec, task)
        closed = [d for d in task["deps"] if d not in {b for b, _ in blocking}]
        if closed:
            from swarmgate.agents import record_verify as V
            try:
                results = V.latest_results(path)
            except Exception:  # noqa: BLE001 - unreadable results: a closed dependency's verify counts as not run
                results = {}
            bad = {t["id"]: why for t, why in R.unverified_closed(rec, R.read_snapshot(path), results)}
            blocking += [(d, f"closed, but {bad[d]}") for d in closed if d in bad]
        out["named"].append({"ref": ref, "round": rec["round"], "task": task["id"],
                             "description": task.get("description") or "", "blocking": blocking})
    return out


def judge_d30(status: dict, config: Config, require_task: bool) -> Finding | None:
    """Pure: the refusal for a dispatch whose named task waits on open dependencies."""
    lines, ways = [], []
    for n in status["named"]:
        if not n["blocking"]:
            continue
        deps = ", ".join(f"{d} ({state})" for d, state in n["blocking"])
        lines.append(f"task {n['task']} of round {n['round']} depends on {deps}")
        first = n["blocking"][0][0]
        ways.append(f"dispatch {first} first and wait until it hands back and is judged "
                    f"(`swarmgate records verdict {n['round']} {first} close`, after `swarmgate records verify "
                    f"{first}` where it has a verify); if {n['task']} no longer needs it, change the plan first: "
                    f"`swarmgate records update {n['round']} {n['task']} --deps ...`")
    if lines:
        return G.Finding(
            "D30", "this dispatch is out of order: " + "; ".join(lines) + ". A task that starts before what it "
                   "reads is finished works from missing or stale inputs.",
            "; ".join(ways) + ".")
    if status["unknown"]:
        shown = ", ".join(status["unknown"])
        open_ = ", ".join(status["current_open"][:12]) or "none"
        return G.Finding(
            "D30", f"the prompt's `{config['dispatch']['task_line']}:` line names {shown}, which is no task of any "
                   f"scheduling record, so its order cannot be checked.",
            f"name the task by its id in the round's record (open tasks of round {status['current'] or '?'}: "
            f"{open_}), or add it first: `swarmgate records add-task ROUND ID -d \"...\" --deps ...`.")
    if require_task and not status["named"] and status["current_open"]:
        return G.Finding(
            "D30", f"the prompt names no task of round {status['current']} ([dispatch] require_task is on), so "
                   f"its order cannot be checked.",
            f"add a line `{config['dispatch']['task_line']}: ID` naming one of the open tasks: "
            f"{', '.join(status['current_open'][:12])}.")
    return None


def check_d30(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.break_switch import broken

    if broken("d30-allow-open-deps"):
        return None
    status = task_status(event, config)
    return judge_d30(status, config, bool(config["dispatch"]["require_task"]))


# --- cases ---------------------------------------------------------------------------

_AGENT = {".claude/agents/implementer.md": "---\nname: implementer\ndescription: implements one task\n---\nDo it.\n"}
_PLAN = ("# Round r1\n\ngoal: ship the parser\nexit: its tests pass\n\n## Tasks\n\n"
         "| id | description | deps | inputs ready | batch | verdict |\n"
         "|----|-------------|------|--------------|-------|---------|\n"
         "| t1 | write the parser | - | yes | 1 | {v1} |\n"
         "| t2 | wire it in | t1 | no | 2 | |\n")
_OPEN = {**_AGENT, "records/r1.md": _PLAN.format(v1="")}
_CLOSED = {**_AGENT, "records/r1.md": _PLAN.format(v1="close")}
_CLOSED_UNVERIFIED = {**_AGENT, "records/r1.md": _PLAN.format(v1="close") + (
    "\n## Verify\n\n| task | command | expect exit | max retries |\n|---|---|---|---|\n| t1 | make test | 0 | 0 |\n")}


def _dispatch(task_line: str, subagent: bool = False) -> dict:
    prompt = f"{task_line}\nexit criterion: the hook is wired\nheavy test: do not run\nthread cap: 31\n"
    payload = {"tool_name": "Agent", "tool_use_id": "toolu_selftest_d30",
               "tool_input": {"description": "wire it", "prompt": prompt, "subagent_type": "implementer"}}
    if subagent:
        payload.update(agent_id="a7", agent_type="implementer")
    return payload


GUARDS = (
    G.Guard(
        code="D30", summary="a dispatch for a task whose dependencies are not closed is refused",
        events=("PreToolUse",), tools=G.DISPATCH_TOOLS, check=check_d30, budget_ms=10000,
        doc=G.GuardDoc(
            why="Seed 004: the synthesizer must not start before the writers it reads have finished, or it "
                "aggregates missing or stale inputs and nobody notices. The scheduling record holds that order "
                "(each task's deps and batch); a dispatch that names a task (`task: ID`) whose dependencies are "
                "not closed starts work out of order. A dependency closed by hand while its verify has not "
                "passed does not count as closed (the rule S01 applies at the end of the round).",
            example="records/r1.md has `| t2 | wire it in | t1 | no | 2 | |` and t1 has no verdict; the main "
                    "agent dispatches a prompt with `task: t2`",
            instead="Dispatch the dependency first, wait for it to hand back, judge it "
                    "(`swarmgate records verdict ROUND t1 close`, after `swarmgate records verify t1`), then "
                    "dispatch t2. If t2 no longer needs t1, change the plan: `swarmgate records update ROUND t2 "
                    "--deps ...`.",
            exceptions="A `task:` value that is free text (`task: add the parser`, `task: refactor`) names no task "
                       "and is not judged unless `[dispatch] require_task = true`; a bare id-like word (`t22`, "
                       "`r1/t9`) naming no task of any record is refused (a mistyped id would otherwise switch the "
                       "check off). Repositories without records are not judged."),
        breaks={"d30-allow-open-deps": "dispatches start tasks whose dependencies are still open"},
        cases=lambda: (
            G.Case("main-dispatches-before-its-dependency", "PreToolUse", _dispatch("task: t2"), fires=True,
                   breaks=("d30-allow-open-deps",), files=_OPEN),
            G.Case("subagent-dispatches-before-its-dependency", "PreToolUse",
                   _dispatch("task: r1/t2 wire it in", subagent=True), fires=True,
                   breaks=("d30-allow-open-deps",), files=_OPEN),
            G.Case("dependency-closed-but-unverified", "PreToolUse", _dispatch("task: t2"), fires=True,
                   breaks=("d30-allow-open-deps",), files=_CLOSED_UNVERIFIED),
            G.Case("mistyped-task-id", "PreToolUse", _dispatch("task: t22"), fires=True,
                   breaks=("d30-allow-open-deps",), files=_OPEN),
            G.Case("main-dispatches-after-its-dependency-closed", "PreToolUse", _dispatch("task: t2"), fires=False,
                   files=_CLOSED),
            G.Case("subagent-dispatches-a-task-without-dependencies", "PreToolUse",
                   _dispatch("- Task: t1 — write the parser", subagent=True), fires=False, files=_OPEN),
            G.Case("free-text-task-line", "PreToolUse", _dispatch("task: add the parser for the v2 header"),
                   fires=False, files=_OPEN),
            G.Case("one-plain-word-task-line", "PreToolUse", _dispatch("task: refactor"), fires=False, files=_OPEN),
            G.Case("no-records", "PreToolUse", _dispatch("task: t2"), fires=False, files=_AGENT),
            G.Case("required-task-line-missing", "PreToolUse", _dispatch("task: add the parser"), fires=True,
                   breaks=("d30-allow-open-deps",), files=_OPEN, config="[dispatch]\nrequire_task = true\n"),
        )),
)
