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

    ## Notes
    free text (why things were decided; rules link here "read only to trace history")

Verdicts: ``close`` (done this round), ``next-round``, ``drop``; empty (or
``-``) means open. A task may not vanish silently: every time the ``records``
command reads or writes a record it compares the rows with a snapshot kept in
the state dir (``records_snapshots_dir()``); a task that was there without a
verdict and is gone now is an error until its row is restored
(``records restore``) or given a verdict (``records verdict`` also accepts a
removed id and restores its row with the verdict).

Pure API for other tools (light imports; S01 and SessionStart use it):
``load_record(path)``, ``list_records(repo, config)``,
``current_record(repo, config, session=None)``, ``open_tasks(record)``,
``validate(record, snapshot=None)``, ``removed_tasks(record, snapshot)``,
``read_snapshot(path)``; and ``observe_record(path)`` (validate + refresh the
snapshot) for a hook that sees a record being edited by hand.
"""
from __future__ import annotations

import os
import sys

COLUMNS = ("id", "description", "deps", "inputs ready", "batch", "verdict")
VERDICTS = ("close", "next-round", "drop")
HEADER_KEYS = {"goal": "goal", "exit": "exit", "exit criterion": "exit", "session": "session",
               "created": "created"}
TASKS_HEADING = "## tasks"


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


def parse_record(text: str, path: str = "<record>") -> dict:
    """A record from its text. Never raises: format problems go to ``record["problems"]``.

    Returns {"path", "round", "goal", "exit", "session", "created", "tasks":
    [{"id", "description", "deps": [...], "inputs_ready": bool|None, "batch":
    int|None, "verdict": str|None, "line": int}], "table": (first, last) line
    indexes of the table or None, "problems": ["file:line: ..."]}.
    """
    base = os.path.basename(path)
    rec: dict = {"path": path, "round": base[:-3] if base.endswith(".md") else base,
                 "goal": "", "exit": "", "session": "", "created": "", "tasks": [],
                 "table": None, "problems": []}
    problems = rec["problems"]
    lines = text.splitlines()
    in_tasks = False
    table_start = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        low = stripped.lower()
        if low.startswith("#"):
            in_tasks = low.rstrip(": ") == TASKS_HEADING
            i += 1
            continue
        if not in_tasks and table_start is None:
            body = stripped[2:] if stripped.startswith("- ") else stripped
            key, sep, value = body.partition(":")
            k = key.strip().strip("*").strip().lower()
            if sep and k in HEADER_KEYS and not rec[HEADER_KEYS[k]]:
                rec[HEADER_KEYS[k]] = value.strip()
        if in_tasks and table_start is None and stripped.startswith("|"):
            table_start = i
            header = [c.lower() for c in _split_row(stripped)]
            if tuple(header) != COLUMNS:
                problems.append(f"{path}:{i + 1}: the task table's header must be "
                                f"| {' | '.join(COLUMNS)} |, found | {' | '.join(header)} |")
                rec["table"] = (i, i)
                i += 1
                while i < len(lines) and lines[i].strip().startswith("|"):
                    i += 1
                rec["table"] = (table_start, i - 1)
                continue
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
            rec["table"] = (table_start, j - 1)
            i = j
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


def _parse_task(cells: list[str], idx: int, path: str, problems: list[str]) -> dict | None:
    where = f"{path}:{idx + 1}"
    if len(cells) != len(COLUMNS):
        problems.append(f"{where}: a task row needs {len(COLUMNS)} cells "
                        f"({', '.join(COLUMNS)}), found {len(cells)} (escape a bar in a "
                        f"description as \\|)")
        return None
    tid, desc, deps, ready, batch, verdict = cells
    task: dict = {"id": tid, "description": desc, "deps": [], "inputs_ready": None,
                  "batch": None, "verdict": None, "line": idx + 1}
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
    v = verdict.strip().lower()
    if v in ("", "-", "open"):
        task["verdict"] = None
    elif v in VERDICTS:
        task["verdict"] = v
    else:
        problems.append(f"{where}: task {tid}: verdict = {verdict!r}: expected close, "
                        f"next-round, drop or empty (open)")
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

def snapshot_path(record_path) -> str:
    """Where the snapshot of ``record_path`` lives (state dir, keyed by the real path)."""
    import hashlib

    from swarmgate.state_paths import records_snapshots_dir, safe_name

    real = os.path.realpath(str(record_path))
    key = hashlib.sha256(real.encode()).hexdigest()[:16]
    return os.path.join(str(records_snapshots_dir()),
                        f"{safe_name(os.path.basename(real))[:60]}-{key}.json")


def read_snapshot(record_path) -> dict:
    """{task id: row} last seen for ``record_path`` ({} when none)."""
    from swarmgate.statefile import read_json

    data = read_json(snapshot_path(record_path), {})
    tasks = data.get("tasks")
    return tasks if isinstance(tasks, dict) else {}


def _row(task: dict) -> dict:
    return {"id": task["id"], "description": task["description"], "deps": list(task["deps"]),
            "inputs_ready": task["inputs_ready"], "batch": task["batch"], "verdict": task["verdict"]}


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
    """The snapshot to keep: current rows, plus removed rows that never got a verdict."""
    out = {t["id"]: _row(t) for t in record["tasks"]}
    for row in removed_tasks(record, snapshot):
        out[row["id"]] = row
    return out


def write_snapshot(record_path, tasks: dict) -> None:
    import time

    from swarmgate.statefile import write_json_atomic

    write_json_atomic(snapshot_path(record_path), {"path": os.path.realpath(str(record_path)),
                                                   "tasks": tasks, "updated": time.time()})


def validate(record: dict, snapshot: dict | None = None) -> list[str]:
    """Every problem of ``record``: format, duplicate ids, unknown deps, cycles, removed tasks."""
    problems = list(record["problems"])
    path = record["path"]
    ids: dict[str, dict] = {}
    for t in record["tasks"]:
        if t["id"] in ids:
            problems.append(f"{path}:{t['line']}: task id {t['id']} is used twice "
                            f"(first on line {ids[t['id']]['line']})")
        else:
            ids[t["id"]] = t
    for t in record["tasks"]:
        for d in t["deps"]:
            if d not in ids:
                problems.append(f"{path}:{t['line']}: task {t['id']} depends on {d}, "
                                f"which is not in the table")
            elif d == t["id"]:
                problems.append(f"{path}:{t['line']}: task {t['id']} depends on itself")
    cycle = _find_cycle(ids)
    if cycle:
        problems.append(f"{path}: dependency cycle {' -> '.join(cycle)}: a round's tasks must "
                        f"form batches that can run in order")
    if snapshot:
        for row in removed_tasks(record, snapshot):
            problems.append(f"{path}: task {row['id']} ({row.get('description', '')!s}) was removed "
                            f"without a verdict: restore it (`swarmgate records restore "
                            f"{record['round']}`) or give it one (`swarmgate records verdict "
                            f"{record['round']} {row['id']} close|next-round|drop`)")
    return problems


def _find_cycle(tasks: dict[str, dict]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for d in tasks[n]["deps"]:
            if d not in tasks or d == n:
                continue
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if state.get(d) is None:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in tasks:
        if state.get(n) is None:
            found = visit(n)
            if found:
                return found
    return None


# --- writing ---

def _cell(text: str) -> str:
    return str(text).replace("\n", " ").replace("|", "\\|").strip()


def format_row(row: dict) -> str:
    deps = ", ".join(row.get("deps") or []) or "-"
    ready = {True: "yes", False: "no"}.get(row.get("inputs_ready"), "no")
    batch = row.get("batch") or 1
    return (f"| {_cell(row['id'])} | {_cell(row.get('description', ''))} | {_cell(deps)} | "
            f"{ready} | {batch} | {row.get('verdict') or ''} |")


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


def replace_rows(text: str, record: dict, rows: list[dict]) -> str:
    """``text`` with the task table's rows replaced by ``rows`` (everything else kept)."""
    lines = text.splitlines()
    if record["table"] is None:
        raise RecordError(f"{record['path']}: no task table to update (add `## Tasks` and the "
                          f"header | {' | '.join(COLUMNS)} |)")
    first, last = record["table"]
    if record["problems"] and any("header" in p or "separator" in p for p in record["problems"]):
        raise RecordError("; ".join(record["problems"]))
    head = lines[:first + 2]
    new = head + [format_row(r) for r in rows] + lines[last + 1:]
    return "\n".join(new) + ("\n" if text.endswith("\n") or not text else "")


# --- the command ---

def _resolve(repo: str, config, name: str) -> str:
    if name.endswith(".md"):
        return os.path.abspath(name)
    if not _valid_id(name):
        raise RecordError(f"round name {name!r}: use letters, digits, `.`, `_`, `-`")
    return os.path.join(records_dir(repo, config), name + ".md")


def _edit(path: str, change) -> tuple[dict, list[str]]:
    """Load, apply ``change(rows, snapshot) -> rows``, write, validate, snapshot. Under a lock."""
    from swarmgate.statefile import locked, write_text_atomic

    with locked(snapshot_path(path) + ".lock", timeout=30):
        rec = load_record(path)
        snap = read_snapshot(path)
        rows = [_row(t) for t in rec["tasks"]]
        rows = change(rows, snap)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        write_text_atomic(path, replace_rows(text, rec, rows))
        new = load_record(path)
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


def _print_problems(problems: list[str]) -> None:
    for p in problems:
        print(f"records: {p}", file=sys.stderr)


def _summary(rec: dict) -> str:
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
    return text


def main(argv: list[str] | None = None) -> int:
    import argparse
    import time

    from swarmgate.config import ConfigError, find_repo, load_config
    from swarmgate.statefile import StateError, write_text_atomic

    p = argparse.ArgumentParser(prog="swarmgate records",
                                description="Scheduling records (records/<round>.md): create, update, "
                                            "validate. A task never disappears without a verdict.")
    p.add_argument("--repo", help="repository (default: the one around the current directory)")
    p.add_argument("--selftest", action="store_true", help="run this tool's self-test")
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("new", help="write a new round's record (before dispatching anything)")
    s.add_argument("round")
    s.add_argument("--goal", required=True)
    s.add_argument("--exit", required=True, dest="exit_criterion", help="the exit criterion")
    s.add_argument("--session", default=os.environ.get("CLAUDE_CODE_SESSION_ID", ""),
                   help="the main agent's session id (default: $CLAUDE_CODE_SESSION_ID)")
    s = sub.add_parser("add-task", help="add a task row")
    s.add_argument("round")
    s.add_argument("id")
    s.add_argument("--description", "-d", required=True)
    s.add_argument("--deps", default="", help="comma-separated task ids")
    s.add_argument("--batch", type=int, default=1)
    s.add_argument("--inputs-ready", choices=("yes", "no"), default="no")
    s = sub.add_parser("update", help="change a task's description, deps, batch or inputs-ready")
    s.add_argument("round")
    s.add_argument("id")
    s.add_argument("--description", "-d")
    s.add_argument("--deps")
    s.add_argument("--batch", type=int)
    s.add_argument("--inputs-ready", choices=("yes", "no"))
    s = sub.add_parser("verdict", help="judge a task: close | next-round | drop")
    s.add_argument("round")
    s.add_argument("id")
    s.add_argument("verdict", choices=VERDICTS)
    s = sub.add_parser("restore", help="put back rows removed without a verdict")
    s.add_argument("round")
    s = sub.add_parser("validate", help="check one record or all (format, deps, cycles, removed tasks)")
    s.add_argument("round", nargs="?")
    s = sub.add_parser("current", help="print the current round's record and its open tasks")
    s.add_argument("--session", default=None)
    args = p.parse_args(argv)
    from swarmgate.break_switch import tool_start
    early = tool_start("records", args.selftest, "records")
    if early is not None:
        return early
    if not args.cmd:
        p.error("expected one of: new, add-task, update, verdict, restore, validate, current")

    repo = os.path.abspath(args.repo) if args.repo else find_repo()
    try:
        config = load_config(repo)
        return _run(args, repo, config, time, write_text_atomic)
    except (ConfigError, RecordError, StateError) as e:
        print(f"records: {e}", file=sys.stderr)
        return 1


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

    path = _resolve(repo, config, args.round)
    if not os.path.exists(path):
        raise RecordError(f"{path}: no such record (create it with `swarmgate records new "
                          f"{args.round} --goal ... --exit ...`)")

    if cmd == "add-task":
        if not _valid_id(args.id):
            raise RecordError(f"task id {args.id!r}: use letters, digits, `.`, `_`, `-`")
        if args.batch < 1:
            raise RecordError(f"--batch {args.batch}: expected a positive integer")
        deps = [d.strip() for d in args.deps.split(",") if d.strip() and d.strip() != "-"]

        def change(rows, snap):
            if any(r["id"] == args.id for r in rows):
                raise RecordError(f"task {args.id} is already in {path}; change it with "
                                  f"`swarmgate records update`")
            return rows + [{"id": args.id, "description": args.description, "deps": deps,
                            "inputs_ready": args.inputs_ready == "yes", "batch": args.batch,
                            "verdict": None}]
    elif cmd == "update":
        def change(rows, snap):
            for r in rows:
                if r["id"] == args.id:
                    if args.description is not None:
                        r["description"] = args.description
                    if args.deps is not None:
                        r["deps"] = [d.strip() for d in args.deps.split(",")
                                     if d.strip() and d.strip() != "-"]
                    if args.batch is not None:
                        r["batch"] = args.batch
                    if args.inputs_ready is not None:
                        r["inputs_ready"] = args.inputs_ready == "yes"
                    return rows
            raise RecordError(f"no task {args.id} in {path}")
    elif cmd == "verdict":
        def change(rows, snap):
            for r in rows:
                if r["id"] == args.id:
                    r["verdict"] = args.verdict
                    return rows
            row = snap.get(args.id)
            if isinstance(row, dict):  # removed by hand: its row comes back with the verdict
                return rows + [dict(row, id=args.id, verdict=args.verdict)]
            raise RecordError(f"no task {args.id} in {path}")
    elif cmd == "restore":
        def change(rows, snap):
            rec = {"tasks": [{"id": r["id"]} for r in rows]}
            back = removed_tasks(rec, snap)
            for r in back:
                print(f"restored {r['id']}")
            return rows + [{"id": r["id"], "description": r.get("description", ""),
                            "deps": r.get("deps") or [], "inputs_ready": r.get("inputs_ready"),
                            "batch": r.get("batch") or 1, "verdict": None} for r in back]
    else:  # pragma: no cover - argparse keeps this unreachable
        raise RecordError(f"unknown command {cmd}")
    rec, problems = _edit(path, change)
    if problems:
        _print_problems(problems)
        return 1
    print(_summary(rec))
    return 0


# --- self-test ---

def selftest_suite():
    """Cell: a task removed from a record without a verdict is reported (snapshot compared)."""
    import contextlib
    import shutil
    import tempfile

    from swarmgate.selftest import Cell, Suite

    text = ("# Round st\n\ngoal: g\nexit: e\n\n## Tasks\n\n| " + " | ".join(COLUMNS) + " |\n"
            "|---|---|---|---|---|---|\n| t1 | a | - | yes | 1 | |\n| t2 | b | - | yes | 1 | |\n")

    def removed_is_error() -> bool:
        d = tempfile.mkdtemp(prefix="swarmgate-records-selftest-")
        try:
            path = os.path.join(d, "st.md")
            with open(path, "w") as f:
                f.write(text)
            _, first = _check(path)
            with open(path, "w") as f:
                f.write(text.replace("| t2 | b | - | yes | 1 | |\n", ""))
            _, second = _check(path)
            return not first and any("t2" in p and "removed without a verdict" in p for p in second)
        finally:
            snap = snapshot_path(os.path.join(d, "st.md"))
            for leftover in (snap, snap + ".lock"):
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
            shutil.rmtree(d, ignore_errors=True)

    return Suite("records", [Cell("removed-task-is-an-error", removed_is_error)],
                 {"records-forget-removed": ["removed-task-is-an-error"]})


if __name__ == "__main__":
    sys.exit(main())
