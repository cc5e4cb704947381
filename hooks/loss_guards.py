"""The data-loss guards (issue 25): no agent destroys what lies outside the repository (L01), drops
uncommitted changes that are not its own (L02), or overwrites or deletes a protected branch on a
remote (L03). Every agent, the main agent included.

L01 reads the command's placed writes (hooks/shell_writes.py) and judges each by what it does to
the place (hooks/precious_places.py). L02 asks which uncommitted changes a git command drops
(hooks/git_discards.py), lists them with `git status` and finds who wrote each one in the write
ledger (hooks/write_ledger.py), which its act keeps: every Write, Edit and placed shell write that
goes ahead. L03 reads `git push` (hooks/git_discards.py) against `[git] protected`.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import guard_gates
from swarmgate.hooks.shell_event import analysis_of, broken, main_call, subagent_call

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent

_DELETERS = frozenset(("rm", "unlink", "rmdir", "shred", "srm", "wipe", "mv", "find"))
_PERMS = frozenset(("chmod", "chown", "chgrp", "chattr", "setfacl"))
_TRUNCATORS = frozenset(("truncate", "dd", "tee", "cp", "install", "sponge"))
SHARED_WINDOW_S = 12 * 3600   # an agent that wrote in a checkout this recently still shares it


def _kind(w) -> str:
    """What the write does to its target: delete, perm, truncate, or copy (counted for devices only)."""
    how = w.how or ""
    if how.startswith("redirection"):
        return "append" if ">>" in how else "truncate"
    name = getattr(w.cmd, "name", "")
    if name in _DELETERS:
        return "delete"
    if name in _PERMS:
        return "perm"
    if name == "rsync":
        args = getattr(w.cmd, "args", ()) or ()
        return "delete" if any(a.startswith(("--delete", "--remove-source")) for a in args) else "copy"
    if name in _TRUNCATORS:
        return "truncate"
    return "copy"


def _roots(event: HookEvent) -> tuple:
    from swarmgate import lean_os as os
    out = []
    for r in (event.repo, event.root):
        if r:
            out.append(os.path.normpath(r))
            real = os.path.realpath(r)
            if real != r:
                out.append(real)
    return tuple(out)


def destruction_findings(event: HookEvent, analysis, config: Config) -> list:
    """L01's findings: each write that destroys a place outside the repository (precious_places)."""
    from swarmgate.hooks.shell_writes import placed_of

    if not guard_gates.destructions(event, config):
        return []   # `git status`: the places' tables stay unread
    from swarmgate.hooks import precious_places as pp

    every = placed_of(event, analysis, config)

    home = pp.home_dir()
    roots = _roots(event)
    seen: set = set()
    out = []
    for w in every:
        full = w.full
        if full is None:
            continue
        kind = _kind(w)
        parent = pp.glob_parent(full)
        target, tree = (parent, True) if parent else (full, w.tree)
        if kind in ("copy", "append"):
            why = f"it writes the device {target}: what is on it is lost" if pp.is_block_device(target) else None
        else:
            why = pp.why_destroyed(target, kind, tree, home=home, roots=roots)
        if why and (w.how, why) not in seen:
            seen.add((w.how, why))
            out.append((w.how, why))
    for w in every:
        if w.full is None and w.tree and _kind(w) == "delete":
            var = _bare_variable_root(w.path)
            if var:
                bare = w.path.replace("${" + var + "}", "").replace("$" + var, "")
                out.append((w.how, f"if ${var} is empty or unset it is `{bare}`, the whole file system "
                                   f"(write `${{{var}:?}}` and the shell stops instead)"))
    for prog in getattr(analysis, "programs", ()) or ():
        out.extend(_code_destruction(prog, home, roots))
    for c in analysis.commands:
        if c.words and pp.is_formatter(c.name):
            for a in c.args:
                if a.startswith("/dev/") and pp.is_block_device(a.rstrip("/")):
                    out.append((f"`{c.name} {a}`", f"it formats or wipes the device {a}: what is on it is lost"))
                    break
    return [_l01(out)] if out else []


def _bare_variable_root(path: str) -> str | None:
    """The variable of a delete target that is a variable and then only `/` or `/*` (`$DIR/`,
    `${DIR}/*`): empty or unset, the target is the root (the classic `rm -rf "$STEAMROOT/"*`)."""
    if not path.startswith("$"):
        return None
    body = path[1:]
    if body.startswith("{"):
        end = body.find("}")
        if end < 0:
            return None
        name, rest = body[1:end], body[end + 1:]
    else:
        k = 0
        while k < len(body) and (body[k].isalnum() or body[k] == "_"):
            k += 1
        name, rest = body[:k], body[k:]
    if not name or not (name[0].isalpha() or name[0] == "_") or not all(ch.isalnum() or ch == "_" for ch in name):
        return None   # ${X:?}, ${X:-d}: the shell stops or has a value
    return name if rest in ("/", "/*", "/.*", "/{*,.*}") else None


_CODE_DELETERS = ("rmtree", "remove(", "unlink", "rmdir", "rmSync", "fs.rm", "File.delete", "FileUtils.rm",
                  "rm_rf", "rm_r", "deleteSync", "removedirs")


def _code_destruction(prog, home: str, roots: tuple) -> list:
    """[(how, why)] for the paths interpreter code removes or overwrites (hooks/interpreter_writes.py
    reads which literals it writes): `shutil.rmtree('/')`, `fs.rmSync(os.homedir(), ...)`."""
    code = getattr(prog, "code", None)
    if not code:
        return []
    from swarmgate.hooks import precious_places as pp
    from swarmgate.hooks.interpreter_writes import path_literals, path_names, writes_literal

    kind = "delete" if any(m in code for m in _CODE_DELETERS) else "truncate"
    out = []
    for lit, where in path_literals(code):
        if not writes_literal(code, where, lit):
            continue
        for full in path_names(code, lit, prog.cwd or "/"):
            why = pp.why_destroyed(full, kind, kind == "delete", home=home, roots=roots)
            if why:
                out.append((f"{prog.interpreter} code writing {lit!r}", why))
                break
    return out


def _l01(found: list) -> Finding:
    shown = "; ".join(f"{how} destroys what lies outside the repository: {why}" for how, why in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return G.Finding(
        "L01", f"{shown}{more}. No agent deletes, moves, rewrites the permissions of or overwrites the "
               f"machine's own places.",
        "leave it. If it really must go, tell the person why and let them do it by hand. To clean "
        "up, remove only what you made: inside the repository (the write rows decide there) or your "
        "own directory under /tmp.")


def check_l01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not guard_gates.losses(event, config):   # the gate the engine asks before loading this module
        return None
    if broken(event, "l01-allow-destruction"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    return destruction_findings(event, analysis, config)


# ---------------------------------------------------------------- L02: uncommitted work of others

def _git_commands(analysis) -> list:
    return [c for c in analysis.commands if c.words and c.name == "git"]


def _here(event: HookEvent, c) -> str:
    """The directory command ``c`` runs in (the reader's, else the call's)."""
    return getattr(c, "cwd", None) or event.cwd or event.repo


def _checkout_of(event: HookEvent, c) -> str | None:
    from swarmgate import lean_path as posixpath
    from swarmgate.hooks.agent_worktree import checkout_of
    from swarmgate.hooks.git_args import c_dir

    here = _here(event, c)
    base = c_dir(c.args)
    where = posixpath.normpath(posixpath.join(here, base) if base else here)
    return checkout_of(where)


def dirty_entries(top: str, timeout: float = 10.0) -> list[tuple[str, str]] | None:
    """[(status XY, absolute path)] of the checkout's uncommitted changes and untracked files
    (`git status --porcelain -z`); None when git cannot say."""
    import subprocess

    from swarmgate import lean_os as os
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        p = subprocess.run(["git", "-C", top, "status", "--porcelain=v1", "-z", "--untracked-files=all"],
                           capture_output=True, timeout=timeout, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode != 0:
        return None
    out = []
    parts = p.stdout.decode("utf-8", "surrogateescape").split("\0")
    k = 0
    while k < len(parts):
        e = parts[k]
        k += 1
        if len(e) < 4:
            continue
        xy, path = e[:2], e[3:]
        if xy[0] in "RC":
            k += 1   # the rename's old name follows
        out.append((xy, os.path.join(top, path)))
    return out


def _limit(entries: list, d, here: str) -> list:
    """The entries a Discard drops: tracked or untracked as it says, under its pathspecs."""
    from swarmgate import lean_path as posixpath
    out = [(xy, p) for xy, p in entries if ((xy == "??" and d.untracked) or (xy not in ("??", "!!") and d.tracked))
           and "/.swarmgate/" not in p]   # swarmgate's own log of the repository is no agent's work
    if d.paths is None:
        return out
    tops = []
    for spec in d.paths:
        spec = spec.removeprefix(":/") if spec.startswith(":/") else spec
        if any(ch in spec for ch in "*?["):
            from fnmatch import fnmatchcase
            pat = posixpath.normpath(posixpath.join(here, spec))
            tops.append(("glob", pat, fnmatchcase))
        else:
            tops.append(("path", posixpath.normpath(posixpath.join(here, spec)), None))
    keep = []
    for xy, p in out:
        for kind, top, match in tops:
            if (kind == "path" and (p == top or p.startswith(top.rstrip("/") + "/"))) or \
                    (kind == "glob" and match(p, top)):
                keep.append((xy, p))
                break
    return keep


def _discards(event: HookEvent, config: Config) -> list:
    """The derived fact "discards": for each git command of the call that drops uncommitted changes,
    (command, Discard, checkout top, `git status` entries or None, live other sessions). Git runs
    here, in the derive phase, once per checkout; a call with no such command starts nothing."""
    analysis = analysis_of(event, config)
    if analysis is None:
        return []
    from swarmgate import lean_os as os
    from swarmgate import lean_path as posixpath
    from swarmgate.hooks.git_discards import discard

    out: list = []
    status: dict = {}
    live = None
    for c in _git_commands(analysis):
        d = discard(c.args)
        if d is None:
            continue
        top = _checkout_of(event, c)
        here = _here(event, c)
        if d.what.startswith("git worktree remove") and d.paths:
            # what it drops is the removed worktree's own changes, whatever the checkout it runs in
            wt = posixpath.normpath(posixpath.join(here, d.paths[0]))
            top = wt if os.path.lexists(posixpath.join(wt, ".git")) else None
            d.paths = None
        elif d.switch and not (d.paths and os.path.lexists(posixpath.join(here, d.paths[0]))):
            d.paths = None   # `git checkout X` with no X on disk: a branch switch, every change at stake
        if top is None:
            continue
        if top not in status and not d.stash:
            status[top] = dirty_entries(top)
        if live is None:
            live = _live_others(event)
        out.append((c, d, top, status.get(top), live))
    return out


def others_changes(event: HookEvent, c, d, top: str, entries, live: int) -> tuple[list, str] | None:
    """([(path, whose)] of the changes ``d`` drops that are not the acting agent's, how the checkout
    is shared), or None when git could not list them (the command then goes ahead: git keeps the
    work it cannot read either)."""
    import time

    from swarmgate.hooks import write_ledger as wl

    me = wl.agent_key(event.session_id, event.agent_id, event.agent_type)
    since = time.time() - SHARED_WINDOW_S
    owners = wl.owners(event.repo, top, since=since)
    sharers = {k for k in owners.seen if k != me}
    shared = ""
    if sharers:
        shared = "it is shared: " + ", ".join(sorted(wl.describe(k) for k in sharers)[:3]) + " wrote in it"
    elif live:
        shared = f"it is shared: {live} other live session(s) of this repository"
    if d.stash:
        return ([("the stash", "shared by every worktree of the repository")], shared) if shared else ([], "")
    if entries is None:
        return None
    dropped = _limit(entries, d, _here(event, c))
    out = []
    for _xy, p in dropped:
        who = owners.owner(p, since)   # older records: of unknown origin (another day's session)
        if who is None:
            if shared:
                out.append((p, "of unknown origin"))
        elif who != me:
            out.append((p, wl.describe(who)))
    return out, shared


def _live_others(event: HookEvent) -> int:
    try:
        from swarmgate.hooks.repo_sessions import live_sessions
        return sum(1 for r in live_sessions(event.repo) if r.get("session") != event.session_id)
    except Exception:  # noqa: BLE001 - an unreadable index: count no one
        return 0


def check_l02(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not guard_gates.losses(event, config):
        return None
    if event.tool_name not in G.SHELL_TOOLS or broken(event, "l02-allow-discards"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    from swarmgate import lean_path as posixpath
    from swarmgate.hooks.derivations import get

    for c, d, top, entries, live in get(event, config, "discards"):
        found = others_changes(event, c, d, top, entries, live)
        if not found or not found[0]:
            continue
        changes, shared = found
        shown = ", ".join(f"{posixpath.relpath(p, top) if p.startswith('/') else p} ({who})"
                          for p, who in changes[:4])
        more = f" and {len(changes) - 4} more" if len(changes) > 4 else ""
        return G.Finding(
            "L02", f"`{d.what}` would drop uncommitted work that is not yours: {shown}{more}"
                   f"{'; ' + shared if shared else ''}. Work that is not committed exists nowhere else.",
            "leave those changes alone. Undo only the files you wrote yourself, one by one "
            "(`git checkout -- PATH` or `git restore PATH`), or work in a worktree of your own "
            "(`git worktree add`). If the other changes must go, ask their agent or the person.")
    return None


def act_l02(event: HookEvent, config: Config) -> None:
    """Record the call's writes in the ledger (hooks/write_ledger.py): who wrote what, for L02."""
    if not guard_gates.losses(event, config):
        return None
    if broken(event, "l02-allow-discards"):
        return None
    from swarmgate import lean_os as os

    paths: list = []
    repo = event.repo
    if event.tool_name in G.SHELL_TOOLS:
        analysis = analysis_of(event, config)
        if analysis is None:
            return None
        from swarmgate.hooks.shell_writes import placed_of
        paths = [(w.full, bool(w.tree)) for w in placed_of(event, analysis, config) if w.full]
    else:
        base = event.cwd or repo
        paths = [(os.path.normpath(os.path.join(base, p)), False) for p in event.file_paths]
    roots = _roots(event)
    keep = [(p, t) for p, t in paths if any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)]
    if keep:
        from swarmgate.hooks import write_ledger as wl
        wl.record(repo, event.session_id, wl.agent_key(event.session_id, event.agent_id, event.agent_type),
                  [(wl.stored(repo, p), t) for p, t in keep])
    return None


# ---------------------------------------------------------------- L03: protected branches

def current_branch(top: str) -> str | None:
    """The branch checked out in ``top`` (its HEAD file), None when detached or unreadable."""
    from swarmgate.hooks.git_runs import git_dirs
    dirs = git_dirs(top)
    if dirs is None:
        return None
    try:
        with open(dirs[1] + "/HEAD", encoding="utf-8", errors="replace") as f:
            head = f.read(4096).strip()
    except OSError:
        return None
    return head[len("ref: refs/heads/"):] if head.startswith("ref: refs/heads/") else None


def check_l03(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not guard_gates.losses(event, config):
        return None
    if broken(event, "l03-allow-force-push"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    gits = [c for c in _git_commands(analysis) if "push" in c.args]
    if not gits:
        return None
    from swarmgate.hooks.git_discards import forced_pushes, is_match

    protected = list(config["git"]["protected"])
    for c in gits:
        top = _checkout_of(event, c)
        current = current_branch(top) if top else None
        for branch, how in forced_pushes(c.args, current):
            if branch == "every branch" or is_match(branch, protected):
                return G.Finding(
                    "L03", f"`git push {how}` would overwrite or delete the protected branch {branch} on the "
                           f"remote ([git] protected: {', '.join(protected)}): the commits others built on "
                           f"are lost for everyone.",
                    f"push your work to a branch of its own (`git push origin HEAD:refs/heads/<your-branch>`) "
                    f"and let the person merge it; never force-push {branch}.")
    return None


def _register() -> None:
    from swarmgate.hooks.derivations import register
    register("discards", _discards)


_register()

_GIT = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects/.keep": "", ".git/refs/heads/.keep": ""}


def _ledger(*rows: tuple) -> str:
    return "".join(f'{{"t": 4102444800, "s": "selftest-session", "a": "{a}", "p": "{p}"}}\n' for a, p in rows)


def _cases():
    sub = subagent_call
    own = {**_GIT, "src/a.py": "mine\n", ".swarmgate/log/writes.jsonl": _ledger(("agent:a1", "src/a.py"))}
    theirs = {**_GIT, "src/a.py": "theirs\n", ".swarmgate/log/writes.jsonl": _ledger(("agent:b2", "src/a.py"))}
    return {
        "L01": (
            G.Case("main-rm-rf-root", "PreToolUse", main_call("rm -rf /"), fires=True,
                   breaks=("l01-allow-destruction",)),
            G.Case("subagent-dd-to-disk", "PreToolUse", sub("dd if=/dev/zero of=/dev/sda bs=1M"), fires=True,
                   breaks=("l01-allow-destruction",)),
            G.Case("main-mkfs", "PreToolUse", main_call("sudo mkfs.ext4 /dev/sdb1"), fires=True,
                   breaks=("l01-allow-destruction",)),
            G.Case("main-chmod-r-system", "PreToolUse", main_call("chmod -R 777 /usr"), fires=True,
                   breaks=("l01-allow-destruction",)),
            G.Case("main-clean-build-in-repo", "PreToolUse", main_call("rm -rf target node_modules"), fires=False),
            G.Case("subagent-own-scratch", "PreToolUse", sub("rm -rf /tmp/swarmgate-case-scratch"), fires=False),
            G.Case("main-writes-dev-null", "PreToolUse", main_call("make 2>/dev/null > /dev/null"), fires=False),
        ),
        "L02": (
            G.Case("subagent-cleans-anothers-file", "PreToolUse", sub("git clean -fd"), fires=True,
                   breaks=("l02-allow-discards",), files=theirs),
            G.Case("subagent-stashes-anothers-file", "PreToolUse", sub("git stash -u"), fires=True,
                   breaks=("l02-allow-discards",), files=theirs),
            G.Case("subagent-cleans-its-own-file", "PreToolUse", sub("git clean -fd"), fires=False, files=own),
            G.Case("subagent-status", "PreToolUse", sub("git status"), fires=False, files=theirs),
        ),
        "L03": (
            G.Case("main-force-push-main", "PreToolUse", main_call("git push --force origin main"), fires=True,
                   breaks=("l03-allow-force-push",), files=_GIT),
            G.Case("subagent-deletes-release", "PreToolUse", sub("git push origin :release/1.2"), fires=True,
                   breaks=("l03-allow-force-push",), files=_GIT),
            G.Case("main-bare-force-push-on-main", "PreToolUse", main_call("git push -f"), fires=True,
                   breaks=("l03-allow-force-push",), files=_GIT),
            G.Case("main-force-push-own-branch", "PreToolUse", main_call("git push --force origin feature/x"),
                   fires=False, files=_GIT),
            G.Case("main-push-main", "PreToolUse", main_call("git push origin main"), fires=False, files=_GIT),
        ),
    }


_cases_of = G.case_table(_cases)


GUARDS = (
    G.Guard(
        code="L01",
        summary="no agent destroys what lies outside the repository: /, homes, system directories, "
                "mount points, block devices",
        events=("PreToolUse",),
        tools=G.SHELL_TOOLS,
        check=check_l01,
        needs=("bash",),
        doc=G.GuardDoc(
            why="An agent that cleans up with `rm -rf $DIR/` where DIR is empty, or 'fixes' permissions "
                "with `chmod -R 777 /`, loses the machine and every agent's work on it; nothing of it is "
                "in git. Inside the repository the write rows decide (W01) and git keeps history; "
                "outside it nothing does.",
            example="`rm -rf /`, `sudo rm -rf ~`, `rm -rf /usr/lib/python3`, `chmod -R 777 /`, "
                    "`dd if=/dev/zero of=/dev/sda`, `mkfs.ext4 /dev/sda1`, `find / -delete`, "
                    "`echo > /etc/hosts`, `cd / && rm -rf *`",
            instead="Remove only what you made: inside the repository, or your own directory under /tmp. "
                    "What the machine itself needs changed, the person changes by hand.",
            exceptions="Refused for every agent, the main agent too. Scratch places (/tmp, /var/tmp, "
                       "/dev/shm, /run/user) are free below their roots. Writes to /proc and /sys set the "
                       "kernel and are not judged here. A target held in a variable the hook cannot know "
                       "is not placed (W01's rule), except `$VAR/` and `$VAR/*`, the root when VAR is empty. Under "
                       "your home: the home itself, its top-level folders (not the dot folders of caches), "
                       "its key and settings trees (~/.ssh, ~/.gnupg, ~/.aws, ~/.config ...) and trees "
                       "holding another git checkout are guarded; deeper paths are yours to clean.",
        ),
        breaks={"l01-allow-destruction": "destruction outside the repository goes through"},
        cases=_cases_of("L01"),
    ),
    G.Guard(
        code="L02",
        summary="no agent drops uncommitted changes that are not its own (reset --hard, checkout --, "
                "stash, clean -f, a switch or pull over them)",
        events=("PreToolUse",),
        tools=G.FILE_TOOLS + G.SHELL_TOOLS,
        check=check_l02,
        act=act_l02,
        needs=("bash", "discards"),
        doc=G.GuardDoc(
            why="Agents that share a checkout see each other's edits as 'local changes'. One `git "
                "reset --hard` or `git stash` to get a clean tree destroys hours of another agent's "
                "uncommitted work, which exists nowhere else. swarmgate knows who wrote what: the "
                "Write and Edit calls and the shell writes it let through are kept in a ledger "
                "(.swarmgate/log/writes.jsonl).",
            example="subagent B runs `git checkout -- .` in the checkout where agent A edited src/a.py",
            instead="Undo only your own files (`git checkout -- PATH`), or work in a worktree of your own; "
                    "ask the other agent or the person before their changes go.",
            exceptions="The same command over your own changes passes, and so does one in your own worktree "
                       "where no other agent wrote. Changes nobody recorded, or recorded more than 12 hours "
                       "ago, count as another's only in a checkout shared by live agents (another session of "
                       "the repository, or another agent that wrote there in the last 12 hours). When git "
                       "cannot list the changes, the command goes ahead.",
        ),
        breaks={"l02-allow-discards": "uncommitted work of others may be dropped (and no write is recorded)"},
        cases=_cases_of("L02"),
    ),
    G.Guard(
        code="L03",
        summary="no agent force-pushes to or deletes a protected branch on a remote ([git] protected)",
        events=("PreToolUse",),
        tools=G.SHELL_TOOLS,
        check=check_l03,
        needs=("bash",),
        doc=G.GuardDoc(
            why="A force push to main rewrites the history every other agent and person built on; their "
                "commits vanish from the remote and their next pull goes wrong.",
            example="`git push --force origin main`, `git push origin +main`, `git push origin :release/2.0`, "
                    "`git push -f` with main checked out",
            instead="Push your own branch (`git push origin HEAD:refs/heads/<your-branch>`) and let the person "
                    "merge it.",
            exceptions="Force pushes to branches outside `[git] protected` (default main, master, release/*) "
                       "pass: an agent rewrites its own feature branch freely.",
        ),
        breaks={"l03-allow-force-push": "force pushes and deletions of protected branches go through"},
        cases=_cases_of("L03"),
    ),
)
