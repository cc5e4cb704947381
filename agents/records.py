"""Scheduling records (SPEC §6.1): the main agent's external memory of a round.

One Markdown file per round, ``records/<round>.md`` (directory: ``[records]
dir``). The full format is documented in docs/records.md; in short:

    # Round 2026-11-29-a

    goal: what this round delivers
    exit: the criterion that closes it
    session: <Claude Code session id>        (optional: whose round)
    created: 2026-11-29T12:00:00Z

    ## Tasks

    | id | description | deps | inputs ready | batch | verdict |
    |----|-------------|------|--------------|-------|---------|
    | t1 | parse the config | - | yes | 1 | close |
    | t2 | wire the hook | t1 | no | 2 | |

    ## Verify

    | task | command | expect exit | max retries |
    |------|---------|-------------|-------------|
    | t1 | pytest -q tests/config | 0 | 1 |

    ## Notes
    free text (why things were decided; rules link here "read only to trace history")

``deps`` is each task's ``depends_on`` (the column may be headed ``depends
on``): every dependency is a task of the table, the graph has no cycle, and an
open task's batch comes after each of its dependencies' batches. Verdicts:
``close`` (done this round), ``next-round``, ``drop``; empty (or ``-``) means
open; a verdict may carry a note after a colon (``close: verified by the
gate run``), which is how a closed task whose verify did not pass says why.

The optional ``## Verify`` table gives a task its verify command, the exit
code that means success and how often a failure is retried (an optional fifth
column ``cap`` is the memory cap of a heavy verify). ``swarmgate records
verify TASK`` runs it (agents/record_verify.py) and keeps every attempt in
the state dir, where S01 reads it: a closed task's verify must have passed.

A task may not vanish silently: every time the ``records`` command reads or
writes a record it compares the rows with a snapshot kept in the state dir
(``records_snapshots_dir()``); a task that was there without a verdict and is
gone now is an error until its row is restored (``records restore``) or given
a verdict (``records verdict`` also accepts a removed id and restores its row
with the verdict). Edits are validated before they are written: an edit that
would add a problem (an unknown dependency, a cycle, a batch before its
dependency's) is refused (exit 251) and the file is left byte-identical.

Pure API for other tools (light imports; S01, D30 and SessionStart use it):
``load_record(path)``, ``list_records(repo, config)``,
``current_record(repo, config, session=None)``, ``open_tasks(record)``,
``validate(record, snapshot=None)``, ``removed_tasks(record, snapshot)``,
``read_snapshot(path)``, ``find_task(repo, config, task_id, session)``,
``open_dependencies(record, task)``, ``unverified_closed(record, snapshot,
results)``; and ``observe_record(path)`` (validate + refresh the snapshot) for
a hook that sees a record being edited by hand.
"""
from __future__ import annotations

import os
import sys

from swarmgate.front_door import entry
from swarmgate.state_paths import record_snapshot_path as snapshot_path

COLUMNS = ("id", "description", "deps", "inputs ready", "batch", "verdict")
DEPS_HEADERS = ("deps", "depends on", "depends_on")
VERIFY_COLUMNS = ("task", "command", "expect exit", "max retries")
VERIFY_CAP_COLUMN = "cap"
VERDICTS = ("close", "next-round", "drop")
HEADER_KEYS = {"goal": "goal", "exit": "exit", "exit criterion": "exit", "session": "session",
               "created": "created"}
TASKS_HEADING = "## tasks"
VERIFY_HEADING = "## verify"
MAX_RETRIES = 10
EXIT_USAGE = 251  # SPEC §9: a usage error; the record was not changed


class RecordError(Exception):
    """A record cannot be read or changed; the message names the file and the fix."""


def _split_row(line: str) -> list[str]:
    """Cells of a Markdown table row; ``\\|`` is a literal bar."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if c == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(c and set(c) <= set("-: ") and "-" in c for c in cells)


def _valid_id(task_id: str) -> bool:
    if not task_id or len(task_id) > 64 or not (task_id[0].isalnum()):
        return False
    return all(c.isalnum() or c in "._-" for c in task_id)


def _heading(low: str) -> str:
    return low.rstrip(": ")


def parse_record(text: str, path: str = "<record>") -> dict:
    """A record from its text. Never raises: format problems go to ``record["problems"]``.

    Returns {"path", "round", "goal", "exit", "session", "created", "tasks":
    [{"id", "description", "deps": [...], "inputs_ready": bool|None, "batch":
    int|None, "verdict": str|None, "note": str, "line": int}], "table": (first, last)
    line indexes of the task table or None, "verify": {task id: {"command",
    "expect_exit", "max_retries", "cap", "line"}}, "verify_table": (first, last) or
    None, "has_cap_column": bool, "problems": ["file:line: ..."]}.
    """
    base = os.path.basename(path)
    rec: dict = {"path": path, "round": base[:-3] if base.endswith(".md") else base,
                 "goal": "", "exit": "", "session": "", "created": "", "tasks": [],
                 "table": None, "verify": {}, "verify_table": None, "has_cap_column": False,
                 "problems": []}
    problems = rec["problems"]
    lines = text.splitlines()
    section = ""
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        low = stripped.lower()
        if low.startswith("#"):
            section = _heading(low)
            i += 1
            continue
        if not section.startswith("## ") and rec["table"] is None:
            body = stripped[2:] if stripped.startswith("- ") else stripped
            key, sep, value = body.partition(":")
            k = key.strip().strip("*").strip().lower()
            if sep and k in HEADER_KEYS and not rec[HEADER_KEYS[k]]:
                rec[HEADER_KEYS[k]] = value.strip()
        if section == TASKS_HEADING and rec["table"] is None and stripped.startswith("|"):
            i = _parse_task_table(lines, i, path, rec)
            continue
        if section == VERIFY_HEADING and rec["verify_table"] is None and stripped.startswith("|"):
            i = _parse_verify_table(lines, i, path, rec)
            continue
        i += 1
    if not rec["goal"]:
        problems.append(f"{path}: no `goal:` line (write `goal: <what this round delivers>` "
                        f"above `## Tasks`)")
    if not rec["exit"]:
        problems.append(f"{path}: no `exit:` line (write `exit: <the criterion that closes "
                        f"the round>` above `## Tasks`)")
    if rec["table"] is None:
        problems.append(f"{path}: no task table (a `## Tasks` heading followed by "
                        f"| {' | '.join(COLUMNS)} |)")
    return rec


def _table_end(lines: list[str], j: int) -> int:
    while j < len(lines) and lines[j].strip().startswith("|"):
        j += 1
    return j


def _parse_task_table(lines: list[str], i: int, path: str, rec: dict) -> int:
    problems = rec["problems"]
    header = [c.lower() for c in _split_row(lines[i].strip())]
    if len(header) == len(COLUMNS) and header[2] in DEPS_HEADERS:
        header[2] = "deps"
    if tuple(header) != COLUMNS:
        problems.append(f"{path}:{i + 1}: the task table's header must be "
                        f"| {' | '.join(COLUMNS)} |, found | {' | '.join(header)} |")
        end = _table_end(lines, i + 1)
        rec["table"] = (i, end - 1)
        return end
    j = i + 1
    if j >= len(lines) or not _is_separator(_split_row(lines[j])):
        problems.append(f"{path}:{j + 1}: the task table's second line must be the "
                        f"separator |---|---|---|---|---|---|")
    else:
        j += 1
    while j < len(lines) and lines[j].strip().startswith("|"):
        task = _parse_task(_split_row(lines[j]), j, path, problems)
        if task is not None:
            rec["tasks"].append(task)
        j += 1
    rec["table"] = (i, j - 1)
    return j


def _parse_verify_table(lines: list[str], i: int, path: str, rec: dict) -> int:
    problems = rec["problems"]
    header = tuple(c.lower() for c in _split_row(lines[i].strip()))
    if header not in (VERIFY_COLUMNS, VERIFY_COLUMNS + (VERIFY_CAP_COLUMN,)):
        problems.append(f"{path}:{i + 1}: the verify table's header must be "
                        f"| {' | '.join(VERIFY_COLUMNS)} | (optionally `| {VERIFY_CAP_COLUMN} |` last), "
                        f"found | {' | '.join(header)} |")
        end = _table_end(lines, i + 1)
        rec["verify_table"] = (i, end - 1)
        return end
    rec["has_cap_column"] = len(header) == len(VERIFY_COLUMNS) + 1
    j = i + 1
    if j >= len(lines) or not _is_separator(_split_row(lines[j])):
        problems.append(f"{path}:{j + 1}: the verify table's second line must be the separator |---|---|---|---|")
    else:
        j += 1
    while j < len(lines) and lines[j].strip().startswith("|"):
        _parse_verify(_split_row(lines[j]), j, path, len(header), rec)
        j += 1
    rec["verify_table"] = (i, j - 1)
    return j


def _parse_verify(cells: list[str], idx: int, path: str, ncols: int, rec: dict) -> None:
    problems = rec["problems"]
    where = f"{path}:{idx + 1}"
    if len(cells) != ncols:
        problems.append(f"{where}: a verify row needs {ncols} cells, found {len(cells)} (write a bar "
                        f"inside the command as \\|)")
        return
    tid, command = cells[0], cells[1]
    if len(command) >= 2 and command.startswith("`") and command.endswith("`"):
        command = command[1:-1]
    spec: dict = {"command": command.strip(), "expect_exit": 0, "max_retries": 0, "cap": None,
                  "line": idx + 1}
    if not spec["command"]:
        problems.append(f"{where}: task {tid}: the verify command is empty")
    try:
        spec["expect_exit"] = int(cells[2])
        if not 0 <= spec["expect_exit"] <= 255:
            raise ValueError
    except ValueError:
        problems.append(f"{where}: task {tid}: expect exit = {cells[2]!r}: expected an exit code 0-255")
    try:
        spec["max_retries"] = int(cells[3])
        if not 0 <= spec["max_retries"] <= MAX_RETRIES:
            raise ValueError
    except ValueError:
        problems.append(f"{where}: task {tid}: max retries = {cells[3]!r}: expected 0-{MAX_RETRIES}")
    if ncols > len(VERIFY_COLUMNS) and cells[4].strip() not in ("", "-"):
        from swarmgate.sizes import parse_size
        try:
            spec["cap"] = parse_size(cells[4].strip())
        except ValueError:
            problems.append(f"{where}: task {tid}: cap = {cells[4]!r}: expected a size such as 512M or 8G")
    if tid in rec["verify"]:
        problems.append(f"{where}: task {tid} has a second verify row (first on line "
                        f"{rec['verify'][tid]['line']}); keep one")
        return
    rec["verify"][tid] = spec


def _parse_task(cells: list[str], idx: int, path: str, problems: list[str]) -> dict | None:
    where = f"{path}:{idx + 1}"
    if len(cells) != len(COLUMNS):
        problems.append(f"{where}: a task row needs {len(COLUMNS)} cells "
                        f"({', '.join(COLUMNS)}), found {len(cells)} (escape a bar in a "
                        f"description as \\|)")
        return None
    tid, desc, deps, ready, batch, verdict = cells
    task: dict = {"id": tid, "description": desc, "deps": [], "inputs_ready": None,
                  "batch": None, "verdict": None, "note": "", "line": idx + 1}
    if not _valid_id(tid):
        problems.append(f"{where}: task id {tid!r}: use letters, digits, `.`, `_`, `-` "
                        f"(starting with a letter or digit)")
    if deps.strip() not in ("", "-"):
        task["deps"] = [d.strip() for d in deps.split(",") if d.strip()]
    r = ready.strip().lower()
    if r in ("yes", "y", "true"):
        task["inputs_ready"] = True
    elif r in ("no", "n", "false"):
        task["inputs_ready"] = False
    else:
        problems.append(f"{where}: task {tid}: inputs ready = {ready!r}: expected yes or no")
    try:
        task["batch"] = int(batch)
        if task["batch"] < 1:
            raise ValueError
    except ValueError:
        problems.append(f"{where}: task {tid}: batch = {batch!r}: expected a positive integer")
        task["batch"] = None
    word, _, note = verdict.partition(":")
    v = word.strip().lower()
    task["note"] = note.strip()
    if v in ("", "-", "open"):
        task["verdict"] = None
    elif v in VERDICTS:
        task["verdict"] = v
    else:
        problems.append(f"{where}: task {tid}: verdict = {verdict!r}: expected close, "
                        f"next-round, drop or empty (open), optionally with a note after a colon")
        task["verdict"] = None
    return task


def load_record(path) -> dict:
    """Parse ``path`` (see parse_record). Raises RecordError only when it cannot be read."""
    path = str(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record") from None
    except OSError as e:
        raise RecordError(f"{path}: cannot read: {e}") from None
    return parse_record(text, path)


def open_tasks(record: dict) -> list[dict]:
    """Tasks of ``record`` that have no verdict yet (what S01 blocks a stop on)."""
    return [t for t in record["tasks"] if not t["verdict"]]


def records_dir(repo, config) -> str:
    d = config["records"]["dir"] if config is not None else "records"
    return d if os.path.isabs(d) else os.path.join(str(repo), d)


def list_records(repo, config) -> list[str]:
    """Paths of every record (``*.md`` except README.md and dotfiles), newest change first."""
    d = records_dir(repo, config)
    try:
        names = os.listdir(d)
    except OSError:
        return []
    out = []
    for n in names:
        if not n.endswith(".md") or n.startswith(".") or n.lower() == "readme.md":
            continue
        p = os.path.join(d, n)
        try:
            out.append((os.stat(p).st_mtime, n, p))
        except OSError:
            continue
    out.sort(key=lambda x: (-x[0], x[1]))
    return [p for _, _, p in out]


def current_record(repo, config, session: str | None = None, limit: int = 50) -> str | None:
    """The record of the current round, or None when there is none.

    The most recently changed record that is still open (a task without a
    verdict, or no tasks yet); when every record is closed, the most recently
    changed one. With ``session``, records that name another session in their
    ``session:`` line are skipped (two main agents in one repository each
    have their own round). Reads at most ``limit`` records.
    """
    newest = None
    for path in list_records(repo, config)[:limit]:
        try:
            rec = load_record(path)
        except RecordError:
            continue
        if session and rec["session"] and rec["session"] != session:
            continue
        if newest is None:
            newest = path
        if not rec["tasks"] or open_tasks(rec):
            return path
    return newest


# --- snapshots: what was there last time ---

def read_snapshot(record_path) -> dict:
    """{task id: row} last seen for ``record_path`` ({} when none)."""
    from swarmgate.statefile import read_json

    data = read_json(snapshot_path(record_path), {})
    tasks = data.get("tasks")
    return tasks if isinstance(tasks, dict) else {}


def _row(task: dict, verify: dict | None = None) -> dict:
    row = {"id": task["id"], "description": task["description"], "deps": list(task["deps"]),
           "inputs_ready": task["inputs_ready"], "batch": task["batch"], "verdict": task["verdict"]}
    if task.get("note"):
        row["note"] = task["note"]
    spec = (verify or {}).get(task["id"])
    if spec:
        row["verify"] = spec["command"]
    return row


def removed_tasks(record: dict, snapshot: dict) -> list[dict]:
    """Rows in ``snapshot`` that had no verdict and are missing from ``record`` now."""
    present = {t["id"] for t in record["tasks"]}
    out = []
    for tid, row in snapshot.items():
        if tid in present or not isinstance(row, dict):
            continue
        if not row.get("verdict"):
            out.append(dict(row, id=tid))
    return out


def next_snapshot(record: dict, snapshot: dict) -> dict:
    """The snapshot to keep: current rows, plus removed rows that never got a verdict.

    Each row keeps ``planned_verify``: the verify command the task had when it was first seen
    with one. S01 compares it with the current command, so weakening a verify after planning
    (`true`) does not pass for a verify that passed.
    """
    out = {t["id"]: _row(t, record.get("verify")) for t in record["tasks"]}
    for tid, row in out.items():
        old = snapshot.get(tid)
        planned = old.get("planned_verify") if isinstance(old, dict) else None
        if planned or row.get("verify"):
            row["planned_verify"] = planned or row["verify"]
    for row in removed_tasks(record, snapshot):
        out[row["id"]] = row
    return out


def write_snapshot(record_path, tasks: dict) -> None:
    import time

    from swarmgate.statefile import write_json_atomic

    write_json_atomic(snapshot_path(record_path), {"path": os.path.realpath(str(record_path)),
                                                   "tasks": tasks, "updated": time.time()})


# --- validation: every problem has a key, so an edit can be refused for the ones it adds ---

def graph_problems(record: dict) -> list[tuple[tuple, str]]:
    """(key, message) for duplicate ids, unknown or self dependencies, cycles, batch order and
    verify rows naming no task (pure)."""
    path = record["path"]
    out: list[tuple[tuple, str]] = []
    ids: dict[str, dict] = {}
    for t in record["tasks"]:
        if t["id"] in ids:
            out.append((("duplicate", t["id"]), f"{path}:{t['line']}: task id {t['id']} is used twice "
                                                 f"(first on line {ids[t['id']]['line']})"))
        else:
            ids[t["id"]] = t
    for t in record["tasks"]:
        for d in t["deps"]:
            if d == t["id"]:
                out.append((("self", t["id"]), f"{path}:{t['line']}: task {t['id']} depends on itself"))
            elif d not in ids:
                out.append((("unknown", t["id"], d), f"{path}:{t['line']}: task {t['id']} depends on {d}, "
                                                      f"which is not in the table"))
            elif not t["verdict"] and t["batch"] and ids[d]["batch"] and ids[d]["batch"] >= t["batch"]:
                # only open tasks: a finished round's table is history, not a plan
                out.append((("batch", t["id"], d),
                            f"{path}:{t['line']}: task {t['id']} (batch {t['batch']}) depends on {d} (batch "
                            f"{ids[d]['batch']}): a dependency must be in an earlier batch, because a batch "
                            f"is dispatched at once (give {t['id']} batch {ids[d]['batch'] + 1} or later)"))
    for scc in cycles(ids):
        shown = " -> ".join(scc + [scc[0]])
        out.append((("cycle", frozenset(scc)), f"{path}: dependency cycle {shown}: a round's tasks must form "
                                               f"batches that can run in order"))
    for tid, spec in record.get("verify", {}).items():
        if tid not in ids:
            out.append((("verify-unknown", tid), f"{path}:{spec['line']}: the verify row of {tid} names no task "
                                                 f"of the table"))
    return out


def problems_with_keys(record: dict, snapshot: dict | None = None) -> list[tuple[tuple, str]]:
    """Every problem of ``record`` as (key, message): format, graph, removed tasks."""
    out: list[tuple[tuple, str]] = [(("format", p), p) for p in record["problems"]]
    out += graph_problems(record)
    if snapshot:
        for row in removed_tasks(record, snapshot):
            out.append((("removed", row["id"]),
                        f"{record['path']}: task {row['id']} ({row.get('description', '')!s}) was removed "
                        f"without a verdict: restore it (`swarmgate records restore "
                        f"{record['round']}`) or give it one (`swarmgate records verdict "
                        f"{record['round']} {row['id']} close|next-round|drop`)"))
    return out


def validate(record: dict, snapshot: dict | None = None) -> list[str]:
    """Every problem of ``record``: format, duplicate ids, unknown deps, cycles, batch order, removed tasks."""
    return [msg for _, msg in problems_with_keys(record, snapshot)]


def cycles(tasks: dict[str, dict]) -> list[list[str]]:
    """Every dependency cycle: the strongly connected components with more than one task (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def visit(root: str) -> None:
        work = [(root, iter(tasks[root]["deps"]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            n, it = work[-1]
            for d in it:
                if d not in tasks or d == n:
                    continue
                if d not in index:
                    index[d] = low[d] = counter[0]
                    counter[0] += 1
                    stack.append(d)
                    on.add(d)
                    work.append((d, iter(tasks[d]["deps"])))
                    break
                if d in on:
                    low[n] = min(low[n], index[d])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[n])
                if low[n] == index[n]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == n:
                            break
                    if len(comp) > 1:
                        out.append(list(reversed(comp)))

    for n in tasks:
        if n not in index:
            visit(n)
    return out


def task_by_id(record: dict, task_id: str) -> dict | None:
    for t in record["tasks"]:
        if t["id"] == task_id:
            return t
    return None


def open_dependencies(record: dict, task: dict) -> list[tuple[str, str]]:
    """(dependency id, its state) for each dependency of ``task`` that is not closed: "open",
    "next-round", "drop", or "not in the table" (pure; D30 refuses a dispatch on these)."""
    out = []
    for d in task["deps"]:
        dep = task_by_id(record, d)
        if dep is None:
            out.append((d, "not in the table"))
        elif dep["verdict"] != "close":
            out.append((d, dep["verdict"] or "open"))
    return out


def find_task(repo, config, task_id: str, session: str | None = None) -> tuple[str, dict, dict] | None:
    """(record path, record, task) for ``task_id`` ("ID" or "ROUND/ID"): the current round's record
    first, then every record newest first; None when no record has it."""
    rnd, _, tid = task_id.rpartition("/")
    paths = list_records(repo, config)
    if rnd:
        paths = [p for p in paths if os.path.basename(p) == rnd + ".md"]
    else:
        cur = current_record(repo, config, session)
        if cur:
            paths = [cur] + [p for p in paths if p != cur]
    for path in paths:
        try:
            rec = load_record(path)
        except RecordError:
            continue
        t = task_by_id(rec, tid)
        if t is not None:
            return path, rec, t
    return None


def unverified_closed(record: dict, snapshot: dict, results: dict) -> list[tuple[dict, str]]:
    """(task, why) for each task closed without its verify passing and without a note saying why.

    ``results``: {task id: the latest attempt for it (record_verify.latest)}; an attempt counts
    only for the command it ran. A verify changed or removed since it was planned (the snapshot's
    ``planned_verify``) does not count either: a closed task needs the planned verify to pass, or
    a note (``close: <why>``).
    """
    out = []
    for t in record["tasks"]:
        if t["verdict"] != "close" or t.get("note"):
            continue
        spec = record.get("verify", {}).get(t["id"])
        row = snapshot.get(t["id"]) if isinstance(snapshot, dict) else None
        planned = row.get("planned_verify") if isinstance(row, dict) else None
        command = spec["command"] if spec else None
        if planned and planned != command:
            why = (f"its planned verify `{planned}` was removed" if command is None
                   else f"its verify changed since it was planned (`{planned}`, now `{command}`)")
            out.append((t, why))
            continue
        if command is None:
            continue
        last = results.get(t["id"])
        if not last or last.get("command") != command:
            out.append((t, f"its verify `{command}` has not run"))
        elif last.get("class") != "pass":
            out.append((t, f"its verify `{command}` last ended {last.get('class')} (exit {last.get('exit')})"))
    return out


# --- writing ---

def _cell(text: str) -> str:
    return str(text).replace("\n", " ").replace("|", "\\|").strip()


def format_row(row: dict) -> str:
    deps = ", ".join(row.get("deps") or []) or "-"
    ready = {True: "yes", False: "no"}.get(row.get("inputs_ready"), "no")
    batch = row.get("batch") or 1
    verdict = row.get("verdict") or ""
    if verdict and row.get("note"):
        verdict += ": " + row["note"]
    return (f"| {_cell(row['id'])} | {_cell(row.get('description', ''))} | {_cell(deps)} | "
            f"{ready} | {batch} | {_cell(verdict)} |")


def format_verify_row(tid: str, spec: dict, with_cap: bool) -> str:
    from swarmgate.sizes import human

    cells = [_cell(tid), _cell(spec["command"]), str(spec.get("expect_exit", 0)), str(spec.get("max_retries", 0))]
    if with_cap:
        cells.append(human(spec["cap"]).replace(".0", "") if spec.get("cap") else "-")
    return "| " + " | ".join(cells) + " |"


def render_new(round_name: str, goal: str, exit_criterion: str, session: str = "",
               created: str = "") -> str:
    lines = [f"# Round {round_name}", "", f"goal: {goal.strip()}", f"exit: {exit_criterion.strip()}"]
    if session:
        lines.append(f"session: {session}")
    if created:
        lines.append(f"created: {created}")
    lines += ["", "## Tasks", "", "| " + " | ".join(COLUMNS) + " |",
              "|" + "|".join("----" for _ in COLUMNS) + "|", "", "## Notes", ""]
    return "\n".join(lines)


def replace_rows(text: str, record: dict, rows: list[dict], verify: dict | None = None) -> str:
    """``text`` with the task table's rows (and, given ``verify``, the verify table's rows)
    replaced; every other line is kept. A verify table is added before `## Notes` (or at the
    end) when the record has none yet and ``verify`` holds any."""
    lines = text.splitlines()
    if record["table"] is None:
        raise RecordError(f"{record['path']}: no task table to update (add `## Tasks` and the "
                          f"header | {' | '.join(COLUMNS)} |)")
    if record["problems"] and any("header" in p or "separator" in p for p in record["problems"]):
        raise RecordError("; ".join(p for p in record["problems"] if "header" in p or "separator" in p))
    edits = [(record["table"], [format_row(r) for r in rows])]
    with_cap = record.get("has_cap_column") or any(s.get("cap") for s in (verify or {}).values())
    vrows = [format_verify_row(t, s, with_cap) for t, s in (verify or {}).items()]
    header = ["| " + " | ".join(VERIFY_COLUMNS + ((VERIFY_CAP_COLUMN,) if with_cap else ())) + " |",
              "|" + "|".join("----" for _ in range(len(VERIFY_COLUMNS) + with_cap)) + "|"]
    insert_at = None
    if verify is not None and record.get("verify_table") is not None:
        first, last = record["verify_table"]
        old_header = lines[first:first + 2]
        keep = header if with_cap and not record.get("has_cap_column") else old_header
        edits.append(((first, last), vrows, keep))
    elif verify:
        insert_at = next((i for i in range(record["table"][1] + 1, len(lines))
                          if _heading(lines[i].strip().lower()) == "## notes"), len(lines))
    out: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: e[0][0]):
        (first, last), new_rows = edit[0], edit[1]
        head = edit[2] if len(edit) > 2 else lines[first:first + 2]
        out += lines[cursor:first] + head + new_rows
        cursor = last + 1
    rest = lines[cursor:]
    if insert_at is not None:
        k = insert_at - cursor
        block = ["## Verify", ""] + header + vrows + [""]
        if k > 0 and rest[k - 1].strip():
            block = [""] + block
        rest = rest[:k] + block + rest[k:]
    return "\n".join(out + rest) + ("\n" if text.endswith("\n") or not text else "")


# --- the command ---

def _resolve(repo: str, config, name: str) -> str:
    if name.endswith(".md"):
        return os.path.abspath(name)
    if not _valid_id(name):
        raise RecordError(f"round name {name!r}: use letters, digits, `.`, `_`, `-`")
    return os.path.join(records_dir(repo, config), name + ".md")


class EditRefused(RecordError):
    """An edit would add problems to the record; nothing was written."""


def _spec_key(verify: dict) -> dict:
    return {t: {k: v for k, v in spec.items() if k != "line"} for t, spec in verify.items()}


def _edit(path: str, change) -> tuple[dict, list[str]]:
    """Load, apply ``change(rows, verify, snapshot) -> (rows, verify)``, validate the result,
    and only then write it and refresh the snapshot. Under the record's lock.

    An edit that adds a problem the record did not have (an unknown dependency, a cycle, a
    batch before its dependency's, ...) raises EditRefused and leaves the file byte-identical;
    problems the record already had do not block an unrelated edit.
    """
    from swarmgate.break_switch import broken
    from swarmgate.statefile import locked, write_text_atomic

    with locked(snapshot_path(path) + ".lock", timeout=30):
        rec = load_record(path)
        snap = read_snapshot(path)
        rows = [_row(t) for t in rec["tasks"]]
        verify = {tid: dict(spec) for tid, spec in rec["verify"].items()}
        rows, verify = change(rows, verify, snap)
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        changed_verify = _spec_key(verify) != _spec_key(rec["verify"])
        new_text = replace_rows(text, rec, rows, verify if changed_verify else None)
        new = parse_record(new_text, path)
        before = {k for k, _ in problems_with_keys(rec, snap)}
        added = [m for k, m in problems_with_keys(new, snap) if k not in before]
        if added and not broken("records-write-before-validate"):
            raise EditRefused("refused, the record was not changed: " + "; ".join(added))
        write_text_atomic(path, new_text)
        problems = validate(new, snap)
        write_snapshot(path, next_snapshot(new, snap))
    return new, problems


def _check(path: str) -> tuple[dict, list[str]]:
    """Validate against the snapshot, then refresh the snapshot (never forgetting removed rows)."""
    from swarmgate.statefile import locked

    with locked(snapshot_path(path) + ".lock", timeout=30):
        rec = load_record(path)
        snap = read_snapshot(path)
        if _forgets_removed():
            snap = {}
        problems = validate(rec, snap)
        write_snapshot(path, next_snapshot(rec, snap))
    return rec, problems


def observe_record(path) -> list[str]:
    """Validate ``path`` against its snapshot and refresh the snapshot; returns the problems.

    For hooks that see the record change (e.g. PostToolUse on a Write/Edit of
    ``records/*.md``): a record edited only by hand is then still watched for
    rows that vanish without a verdict. Raises RecordError when unreadable.
    """
    return _check(str(path))[1]


def _forgets_removed() -> bool:
    from swarmgate.break_switch import broken
    return broken("records-forget-removed")


def _verify_target(repo, config, task_ref: str, timeout: float, session: str) -> tuple[str, dict, dict, dict]:
    """(record path, record, task, its verify) for ``swarmgate records verify TASK_REF``; RecordError
    when there is nothing to run (record_verify.verify_task runs it)."""
    if timeout <= 0:
        raise RecordError(f"--timeout {timeout:g}: expected a positive number of seconds")
    found = find_task(repo, config, task_ref, session or None)
    if found is None:
        raise RecordError(f"no task {task_ref} in any record of {repo} (`swarmgate records current` lists the "
                          f"round's tasks; ROUND/ID names another round's)")
    path, rec, task = found
    spec = rec["verify"].get(task["id"])
    if spec is None:
        raise RecordError(f"task {task['id']} of {path} has no verify: add one with `swarmgate records update "
                          f"{rec['round']} {task['id']} --verify 'COMMAND' [--expect-exit N] [--max-retries N]`")
    return path, rec, task, spec


def _print_problems(problems: list[str]) -> None:
    for p in problems:
        print(f"records: {p}", file=sys.stderr)


def _summary(rec: dict) -> str:
    from swarmgate.agents import record_verify as V

    open_ = open_tasks(rec)
    by_v: dict[str, int] = {}
    for t in rec["tasks"]:
        by_v[t["verdict"] or "open"] = by_v.get(t["verdict"] or "open", 0) + 1
    counts = ", ".join(f"{k} {v}" for k, v in sorted(by_v.items())) or "no tasks yet"
    text = f"{rec['path']}: round {rec['round']} ({counts})"
    if open_:
        text += "\n  open: " + ", ".join(
            f"{t['id']} (batch {t['batch']}, inputs {'ready' if t['inputs_ready'] else 'not ready'})"
            for t in open_)
    if rec["verify"]:
        latest = V.latest_results(rec["path"])
        shown = []
        for tid, spec in rec["verify"].items():
            last = latest.get(tid)
            if last and last.get("command") == spec["command"]:
                shown.append(f"{tid} {last['class']} ({last.get('attempts', 1)} attempt(s))")
            else:
                shown.append(f"{tid} not run")
        text += "\n  verify: " + ", ".join(shown)
    return text


def _split_deps(text: str) -> list[str]:
    return [d.strip() for d in text.split(",") if d.strip() and d.strip() != "-"]


def _verify_args(s) -> None:
    s.add_argument("--verify", metavar="COMMAND", help="the task's verify command (run by `records verify`)")
    s.add_argument("--expect-exit", type=int, metavar="N", help="the verify's exit code that means success (default 0)")
    s.add_argument("--max-retries", type=int, metavar="N", help="how often a failing verify is run again (default 0)")
    s.add_argument("--cap", metavar="SIZE", help="memory cap of a heavy verify (default: from its history)")


@entry("records")
def main(argv: list[str] | None = None) -> int:
    import time

    from swarmgate.config import ConfigError, find_repo, load_config
    from swarmgate.statefile import StateError, write_text_atomic
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(prog="swarmgate records",
                                description="Scheduling records (records/<round>.md): create, update, "
                                            "validate, verify. A task never disappears without a verdict.")
    p.add_argument("--repo", help="repository (default: the one around the current directory)")
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("new", help="write a new round's record (before dispatching anything)")
    s.add_argument("round")
    s.add_argument("--goal", required=True)
    s.add_argument("--exit", required=True, dest="exit_criterion", help="the exit criterion")
    s.add_argument("--session", default=os.environ.get("CLAUDE_CODE_SESSION_ID", ""),
                   help="the main agent's session id (default: $CLAUDE_CODE_SESSION_ID)")
    s = sub.add_parser("add-task", help="add a task row (validated before it is written)")
    s.add_argument("round")
    s.add_argument("id")
    s.add_argument("--description", "-d", required=True)
    s.add_argument("--deps", "--depends-on", dest="deps", default="", help="comma-separated task ids it depends on")
    s.add_argument("--batch", type=int, default=None,
                   help="its dispatch wave (default: one after its latest dependency's, else 1)")
    s.add_argument("--inputs-ready", choices=("yes", "no"), default="no")
    _verify_args(s)
    s = sub.add_parser("update", help="change a task's description, deps, batch, inputs-ready or verify")
    s.add_argument("round")
    s.add_argument("id")
    s.add_argument("--description", "-d")
    s.add_argument("--deps", "--depends-on", dest="deps")
    s.add_argument("--batch", type=int)
    s.add_argument("--inputs-ready", choices=("yes", "no"))
    _verify_args(s)
    s.add_argument("--no-verify", action="store_true", help="remove the task's verify")
    s = sub.add_parser("verdict", help="judge a task: close | next-round | drop")
    s.add_argument("round")
    s.add_argument("id")
    s.add_argument("verdict", choices=VERDICTS)
    s.add_argument("--reason", default="",
                   help="a note kept with the verdict (a task closed without its verify passing says why)")
    s = sub.add_parser("restore", help="put back rows removed without a verdict")
    s.add_argument("round")
    s = sub.add_parser("validate", help="check one record or all (format, deps, cycles, batch order, removed tasks)")
    s.add_argument("round", nargs="?")
    s = sub.add_parser("current", help="print the current round's record, its open tasks and verify results")
    s.add_argument("--session", default=None)
    s = sub.add_parser("verify", help="run a task's verify command and record the result")
    s.add_argument("task", help="task id (ROUND/ID names another round's task)")
    s.add_argument("--round", help="the round (default: the current one)")
    s.add_argument("--timeout", type=float, default=3600.0, help="seconds before an attempt is stopped (default 3600)")
    s.add_argument("--session", default=os.environ.get("CLAUDE_CODE_SESSION_ID", ""),
                   help="the session id recorded with the result (default: $CLAUDE_CODE_SESSION_ID)")
    args = p.parse_args(argv)
    if not args.cmd:
        p.error("expected one of: new, add-task, update, verdict, restore, validate, current, verify")

    repo = os.path.abspath(args.repo) if args.repo else find_repo()
    try:
        config = load_config(repo)
        return _run(args, repo, config, time, write_text_atomic)
    except (ConfigError, RecordError, StateError) as e:
        print(f"records: {e}", file=sys.stderr)
        return EXIT_USAGE


def _spec_from(args, old: dict | None) -> dict | None:
    """The verify spec after --verify/--expect-exit/--max-retries/--cap (None: no verify)."""
    from swarmgate.sizes import parse_size

    given = any(getattr(args, k, None) is not None for k in ("verify", "expect_exit", "max_retries", "cap"))
    if getattr(args, "no_verify", False):
        if given:
            raise RecordError("--no-verify removes the verify; it takes no --verify/--expect-exit/--max-retries/--cap")
        return None
    if not given:
        return old
    spec = dict(old or {"command": "", "expect_exit": 0, "max_retries": 0, "cap": None})
    spec.pop("line", None)
    if args.verify is not None:
        if not args.verify.strip():
            raise RecordError("--verify '': give the command, or remove the verify with --no-verify")
        spec["command"] = " ".join(args.verify.split("\n")).strip()
    if not spec["command"]:
        raise RecordError("--expect-exit/--max-retries/--cap need a verify command: add --verify COMMAND")
    if args.expect_exit is not None:
        if not 0 <= args.expect_exit <= 255:
            raise RecordError(f"--expect-exit {args.expect_exit}: expected an exit code 0-255")
        spec["expect_exit"] = args.expect_exit
    if args.max_retries is not None:
        if not 0 <= args.max_retries <= MAX_RETRIES:
            raise RecordError(f"--max-retries {args.max_retries}: expected 0-{MAX_RETRIES}")
        spec["max_retries"] = args.max_retries
    if args.cap is not None:
        if args.cap.strip() in ("", "-"):
            spec["cap"] = None
        else:
            try:
                spec["cap"] = parse_size(args.cap)
            except ValueError as e:
                raise RecordError(f"--cap {args.cap}: {e}") from None
    return spec


def _run(args, repo, config, time, write_text_atomic) -> int:
    cmd = args.cmd
    if cmd == "new":
        path = _resolve(repo, config, args.round)
        if os.path.exists(path):
            raise RecordError(f"{path} exists: a round's record is written once; add tasks with "
                              f"`swarmgate records add-task {args.round} ID ...`")
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_text_atomic(path, render_new(args.round, args.goal, args.exit_criterion,
                                           args.session, created))
        _, problems = _check(path)
        print(path)
        return 0
    if cmd == "current":
        path = current_record(repo, config, args.session)
        if path is None:
            print(f"records: no record in {records_dir(repo, config)} (start a round with "
                  f"`swarmgate records new ROUND --goal ... --exit ...`)", file=sys.stderr)
            return 1
        print(_summary(load_record(path)))
        return 0
    if cmd == "validate":
        paths = [_resolve(repo, config, args.round)] if args.round else sorted(list_records(repo, config))
        bad = 0
        for path in paths:
            rec, problems = _check(path)
            if problems:
                bad += 1
                _print_problems(problems)
            else:
                print(f"ok {path} ({len(rec['tasks'])} tasks, {len(open_tasks(rec))} open)")
        return 1 if bad else 0
    if cmd == "verify":
        from swarmgate.agents import record_verify
        task_ref = args.task if not args.round else f"{args.round}/{args.task.rpartition('/')[2]}"
        path, rec, task, spec = _verify_target(repo, config, task_ref, args.timeout, args.session)
        return record_verify.verify_task(repo, config, path, rec, task, spec, timeout=args.timeout,
                                         session=args.session)

    path = _resolve(repo, config, args.round)
    if not os.path.exists(path):
        raise RecordError(f"{path}: no such record (create it with `swarmgate records new "
                          f"{args.round} --goal ... --exit ...`)")

    if cmd == "add-task":
        if not _valid_id(args.id):
            raise RecordError(f"task id {args.id!r}: use letters, digits, `.`, `_`, `-`")
        if args.batch is not None and args.batch < 1:
            raise RecordError(f"--batch {args.batch}: expected a positive integer")
        deps = _split_deps(args.deps)
        spec = _spec_from(args, None)

        def change(rows, verify, snap):
            if any(r["id"] == args.id for r in rows):
                raise RecordError(f"task {args.id} is already in {path}; change it with "
                                  f"`swarmgate records update`")
            batch = args.batch
            if batch is None:
                batch = 1 + max((r.get("batch") or 1 for r in rows if r["id"] in deps), default=0)
            if spec:
                verify[args.id] = spec
            return rows + [{"id": args.id, "description": args.description, "deps": deps,
                            "inputs_ready": args.inputs_ready == "yes", "batch": batch,
                            "verdict": None}], verify
    elif cmd == "update":
        if args.batch is not None and args.batch < 1:
            raise RecordError(f"--batch {args.batch}: expected a positive integer")

        def change(rows, verify, snap):
            for r in rows:
                if r["id"] == args.id:
                    if args.description is not None:
                        r["description"] = args.description
                    if args.deps is not None:
                        r["deps"] = _split_deps(args.deps)
                    if args.batch is not None:
                        r["batch"] = args.batch
                    if args.inputs_ready is not None:
                        r["inputs_ready"] = args.inputs_ready == "yes"
                    spec = _spec_from(args, verify.get(args.id))
                    if spec is None:
                        verify.pop(args.id, None)
                    else:
                        verify[args.id] = spec
                    return rows, verify
            raise RecordError(f"no task {args.id} in {path}")
    elif cmd == "verdict":
        note = " ".join(args.reason.split())

        def change(rows, verify, snap):
            for r in rows:
                if r["id"] == args.id:
                    r["verdict"] = args.verdict
                    r["note"] = note
                    return rows, verify
            row = snap.get(args.id)
            if isinstance(row, dict):  # removed by hand: its row comes back with the verdict
                return rows + [dict(row, id=args.id, verdict=args.verdict, note=note)], verify
            raise RecordError(f"no task {args.id} in {path}")
    elif cmd == "restore":
        def change(rows, verify, snap):
            rec = {"tasks": [{"id": r["id"]} for r in rows]}
            back = removed_tasks(rec, snap)
            for r in back:
                print(f"restored {r['id']}")
            return rows + [{"id": r["id"], "description": r.get("description", ""),
                            "deps": r.get("deps") or [], "inputs_ready": r.get("inputs_ready"),
                            "batch": r.get("batch") or 1, "verdict": None} for r in back], verify
    else:  # pragma: no cover - argparse keeps this unreachable
        raise RecordError(f"unknown command {cmd}")
    rec, problems = _edit(path, change)
    if problems:
        _print_problems(problems)
        return 1
    print(_summary(rec))
    if cmd == "verdict" and args.verdict == "close":
        from swarmgate.agents import record_verify as V
        for t, why in unverified_closed(rec, read_snapshot(path), V.latest_results(path)):
            if t["id"] == args.id:
                print(f"records: note: {args.id} is closed but {why}: the stop check (S01) refuses to end "
                      f"the round until `swarmgate records verify {args.id}` passes, or the verdict says why "
                      f"(`swarmgate records verdict {rec['round']} {args.id} close --reason \"...\"`)",
                      file=sys.stderr)
    return 0


# --- self-test ---

def selftest_suite():
    """Cells: a task removed from a record without a verdict is reported (snapshot compared); an
    edit that would add an unknown dependency leaves the record byte-identical. Each cell works in
    a temporary directory with its own state directory (the machine's is never touched)."""
    import contextlib
    import shutil
    import tempfile

    from swarmgate.selftest import Cell, Suite

    text = ("# Round st\n\ngoal: g\nexit: e\n\n## Tasks\n\n| " + " | ".join(COLUMNS) + " |\n"
            "|---|---|---|---|---|---|\n| t1 | a | - | yes | 1 | |\n| t2 | b | - | yes | 1 | |\n")

    @contextlib.contextmanager
    def sandbox():
        from swarmgate.state_paths import STATE_ENV

        d = tempfile.mkdtemp(prefix="swarmgate-records-selftest-")
        old = os.environ.get(STATE_ENV)
        os.environ[STATE_ENV] = os.path.join(d, "state")
        try:
            path = os.path.join(d, "st.md")
            with open(path, "w") as f:
                f.write(text)
            yield path
        finally:
            if old is None:
                os.environ.pop(STATE_ENV, None)
            else:
                os.environ[STATE_ENV] = old
            shutil.rmtree(d, ignore_errors=True)

    from swarmgate.cell_outcome import broken, green, protected, red

    def removed_is_error():
        with sandbox() as path:
            _, first = _check(path)
            with open(path, "w") as f:
                f.write(text.replace("| t2 | b | - | yes | 1 | |\n", ""))
            _, second = _check(path)
            if first:
                return broken(f"the intact record already has problems: {first}")
            return protected(any("t2" in p and "removed without a verdict" in p for p in second),
                             "a task removed without a verdict went unnoticed")

    def bad_edit_refused():
        with sandbox() as path:
            def add_unknown_dep(rows, verify, snap):
                return rows + [{"id": "t3", "description": "c", "deps": ["t9"], "inputs_ready": False,
                                "batch": 2, "verdict": None}], verify
            try:
                _edit(path, add_unknown_dep)
            except EditRefused:
                with open(path) as f:
                    return green() if f.read() == text else red("refused, but the record was changed anyway")
            return red("an edit adding an unknown dependency was written")

    return Suite("records", [Cell("removed-task-is-an-error", removed_is_error),
                             Cell("bad-edit-leaves-the-record-unchanged", bad_edit_refused)],
                 {"records-forget-removed": ["removed-task-is-an-error"],
                  "records-write-before-validate": ["bad-edit-leaves-the-record-unchanged"]})


if __name__ == "__main__":
    sys.exit(main())
