"""Who wrote what in a repository: the writes of every agent, as swarmgate let them through (L02).

.swarmgate/log/writes.jsonl, one JSON line per write: ``t`` (epoch seconds), ``s`` (the session),
``a`` (the agent: ``main:<session>`` for a session's main agent, ``agent:<id>`` for a subagent),
``p`` (the path: relative to the repository inside it, else absolute), ``tr`` (1 when a whole tree
was written: ``rm -rf build``, ``tar -x -C out``). Written by L02's act when a Write, Edit, MultiEdit
or NotebookEdit call goes ahead, and for every placed shell write of a Bash call that goes ahead
(hooks/shell_writes.py ``placed_of``).
Appends are single O_APPEND writes (statefile.append_jsonl: no symbolic link followed); a torn line
is skipped by readers. Past ``MAX_BYTES`` the log starts afresh and the old one stays as
writes.jsonl.1, read too.

``owners(repo, checkout)``: the last writer of each path under a checkout, and every agent seen
writing there; what L02 asks about the uncommitted changes a git command would drop.
"""
from __future__ import annotations

from swarmgate import lean_os as os

MAX_BYTES = 4 << 20


def ledger_path(repo: str) -> str:
    return os.path.join(str(repo), ".swarmgate", "log", "writes.jsonl")


def agent_key(session_id: str, agent_id: str | None, agent_type: str | None = None) -> str:
    """Who acts: a subagent by its id (its type when the client sends no id), else the session's main agent."""
    if agent_id:
        return f"agent:{agent_id}"
    if agent_type:
        return f"agent-type:{agent_type}:{session_id}"
    return f"main:{session_id}"


def describe(key: str) -> str:
    kind, _, rest = key.partition(":")
    if kind == "main":
        return f"the main agent of session {rest[:8] or '?'}"
    if kind == "agent":
        return f"subagent {rest}"
    return f"a subagent of type {rest.split(':', 1)[0]}"


def stored(repo: str, path: str) -> str:
    """How ``path`` is kept: relative to the repository when inside it, else absolute."""
    top = str(repo).rstrip("/") + "/"
    return path[len(top):] or "." if path.startswith(top) else path


def record(repo: str, session_id: str, key: str, paths: list, now: float | None = None) -> str:
    """Append one line per (path, tree). Never raises; '' or why it could not."""
    from swarmgate.statefile import append_jsonl
    import time

    path = ledger_path(repo)
    t = round(time.time() if now is None else now, 3)
    try:
        try:
            if os.stat(path).st_size > MAX_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        for p, tree in paths:
            rec = {"t": t, "s": session_id, "a": key, "p": p}
            if tree:
                rec["tr"] = 1
            append_jsonl(path, rec)
    except Exception as e:  # noqa: BLE001 - a full or read-only disk: the write itself goes ahead
        return " ".join(str(e).split()) or type(e).__name__
    return ""


def _lines(repo: str):
    from swarmgate.statefile import read_jsonl
    path = ledger_path(repo)
    for p in (path + ".1", path):
        try:
            yield from read_jsonl(p)
        except OSError:
            continue


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


class Owners:
    """The last writer of each path under a checkout (``last``: path -> key), the trees written
    (``trees``: [(path, key)] in order) and every agent seen writing there since ``since`` (``seen``)."""
    __slots__ = ("last", "trees", "seen")

    def __init__(self) -> None:
        self.last: dict = {}
        self.trees: list = []
        self.seen: set = set()

    def owner(self, path: str, since: float = 0.0) -> str | None:
        """Who wrote ``path`` last: its own record, or a tree written over it later; None when nobody
        did, or the last write is older than ``since`` (a record that old says nothing of who works
        there now: the change counts as of unknown origin)."""
        best = self.last.get(path)
        for top, (key, n, t) in self.trees:
            if _under(path, top) and (best is None or n > best[1]):
                best = (key, n, t)
        if best is None or best[2] < since:
            return None
        return best[0]


def owners(repo: str, checkout: str, since: float = 0.0) -> Owners:
    out = Owners()
    for n, rec in enumerate(_lines(repo)):
        if not isinstance(rec, dict):
            continue
        p, a, t = rec.get("p"), rec.get("a"), rec.get("t")
        if not isinstance(p, str) or not isinstance(a, str) or not p:
            continue
        if not p.startswith("/"):
            p = os.path.normpath(os.path.join(str(repo), p))
        if not _under(p, checkout):
            continue
        if isinstance(t, (int, float)) and t >= since:
            out.seen.add(a)
        t = t if isinstance(t, (int, float)) else 0.0
        if rec.get("tr"):
            out.trees.append((p, (a, n, t)))
        out.last[p] = (a, n, t)
    return out
