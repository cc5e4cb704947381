"""What `swarmgate report` joins (seed 000's "session flow"): the I/O side.

Four records that nobody joined before, read for one session (or one round):
- the decision log (.swarmgate/log/decisions.jsonl): dispatches, starts,
  hand-backs, refusals with their codes, hook latencies;
- the session's transcripts (``<projects>/<cwd as dashes>/<session>.jsonl``,
  its subagents' ``<session>/subagents/agent-<id>.jsonl`` and their
  ``.meta.json`` with the agent type and the dispatching tool_use id): each
  tool call with its time and result, and the ``usage`` of every model turn;
- the runner's runs log (booked vs peak, exit code and class, session);
- the alert records, and the round's scheduling record with its verify results.

``gather()`` returns plain data for flow_model.build(); a file that cannot be
read is named in ``problems`` and left out, never a traceback. A progress bar
(rich, on stderr) shows while a long history is read.
"""
from __future__ import annotations

import glob
import json
import os
import time
from datetime import UTC, datetime

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from swarmgate import decision_log
from swarmgate.agents import record_verify as V
from swarmgate.agents import records as R
from swarmgate.agents.handover import project_dir_name, projects_dir, read_entries
from swarmgate.alerts import all_alerts
from swarmgate.hosts import ledger
from swarmgate.statefile import StateError

PROGRESS_BYTES = 4 << 20  # show the progress bar from this much to read


def session_files(session: str, cwds: list[str], projects: str) -> dict:
    """{"main": path | None, "subagents": [{"id", "path", "meta"}]} of one session's transcripts."""
    bases = [os.path.join(projects, project_dir_name(c)) for c in cwds] + sorted(glob.glob(os.path.join(projects, "*")))
    for base in bases:
        main = os.path.join(base, f"{session}.jsonl")
        if not os.path.isfile(main):
            continue
        subs = []
        for p in sorted(glob.glob(os.path.join(base, session, "subagents", "agent-*.jsonl"))):
            aid = os.path.basename(p)[len("agent-"):-len(".jsonl")]
            meta = {}
            try:
                with open(p[:-len(".jsonl")] + ".meta.json", encoding="utf-8") as f:
                    m = json.load(f)
                meta = m if isinstance(m, dict) else {}
            except (OSError, ValueError):
                pass
            subs.append({"id": aid, "path": p, "meta": meta})
        return {"main": main, "subagents": subs}
    return {"main": None, "subagents": []}


def _size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


class _Progress:
    """A rich progress bar over bytes read, or nothing (short histories, or not a terminal)."""

    def __init__(self, total: int, console=None, force: bool = False) -> None:
        self.bar = None
        if not force and total < PROGRESS_BYTES:
            return

        con = console or Console(stderr=True)
        if not con.is_terminal and not force:
            return
        self.bar = Progress(TextColumn("reading {task.description}"), BarColumn(), DownloadColumn(),
                            TimeRemainingColumn(), console=con, transient=False)
        self.task = self.bar.add_task("the history", total=total)
        self.bar.start()

    def grow(self, nbytes: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=self.bar.tasks[0].total + nbytes)

    def advance(self, what: str, nbytes: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=nbytes, description=what)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


CLIENT_EVENTS = ("SessionStart", "SubagentStart", "SubagentStop", "Stop")  # only a client's session sends these
LOOK_BACK = 50  # sessions, latest first, whose transcripts are looked into for the default pick


def pick_sessions(records: list[dict], session: str | None, record: dict | None,
                  has_calls=None) -> list[str]:
    """Which sessions the report shows: the one asked for (a prefix is enough), the round's
    (its record's ``session:`` line, else every session logged since it was created), else the
    latest session in which agents made tool calls: ``has_calls(session)`` (its transcripts hold
    a tool call), else the latest the log shows a client started (a SessionStart, a subagent, a
    Stop: `swarmgate doctor`'s probe or a self-test sends none of these), else the latest."""
    seen: dict[str, float] = {}
    started: set[str] = set()
    for r in records:
        s = str(r.get("session") or "")
        if s:
            seen[s] = max(seen.get(s, 0.0), parse_time(r.get("time")) or 0.0)
            if r.get("event") in CLIENT_EVENTS:
                started.add(s)
    if session:
        return [s for s in sorted(seen, key=seen.get) if s.startswith(session)] or [session]
    if record is not None:
        if record.get("session"):
            return [record["session"]]
        created = parse_time(record.get("created")) or 0.0
        return [s for s in sorted(seen, key=seen.get) if seen[s] >= created]
    latest_first = sorted(seen, key=seen.get, reverse=True)
    if has_calls is not None:
        for s in latest_first[:LOOK_BACK]:
            if has_calls(s):
                return [s]
    for s in latest_first:
        if s in started:
            return [s]
    return latest_first[:1]


def holds_tool_calls(files: dict) -> bool:
    """Whether a session's transcripts (``session_files``) hold a tool call: a ``tool_use`` block."""
    for path in [files["main"]] + [x["path"] for x in files["subagents"]]:
        if not path:
            continue
        try:
            with open(path, "rb") as f:
                tail = b""
                while chunk := f.read(1 << 20):
                    if b'"tool_use"' in tail + chunk:
                        return True
                    tail = chunk[-16:]  # a mark cut in two by the chunk's end is still found
        except OSError:
            continue
    return False


def parse_time(text) -> float | None:
    """Epoch seconds of an ISO time (``2026-11-30T12:00:00.123Z``); None when it is not one."""
    if isinstance(text, (int, float)):
        return float(text)
    if not isinstance(text, str) or not text:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def gather(repo: str, config, *, session: str | None = None, round_name: str | None = None,
           projects: str | None = None, console=None, force_progress: bool = False) -> dict:
    """Everything the report needs, as plain data (see the module doc)."""
    problems: list[str] = []
    projects = projects or projects_dir()
    record = None
    record_path = None
    if round_name:
        record_path = os.path.join(R.records_dir(repo, config), round_name + ".md") \
            if not round_name.endswith(".md") else os.path.abspath(round_name)
        try:
            record = R.load_record(record_path)
        except R.RecordError as e:
            problems.append(str(e))
            record, record_path = None, None
    log_path = decision_log.log_path(repo)
    total = _size(log_path)
    # the transcripts are known only once the log has named the sessions: start with the log's size
    progress = _Progress(total, console, force_progress)
    try:
        everything = decision_log.read(repo)
    except (OSError, StateError) as e:
        problems.append(f"the decision log cannot be read: {e}")
        everything = []
    progress.advance("the decision log", total)
    sessions = pick_sessions(everything, session, record,
                             has_calls=lambda s: holds_tool_calls(session_files(s, [repo], projects)))
    if record is None and not round_name:
        try:
            record_path = R.current_record(repo, config, sessions[-1] if sessions else None)
            record = R.load_record(record_path) if record_path else None
        except R.RecordError as e:
            problems.append(str(e))
    files = {s: session_files(s, [repo], projects) for s in sessions}
    todo = sum(_size(f["main"]) + sum(_size(x["path"]) for x in f["subagents"]) for f in files.values())
    if progress.bar is None and total + todo >= PROGRESS_BYTES:
        progress = _Progress(todo, console)
    else:
        progress.grow(todo)
    out_sessions = []
    for s in sessions:
        f = files[s]
        entry = {"id": s, "decisions": [r for r in everything if r.get("session") == s], "main": None,
                 "subagents": []}
        if f["main"] is None:
            problems.append(f"no transcript of session {s} under {projects} (lanes come from the decision log "
                            f"alone; pass --transcripts DIR)")
        else:
            try:
                entry["main"] = {"path": f["main"], "entries": read_entries(f["main"])[0]}
            except (OSError, StateError, ValueError) as e:
                problems.append(f"{f['main']}: cannot be read ({e})")
            progress.advance(os.path.basename(f["main"]), _size(f["main"]))
        for sub in f["subagents"]:
            try:
                entries = read_entries(sub["path"])[0]
            except (OSError, StateError, ValueError) as e:
                problems.append(f"{sub['path']}: cannot be read ({e})")
                entries = []
            entry["subagents"].append({"id": sub["id"], "path": sub["path"], "meta": sub["meta"], "entries": entries})
            progress.advance(os.path.basename(sub["path"]), _size(sub["path"]))
        out_sessions.append(entry)
    progress.close()
    runs: list[dict] = []
    try:
        runs = ledger.read_runs()
    except Exception as e:  # noqa: BLE001 - a report shows what it can read
        problems.append(f"the runner's runs log cannot be read: {e}")
    alerts: list[dict] = []
    try:
        alerts = all_alerts()
    except Exception as e:  # noqa: BLE001
        problems.append(f"the alert records cannot be read: {e}")
    verify: dict = {}
    snapshot: dict = {}
    if record_path:
        try:
            verify = V.latest_results(record_path)
            snapshot = R.read_snapshot(record_path)
        except Exception as e:  # noqa: BLE001
            problems.append(f"the verify results of {record_path} cannot be read: {e}")
    return {"repo": repo, "generated": time.time(), "sessions": out_sessions, "all_decisions": everything,
            "record": record, "record_path": record_path, "verify": verify, "snapshot": snapshot,
            "runs": runs, "alerts": alerts, "problems": problems, "round": round_name}
