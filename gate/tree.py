"""The tree under test: HEAD + the effective index, exported read-only.

The gate checks exactly what the next commit would hold. That is the content
of the index git is using right now: ``.git/index`` normally, or the
temporary index git hands a hook in ``GIT_INDEX_FILE`` under ``git commit -a``
and ``git commit --only PATH`` (HEAD + the named worktree files). Unstaged
changes and untracked files are never seen.

Only read-only plumbing touches the repository: ``git ls-files -s -z`` lists
the index entries and ``git cat-file --batch`` streams their blobs; nothing
here writes the live index, the worktree, the stash, refs or the list of
registered worktrees (no ``write-tree``, ``checkout``, ``stash``,
``worktree add``). The blobs are written into a fresh directory under
``state_paths.gate_trees_dir()`` named after the owner (pid + start time),
so a later run can tell a tree left behind by a killed gate (owner dead)
and remove it, after stopping any stage process still running in it.
"""
from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import threading
from collections import namedtuple
from pathlib import Path

from swarmgate import procinfo, state_paths, statefile

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Iterator

GITLINK = "160000"
SYMLINK = "120000"
EXECUTABLE = "100755"
REGULAR = "100644"
OWNER_FILE = "owner.json"
GITLINK_NOTE = ".swarmgate-gitlink"


class TreeError(Exception):
    """The tree under test could not be built; the message carries the fix."""


# one index entry: mode ("100644", "160000", ...), blob id, path (a plain namedtuple: typing's
# NamedTuple costs an all-cached gate run the import of typing, ~8% of its instructions)
Entry = namedtuple("Entry", ("mode", "oid", "path"))


class Index:
    """The effective index: entries by path, plus where it came from."""

    def __init__(self, repo: Path, index_file: str | None, head: str | None,
                 entries: list[Entry] | None = None) -> None:
        self.repo = repo
        self.index_file = index_file      # GIT_INDEX_FILE in effect (absolute), None = default
        self.head = head                  # HEAD commit, None in a repository with no commit yet
        self.entries = entries if entries is not None else []

    def by_path(self) -> dict[str, Entry]:
        return {e.path: e for e in self.entries}


def git_env(index_file: str | None) -> dict[str, str]:
    """The environment for our own git calls: inherited, GIT_INDEX_FILE made absolute."""
    env = dict(os.environ)
    env.pop("GIT_INDEX_FILE", None)
    if index_file:
        env["GIT_INDEX_FILE"] = index_file
    env["GIT_OPTIONAL_LOCKS"] = "0"   # reads never take index.lock to refresh stat data
    return env


def stage_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a stage runs with: every GIT_* variable stripped.

    A stage inheriting GIT_INDEX_FILE or GIT_DIR from a hook would read or
    write the user's live index instead of its own tree.
    """
    src = os.environ if base is None else base
    return {k: v for k, v in src.items() if not k.startswith("GIT_")}


def effective_index_file(cwd: str | None = None, env: dict[str, str] | None = None) -> str | None:
    """GIT_INDEX_FILE as git would use it (made absolute), or None for the default."""
    raw = (os.environ if env is None else env).get("GIT_INDEX_FILE")
    if not raw:
        return None
    return os.path.abspath(os.path.join(cwd or os.getcwd(), raw))


def _git(repo: Path | str, args: list[str], env: dict[str, str], *, check: bool = True,
         what: str = "") -> subprocess.CompletedProcess:
    try:
        cp = subprocess.run(["git", *args], cwd=str(repo), env=env, capture_output=True)
    except FileNotFoundError:
        raise TreeError("git is not installed or not on PATH") from None
    if check and cp.returncode != 0:
        err = cp.stderr.decode(errors="replace").strip().splitlines()
        detail = err[-1] if err else f"exit {cp.returncode}"
        raise TreeError(f"{what or 'git ' + args[0]} failed in {repo}: {detail}")
    return cp


def toplevel(start: str | Path) -> Path:
    return locate(start)[0]


def locate(start: str | Path) -> tuple[Path, str | None]:
    """(top level of the worktree, HEAD commit or None when there is no commit yet): one git call."""
    env = dict(os.environ)
    cp = _git(start, ["rev-parse", "--show-toplevel", "--verify", "-q", "HEAD^{commit}"], env, check=False)
    lines = cp.stdout.decode().split()
    if cp.returncode == 0 and len(lines) == 2:
        return Path(lines[0]), lines[1]
    cp = _git(start, ["rev-parse", "--show-toplevel"], env, check=False)
    if cp.returncode != 0:
        raise TreeError(f"{start} is not inside a git repository (run gate-staged in one, or pass --repo PATH)")
    return Path(cp.stdout.decode().strip()), None


_UNKNOWN = object()


def read_index(repo: Path | str, index_file: str | None = None, head: object = _UNKNOWN) -> Index:
    """The entries of the effective index (read-only: `git ls-files -s -z`)."""
    repo = Path(repo)
    env = git_env(index_file)
    if head is _UNKNOWN:
        head_cp = _git(repo, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], env, check=False)
        head = head_cp.stdout.decode().strip() if head_cp.returncode == 0 else None
    cp = _git(repo, ["ls-files", "-s", "-z"], env, what="reading the index (git ls-files -s)")
    entries: list[Entry] = []
    unmerged: list[str] = []
    for rec in cp.stdout.split(b"\0"):
        if not rec:
            continue
        meta, _, raw_path = rec.partition(b"\t")
        mode, oid, stage_no = meta.decode().split(" ")
        path = raw_path.decode("utf-8", errors="surrogateescape")
        if stage_no != "0":
            if path not in unmerged:
                unmerged.append(path)
            continue
        entries.append(Entry(mode, oid, path))
    empties = [e.path for e in entries if e.oid in EMPTY_BLOBS]
    if empties:  # `git add -N` entries look like empty files; they are not part of the commit
        ita = _intent_to_add(repo, env, empties)
        if ita:
            entries = [e for e in entries if e.path not in ita]
    if unmerged:
        shown = ", ".join(unmerged[:5]) + (" ..." if len(unmerged) > 5 else "")
        raise TreeError(f"the index has unresolved merge conflicts in {shown}: resolve them and "
                        f"`git add` the result before running the gate")
    return Index(repo, index_file, head, entries)


EMPTY_BLOBS = ("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
               "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813")
CE_INTENT_TO_ADD = 1 << 29


def _intent_to_add(repo: Path, env: dict[str, str], paths: list[str]) -> set[str]:
    """The paths among ``paths`` whose index entry is intent-to-add (flag in `ls-files --debug`)."""
    cp = _git(repo, ["--literal-pathspecs", "ls-files", "-s", "--debug", "-z", "--", *paths], env,
              what="reading the index (git ls-files --debug)")
    data = cp.stdout
    out: set[str] = set()
    i = 0
    try:
        while i < len(data):
            j = data.index(b"\0", i)
            path = data[i:j].partition(b"\t")[2].decode("utf-8", errors="surrogateescape")
            k = j + 1
            for _ in range(5):  # ctime, mtime, dev/ino, uid/gid, size/flags
                k = data.index(b"\n", k) + 1
            flags = data[j + 1:k].rsplit(b"flags:", 1)[1].strip()
            if int(flags, 16) & CE_INTENT_TO_ADD:
                out.add(path)
            i = k
    except (ValueError, IndexError):
        return out  # an unexpected format: treat them as the empty files they look like
    return out


def read_blobs(repo: Path | str, oids: list[str], index_file: str | None = None) -> Iterator[tuple[str, bytes]]:
    """(oid, content) for each oid, in order, through one `git cat-file --batch`."""
    if not oids:
        return
    env = git_env(index_file)
    try:
        proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=str(repo), env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise TreeError("git is not installed or not on PATH") from None

    def feed() -> None:
        try:
            for oid in oids:
                proc.stdin.write(oid.encode() + b"\n")
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out = proc.stdout
    try:
        for oid in oids:
            header = out.readline()
            if not header:
                err = proc.stderr.read().decode(errors="replace").strip()
                raise TreeError(f"git cat-file stopped before object {oid}: {err or 'no output'}")
            parts = header.decode(errors="replace").split()
            if len(parts) == 2 and parts[1] == "missing":
                raise TreeError(f"object {oid} is missing or unreadable in {repo}/.git/objects "
                                f"(run `git fsck` to see what is damaged; nothing was changed)")
            if len(parts) != 3:
                raise TreeError(f"git cat-file answered {header!r} for {oid}")
            size = int(parts[2])
            data = out.read(size)
            out.read(1)  # the newline after the content
            if len(data) != size:
                raise TreeError(f"object {oid} was cut short while reading it")
            yield oid, data
    finally:
        with contextlib.suppress(OSError):
            out.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        writer.join(timeout=5)
        with contextlib.suppress(OSError):
            proc.stderr.close()


# --- owned temporary trees ---

def _owner_name() -> str:
    me = procinfo.identity()
    return f"{me['pid']}-{me['start']}-{os.urandom(4).hex()}"


def _parse_owner(name: str) -> tuple[int, int | None] | None:
    parts = name.split("-")
    if len(parts) != 3:
        return None
    try:
        return int(parts[0]), (int(parts[1]) if parts[1] != "None" else None)
    except ValueError:
        return None


def _force_rmtree(path: Path) -> None:
    import shutil  # noqa: PLC0415 - only a gate that exported a tree removes one (shutil brings bz2, lzma)

    def onerror(func, p, exc):  # a read-only directory written by a stage: make it writable, retry
        try:
            parent = os.path.dirname(p)
            os.chmod(parent, 0o700)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=onerror)


def _pids_inside(root: Path) -> list[int]:
    """Processes whose cwd lies inside ``root`` (stage processes left by a killed gate)."""
    found = []
    prefix = str(root) + os.sep
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        if cwd == str(root) or cwd.startswith(prefix):
            found.append(int(name))
    return found


def _stop_leftovers(owner_dir: Path) -> None:
    rec = statefile.read_json(owner_dir / OWNER_FILE, {})
    stage = rec.get("stage") if isinstance(rec, dict) else None
    if isinstance(stage, dict) and procinfo.holder_alive(stage):
        with contextlib.suppress(OSError):
            os.killpg(int(stage["pid"]), signal.SIGKILL)
    for pid in _pids_inside(owner_dir):
        if pid != os.getpid():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def clear_stale(trees_root: Path | None = None) -> list[Path]:
    """Remove trees whose owner is dead (a gate killed mid-run); return what was removed."""
    root = Path(trees_root or state_paths.gate_trees_dir())
    removed: list[Path] = []
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return removed
    for name in names:
        owner = _parse_owner(name)
        path = root / name
        if owner is None or not os.path.isdir(path) or os.path.islink(path):
            continue
        pid, start = owner
        if procinfo.is_alive(pid, start):
            continue
        _stop_leftovers(path)
        _force_rmtree(path)
        removed.append(path)
    return removed


class Tree:
    """A temporary directory holding the tree under test; a context manager.

    ``root`` is the checked-out tree; its parent (named after the owner)
    also holds ``owner.json`` with the running stage's process group.
    """

    def __init__(self, index: Index, trees_root: Path | None = None, links: list[str] | None = None,
                 *, keep: bool = False) -> None:
        self.index = index
        self.trees_root = Path(trees_root or state_paths.gate_trees_dir())
        self.links = list(links or [])
        self.keep = keep
        self.owner_dir: Path | None = None
        self.root: Path | None = None
        self.notes: list[str] = []

    def __enter__(self) -> Tree:
        statefile.ensure_dir(self.trees_root, 0o700)
        self.owner_dir = self.trees_root / _owner_name()
        os.mkdir(self.owner_dir, 0o700)
        try:
            self.set_stage(None)
            self.root = self.owner_dir / "tree"
            os.mkdir(self.root, 0o755)
            self._export()
            self._link()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if not self.keep:
            self.remove()

    def remove(self) -> None:
        if self.owner_dir is not None and os.path.isdir(self.owner_dir):
            _force_rmtree(self.owner_dir)

    def set_stage(self, proc_identity: dict | None) -> None:
        """Record the running stage's process group so a later run can stop it if we die."""
        me = procinfo.identity()
        statefile.write_json_atomic(self.owner_dir / OWNER_FILE,
                                    {"pid": me["pid"], "start": me["start"], "stage": proc_identity,
                                     "repo": str(self.index.repo)})

    def _safe_target(self, rel: str) -> Path:
        parts = rel.split("/")
        if not rel or rel.startswith("/") or any(p in ("", ".", "..", ".git") for p in parts):
            raise TreeError(f"refusing to export the index entry {rel!r}: not a plain relative path")
        dest = self.root / rel
        parent = dest.parent
        parent.mkdir(parents=True, exist_ok=True)
        real_parent = os.path.realpath(parent)
        if real_parent != str(self.root) and not real_parent.startswith(str(self.root) + os.sep):
            raise TreeError(f"refusing to export {rel!r}: a parent directory resolves outside the tree")
        return dest

    def _export(self) -> None:
        blobs: list[Entry] = []
        for e in self.index.entries:
            if e.mode == GITLINK:
                dest = self._safe_target(e.path)
                dest.mkdir(exist_ok=True)
                (dest / GITLINK_NOTE).write_text(
                    f"submodule at {e.path}: commit {e.oid}; its content is not part of this tree\n")
                self.notes.append(f"submodule {e.path} exported as an empty directory (commit {e.oid[:12]})")
            else:
                blobs.append(e)
        it = read_blobs(self.index.repo, [e.oid for e in blobs], self.index.index_file)
        with contextlib.closing(it):
            self._write_blobs(blobs, it)

    def _write_blobs(self, blobs: list[Entry], it: Iterator[tuple[str, bytes]]) -> None:
        for e, (_oid, data) in zip(blobs, it):
            dest = self._safe_target(e.path)
            try:
                if e.mode == SYMLINK:
                    os.symlink(os.fsdecode(data), dest)
                    continue
                fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o755 if e.mode == EXECUTABLE else 0o644)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(dest, 0o755 if e.mode == EXECUTABLE else 0o644)
            except OSError as err:   # a full or failing state filesystem: the file and the errno, in one line
                if isinstance(err, statefile.StateError):
                    raise
                raise statefile.StateWriteError(str(dest), err) from None

    def _link(self) -> None:
        repo = self.index.repo
        for rel in self.links:
            src = repo / rel
            if not os.path.lexists(src):
                self.notes.append(f"[gate] link {rel!r}: not present in {repo}, not linked")
                continue
            dest = self._safe_target(rel.rstrip("/"))
            if os.path.lexists(dest):
                self.notes.append(f"[gate] link {rel!r}: the index has this path, kept the staged one")
                continue
            os.symlink(os.path.abspath(src), dest)


def stat_mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)
