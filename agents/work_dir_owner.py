"""`work-dir-owner`: every directory under the work root has an owner (SPEC §6.5).

Each directory directly under the work root (``--root``, else ``[workdirs] root``, else the
repository's default beside the state directory: ``/var/tmp/swarmgate-work/<repo>-<hash>``,
``state_paths.default_work_root``) carries an ownership file ``.swarmgate-owner.json``:

    {"session": "...", "agent": "...", "purpose": "...", "created": "2026-11-29T12:00:00Z",
     "created_epoch": 1795000000.0, "pid": 1234, "start": 5678, "host": "..."}

(pid + start: the process that claimed it, usually the agent's shell).

- ``claim DIR --purpose ...``: create DIR if needed and write its ownership
  file; a directory another session owns is refused, naming the owner;
- ``release DIR``: remove your ownership file (the directory stays);
- ``list``: every directory under the root with its owner (or "unowned");
- ``clean``: delete the directories owned by the caller's session that no
  process has open or as its working directory (``/proc/*/cwd``,
  ``/proc/*/fd``, ``/proc/*/exe``). Everything else is listed for a person
  and never deleted: another session's directories, unowned ones, and yours
  that are still in use.

Pure API (H01 uses it): ``registrations(root, session=None, agent=None)``,
``read_owner(dir)``, ``in_use(paths)``.
"""
from __future__ import annotations

import json
import os
import sys

from swarmgate.front_door import USAGE_EXIT, entry
from swarmgate.statefile import StateError, os_error_line

OWNER_FILE = ".swarmgate-owner.json"


class OwnerError(Exception):
    """A claim/release/clean cannot proceed; the message names the directory and the fix."""


def read_owner(directory) -> dict | None:
    """The ownership record of ``directory``; None when unowned; {"corrupt": ...} when unreadable."""
    path = os.path.join(str(directory), OWNER_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        return {"corrupt": f"cannot read {path}: {e}"}
    with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
        text = f.read(65536)
    try:
        rec = json.loads(text)
    except ValueError:
        return {"corrupt": f"{path} is not JSON"}
    if not isinstance(rec, dict):
        return {"corrupt": f"{path} is not a JSON object"}
    return rec


def work_root(config, repo: str) -> str:
    """The work root of ``repo``: ``[workdirs] root`` (relative to the repository), else the default
    one beside the state directory (``state_paths.default_work_root``)."""
    root = config["workdirs"]["root"]
    if not root:
        from swarmgate.state_paths import default_work_root
        return str(default_work_root(repo))
    return root if os.path.isabs(root) else os.path.join(repo, root)


def _children(root: str) -> list[str]:
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    for n in names:
        p = os.path.join(root, n)
        if os.path.isdir(p) and not os.path.islink(p):
            out.append(p)
    return out


def registrations(root, session: str | None = None, agent: str | None = None) -> list[dict]:
    """Directories under ``root`` with an ownership file, filtered by session and/or agent.

    Each entry is the ownership record plus ``"path"`` (absolute). Directories
    that no longer exist are not listed (a deleted scratch is no registration).
    """
    if not root:
        return []
    out = []
    for d in _children(os.path.abspath(str(root))):
        rec = read_owner(d)
        if rec is None or "corrupt" in rec:
            continue
        if session is not None and rec.get("session") != session:
            continue
        if agent is not None and rec.get("agent") != agent:
            continue
        out.append(dict(rec, path=d))
    return out


def in_use(paths: list[str]) -> dict[str, list[str]]:
    """For each of ``paths``: the processes that have it (or something inside it) as cwd, exe or an open file.

    Returns {path: ["pid 123 (cwd)", ...]} for the paths in use only. Scans /proc directly.
    """
    targets = [os.path.realpath(p) for p in paths]
    found: dict[str, list[str]] = {}

    def hit(real: str, pid: str, kind: str) -> None:
        for orig, t in zip(paths, targets):
            if real == t or real.startswith(t.rstrip("/") + "/"):
                found.setdefault(orig, [])
                label = f"pid {pid} ({kind})"
                if label not in found[orig]:
                    found[orig].append(label)

    me = str(os.getpid())
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me:
            continue
        base = f"/proc/{pid}"
        for kind in ("cwd", "exe", "root"):
            try:
                real = os.readlink(f"{base}/{kind}")
            except OSError:
                continue
            if kind == "root" and real == "/":
                continue
            hit(real.removesuffix(" (deleted)"), pid, kind)
        try:
            fds = os.listdir(f"{base}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                real = os.readlink(f"{base}/fd/{fd}")
            except OSError:
                continue
            if real.startswith("/"):
                hit(real.removesuffix(" (deleted)"), pid, "open file")
    return found


def _resolve(directory: str, root: str) -> str:
    if not os.path.isabs(directory) and root:
        return os.path.normpath(os.path.join(root, directory))
    return os.path.abspath(directory)


def _inside(path: str, root: str) -> bool:
    r = os.path.realpath(root).rstrip("/")
    p = os.path.realpath(path)
    return p.startswith(r + "/") and p != r


def claim(directory: str, root: str, purpose: str, session: str, agent: str = "",
          pid: int | None = None) -> tuple[str, dict]:
    """Create ``directory`` (if needed) and write its ownership file. Returns (path, record)."""
    import socket
    import time

    from swarmgate.procinfo import identity
    from swarmgate.statefile import write_text_atomic

    if not session:
        raise OwnerError("no session: pass --session ID (or set SWARMGATE_SESSION_ID)")
    if not purpose.strip():
        raise OwnerError("--purpose must say what the directory is for")
    path = _resolve(directory, root)
    if root and (not _inside(path, root)
                 or os.path.dirname(os.path.realpath(path)) != os.path.realpath(root)):
        raise OwnerError(f"{path} is not directly under the work root {root}: `work-dir-owner clean` "
                         f"would never see it; claim a directory directly under the root")
    if os.path.islink(path):
        raise OwnerError(f"{path} is a symlink; claim a real directory")
    os.makedirs(path, exist_ok=True)
    current = read_owner(path)
    if current and "corrupt" not in current and current.get("session") != session:
        raise OwnerError(f"{path} is owned by session {current.get('session')} "
                         f"({current.get('purpose', '')!s}); ask that session, or use another directory")
    if pid is None:
        from swarmgate.agents.workspace_lock import default_holder_pid
        pid = default_holder_pid()
    ident = identity(pid)
    rec = {"session": session, "agent": agent or "", "purpose": purpose.strip(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "created_epoch": round(time.time(), 3), "pid": ident["pid"], "start": ident["start"],
           "host": socket.gethostname()}
    if current and "corrupt" not in current:
        rec["created"] = current.get("created", rec["created"])
        rec["created_epoch"] = current.get("created_epoch", rec["created_epoch"])
    write_text_atomic(os.path.join(path, OWNER_FILE), json.dumps(rec, sort_keys=True) + "\n")
    return path, rec


def release(directory: str, root: str, session: str, force: bool = False) -> str:
    path = _resolve(directory, root)
    rec = read_owner(path)
    if rec is None:
        raise OwnerError(f"{path} has no ownership file")
    if not force and "corrupt" not in rec and rec.get("session") != session:
        raise OwnerError(f"{path} is owned by session {rec.get('session')}, not {session or '(none)'}; "
                         f"a person may pass --force")
    os.unlink(os.path.join(path, OWNER_FILE))
    return path


def plan_clean(root: str, session: str) -> dict:
    """What `clean` would do: {"delete": [...], "in_use": {path: [...]}, "others": [(path, why)]}."""
    from swarmgate.break_switch import broken

    ignore_owner = broken("clean-ignores-owner")
    ignore_open = broken("clean-ignores-open")
    mine, others = [], []
    for d in _children(os.path.abspath(root)):
        rec = read_owner(d)
        if rec is None:
            others.append((d, "unowned"))
        elif "corrupt" in rec:
            others.append((d, rec["corrupt"]))
        elif rec.get("session") == session or ignore_owner:
            mine.append(d)
        else:
            others.append((d, f"owned by session {rec.get('session')}"
                              + (f", agent {rec['agent']}" if rec.get("agent") else "")
                              + f", purpose {rec.get('purpose', '')!s}, created {rec.get('created', '?')}"))
    busy = {} if ignore_open else in_use(mine)
    return {"delete": [d for d in mine if d not in busy], "in_use": busy, "others": others}


def clean(root: str, session: str, dry_run: bool = False, out=None) -> dict:
    import shutil

    out = out or sys.stdout
    if not root:
        raise OwnerError("no work root: set `[workdirs] root` in .claude/swarmgate.toml or pass --root")
    if not session:
        raise OwnerError("no session: pass --session ID (or set SWARMGATE_SESSION_ID)")
    plan = plan_clean(root, session)
    deleted, failed = [], []
    for d in plan["delete"]:
        if not _inside(d, root) or os.path.islink(d):
            failed.append((d, "not a real directory inside the root"))
            continue
        if dry_run:
            print(f"would delete {d}", file=out)
            continue
        errors: list[str] = []
        if sys.version_info >= (3, 12):
            shutil.rmtree(d, onexc=lambda fn, p, exc, errors=errors: errors.append(f"{p}: {exc}"))
        else:
            shutil.rmtree(d, onerror=lambda fn, p, exc, errors=errors: errors.append(f"{p}: {exc[1]}"))
        if errors or os.path.exists(d):
            failed.append((d, "; ".join(errors[:3]) or "still exists"))
        else:
            deleted.append(d)
            print(f"deleted {d}", file=out)
    for d, who in plan["in_use"].items():
        print(f"kept {d}: yours but in use by {', '.join(who[:5])}", file=out)
    for d, why in failed:
        print(f"could not delete {d}: {why}", file=out)
    if plan["others"]:
        print("for a person (not deleted):", file=out)
        for d, why in plan["others"]:
            print(f"  {d}: {why}", file=out)
    return dict(plan, deleted=deleted, failed=failed)


def session_from_env() -> str:
    return os.environ.get("SWARMGATE_SESSION_ID") or os.environ.get("CLAUDE_CODE_SESSION_ID") or ""


@entry("work-dir-owner")
def main(argv: list[str] | None = None) -> int:
    from swarmgate.config import find_repo, load_config
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(prog="work-dir-owner",
                                description="Ownership files of the directories under the work root; "
                                            "clean deletes only your own directories that nothing uses.")
    p.add_argument("--repo", help="repository whose config names the work root")
    sub = p.add_subparsers(dest="cmd")
    for name, helptext in (("claim", "write the ownership file of DIR (created if absent)"),
                           ("release", "remove your ownership file from DIR"),
                           ("list", "every directory under the root with its owner"),
                           ("clean", "delete your directories that no process uses; list the rest")):
        s = sub.add_parser(name, help=helptext)
        if name in ("claim", "release"):
            s.add_argument("dir")
        s.add_argument("--root", help="the work root (default: [workdirs] root, else "
                                      "/var/tmp/swarmgate-work/<repository>-<hash>)")
        s.add_argument("--session", default=None,
                       help="your session (default: $SWARMGATE_SESSION_ID or $CLAUDE_CODE_SESSION_ID)")
        if name == "claim":
            s.add_argument("--purpose", required=True)
            s.add_argument("--agent", default="", help="the subagent id this directory belongs to")
            s.add_argument("--pid", type=int, help="process recorded as the claimant (default: the Claude Code "
                                                   "session process $CLAUDE_PID, else the parent shell)")
        if name == "release":
            s.add_argument("--force", action="store_true")
        if name == "list":
            s.add_argument("--json", action="store_true")
        if name == "clean":
            s.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    if not args.cmd:
        p.error("expected one of: claim, release, list, clean")
    try:
        root = args.root
        if not root:
            repo = os.path.abspath(args.repo) if args.repo else find_repo()
            root = work_root(load_config(repo), repo)
        session = args.session if args.session is not None else session_from_env()
        if args.cmd == "claim":
            path, rec = claim(args.dir, root or "", args.purpose, session, args.agent, args.pid)
            print(f"claimed {path} for session {rec['session']}"
                  + (f", agent {rec['agent']}" if rec["agent"] else "") + f": {rec['purpose']}")
            return 0
        if args.cmd == "release":
            print(f"released {release(args.dir, root or '', session, args.force)}")
            return 0
        if not root:
            raise OwnerError("no work root: set `[workdirs] root` in .claude/swarmgate.toml or pass --root")
        if args.cmd == "list":
            rows = []
            for d in _children(os.path.abspath(root)):
                rows.append(dict(read_owner(d) or {"owner": None}, path=d))
            if args.json:
                print(json.dumps(rows, sort_keys=True))
            else:
                for r in rows:
                    if r.get("owner", 1) is None:
                        print(f"{r['path']}: unowned")
                    elif "corrupt" in r:
                        print(f"{r['path']}: {r['corrupt']}")
                    else:
                        print(f"{r['path']}: session {r.get('session')}"
                              + (f", agent {r['agent']}" if r.get("agent") else "")
                              + f", {r.get('purpose', '')}, created {r.get('created', '?')}")
            return 0
        result = clean(root, session, args.dry_run)
        return 1 if result["failed"] else 0
    except OwnerError as e:
        print(f"work-dir-owner: {e}", file=sys.stderr)
        return 1
    except StateError:
        raise   # a state file that cannot be written: 251 and its line at the front door
    except OSError as e:   # a work root that cannot be used (a full or read-only filesystem): set-up, 251
        print(f"work-dir-owner: {os_error_line(e)}", file=sys.stderr)
        return USAGE_EXIT


# --- self-test ---

def selftest_suite():
    """Cells: clean keeps other sessions' directories, and yours while a process uses them."""
    import io
    import shutil
    import subprocess
    import tempfile

    from swarmgate.selftest import Cell, Suite

    def with_root(fn):
        root = tempfile.mkdtemp(prefix="swarmgate-workdirs-")
        try:
            return fn(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    from swarmgate.cell_outcome import broken, protected

    def keeps_others():
        def body(root: str):
            claim("theirs", root, "their build", "other-session")
            claim("mine", root, "my build", "my-session")
            clean(root, "my-session", out=io.StringIO())
            if os.path.exists(os.path.join(root, "mine")):
                return broken("clean did not delete the caller's own idle directory")
            return protected(os.path.isdir(os.path.join(root, "theirs")), "another session's directory was deleted")
        return with_root(body)

    def keeps_in_use():
        def body(root: str):
            path, _ = claim("busy", root, "running build", "my-session")
            proc = subprocess.Popen(["sleep", "30"], cwd=path)
            try:
                clean(root, "my-session", out=io.StringIO())
                return protected(os.path.isdir(path), "a directory in use as a process's cwd was deleted")
            finally:
                proc.kill()
                proc.wait()
        return with_root(body)

    return Suite("work-dir-owner", [Cell("clean-keeps-others", keeps_others),
                                    Cell("clean-keeps-in-use", keeps_in_use)],
                 {"clean-ignores-owner": ["clean-keeps-others"],
                  "clean-ignores-open": ["clean-keeps-in-use"]})


if __name__ == "__main__":
    sys.exit(main())
