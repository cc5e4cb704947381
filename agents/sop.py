"""The upstream rules copy (SPEC §6.4): `swarmgate sop check|sync|stamp`.

A repository may carry a copy (never a symlink) of an upstream rules
repository at ``[sop] path`` (default ``.claude/sop``); the copy holds a
``VERSION`` file. The stamp file ``[sop] stamp`` (default
``.claude/sop-version``) records the version this repository last took in.
When the two differ, the rules changed: SessionStart and the gate's first
stage turn red with "rules changed: read them before you run".

- ``sop check``: stamp == VERSION → ok (exit 0); else the red line (exit 1).
- ``sop sync [--from PATH]``: copy upstream (``[sop] upstream`` or --from)
  into the copy, replacing it exactly (files deleted upstream are deleted
  here; ``.git`` is not copied), verify with a recursive comparison (like
  ``diff -rq``; any difference → exit 1, stamp untouched), then write the
  stamp from the copy's VERSION.
- ``sop stamp``: after reading the changed copy, record its VERSION as taken
  in (for a copy someone else updated).

Pure API (light imports; SessionStart and the gate use it):
``stamp_status(repo, config) -> (ok, message)``, ``compare_trees(a, b)``.
"""
from __future__ import annotations

import os
import sys

from swarmgate.front_door import entry

SKIP_NAMES = (".git",)
RED = "rules changed: read them before you run"


def _abs(repo, rel: str) -> str:
    return rel if os.path.isabs(rel) else os.path.join(str(repo), rel)


def _read_first_line(path: str) -> str | None:
    """First non-blank line of a small file, stripped; None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(4096)
    except OSError:
        return None
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else ""


def stamp_status(repo, config) -> tuple[bool, str]:
    """(ok, message) for the copy at ``[sop] path`` and the stamp ``[sop] stamp``.

    ok is True when there is no copy at all (nothing to check) or the stamp
    equals the copy's VERSION. Otherwise the message starts with "rules
    changed: read them before you run" and names the versions and the fix.
    """
    copy = _abs(repo, config["sop"]["path"])
    stamp = _abs(repo, config["sop"]["stamp"])
    rel_copy, rel_stamp = config["sop"]["path"], config["sop"]["stamp"]
    if not os.path.isdir(copy):
        if os.path.lexists(copy):
            return False, f"{RED}: {rel_copy} is not a directory (it must be a copy, not a link or a file)"
        return True, f"no upstream rules copy at {rel_copy} (nothing to check)"
    if os.path.islink(copy):
        return False, f"{RED}: {rel_copy} is a symlink; it must be a copy (`swarmgate sop sync`)"
    version = _read_first_line(os.path.join(copy, "VERSION"))
    if version is None or version == "":
        return False, (f"{RED}: {rel_copy}/VERSION is missing or empty; sync the copy again "
                       f"(`swarmgate sop sync`)")
    stamped = _read_first_line(stamp)
    if stamped is None:
        return False, (f"{RED}: {rel_copy} is at {version} but there is no stamp {rel_stamp}; "
                       f"read {rel_copy}, then `swarmgate sop stamp` (or `swarmgate sop sync`)")
    if stamped != version:
        return False, (f"{RED}: {rel_copy} is at {version}, the stamp {rel_stamp} says {stamped}; "
                       f"read what changed in {rel_copy}, then `swarmgate sop stamp` "
                       f"(or `swarmgate sop sync` to copy upstream again)")
    return True, f"upstream rules copy {rel_copy} at {version}, stamp matches"


def compare_trees(a: str, b: str, skip: tuple = SKIP_NAMES) -> list[str]:
    """Differences between two trees, like `diff -rq a b` (empty list: identical).

    Compares names, kinds (file, directory, symlink), symlink targets and file
    contents byte by byte (filecmp with shallow=False).
    """
    import filecmp

    out: list[str] = []

    def walk(rel: str) -> None:
        da, db = os.path.join(a, rel), os.path.join(b, rel)
        try:
            na = {n for n in os.listdir(da) if n not in skip}
            nb = {n for n in os.listdir(db) if n not in skip}
        except OSError as e:
            out.append(f"cannot list {rel or '.'}: {e}")
            return
        for n in sorted(na - nb):
            out.append(f"Only in {os.path.join(a, rel).rstrip('/')}: {n}")
        for n in sorted(nb - na):
            out.append(f"Only in {os.path.join(b, rel).rstrip('/')}: {n}")
        for n in sorted(na & nb):
            r = os.path.join(rel, n)
            pa, pb = os.path.join(a, r), os.path.join(b, r)
            la, lb = os.path.islink(pa), os.path.islink(pb)
            if la or lb:
                if not (la and lb) or os.readlink(pa) != os.readlink(pb):
                    out.append(f"Links differ: {pa} and {pb}")
                continue
            if os.path.isdir(pa) and os.path.isdir(pb):
                walk(r)
            elif os.path.isfile(pa) and os.path.isfile(pb):
                if not filecmp.cmp(pa, pb, shallow=False):
                    out.append(f"Files {pa} and {pb} differ")
            else:
                out.append(f"File {pa} and {pb} are of different kinds")

    walk("")
    return out


def copy_tree(src: str, dst: str, skip: tuple = SKIP_NAMES) -> None:
    """Replace ``dst`` by a copy of ``src`` (deleted files vanish; links stay links).

    Builds the copy beside ``dst`` and swaps it in, so a failed copy leaves
    the old one intact.
    """
    import shutil
    import tempfile

    parent = os.path.dirname(os.path.abspath(dst))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".sop-sync-", dir=parent)
    staged = os.path.join(tmp, "copy")
    try:
        shutil.copytree(src, staged, symlinks=True, ignore=shutil.ignore_patterns(*skip))
        if _skip_delete():
            # break switch: merge over the old copy instead of replacing it
            shutil.copytree(staged, dst, symlinks=True, dirs_exist_ok=True)
            return
        old = os.path.join(tmp, "old")
        if os.path.lexists(dst):
            if os.path.islink(dst) or not os.path.isdir(dst):
                os.replace(dst, old)
            else:
                os.rename(dst, old)
        os.rename(staged, dst)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _skip_delete() -> bool:
    from swarmgate.break_switch import broken
    return broken("sop-sync-keeps-deleted")


def sync(repo, config, source: str | None = None, out=None) -> tuple[bool, str]:
    """Copy upstream into the copy, verify, stamp. Returns (ok, message)."""
    from swarmgate.statefile import write_text_atomic

    src = source or config["sop"]["upstream"]
    if not src:
        return False, ("no upstream to copy from: set `[sop] upstream = \"/path/to/rules\"` in "
                       ".claude/swarmgate.toml or pass `--from PATH`")
    src = os.path.abspath(os.path.expanduser(_abs(repo, src)))
    if not os.path.isdir(src):
        return False, f"upstream {src} is not a directory"
    version = _read_first_line(os.path.join(src, "VERSION"))
    if not version:
        return False, f"upstream {src} has no VERSION file (a released rules tree carries one)"
    dst = _abs(repo, config["sop"]["path"])
    copy_tree(src, dst)
    diffs = compare_trees(src, dst)
    if diffs:
        shown = "\n".join("  " + d for d in diffs[:20])
        more = f"\n  ... {len(diffs) - 20} more" if len(diffs) > 20 else ""
        return False, (f"the copy at {config['sop']['path']} differs from {src} after the copy "
                       f"(stamp not written):\n{shown}{more}")
    copied = _read_first_line(os.path.join(dst, "VERSION"))
    write_text_atomic(_abs(repo, config["sop"]["stamp"]), f"{copied}\n")
    return True, (f"synced {src} -> {config['sop']['path']} at {copied}; verified identical; "
                  f"stamp {config['sop']['stamp']} written")


def stamp(repo, config) -> tuple[bool, str]:
    from swarmgate.statefile import write_text_atomic

    copy = _abs(repo, config["sop"]["path"])
    version = _read_first_line(os.path.join(copy, "VERSION"))
    if not version:
        return False, f"{config['sop']['path']}/VERSION is missing or empty: nothing to stamp"
    write_text_atomic(_abs(repo, config["sop"]["stamp"]), f"{version}\n")
    return True, f"stamp {config['sop']['stamp']} = {version}"


def _red(text: str) -> str:
    return f"\033[31m{text}\033[0m" if sys.stderr.isatty() else text


@entry("sop")
def main(argv: list[str] | None = None) -> int:
    from swarmgate.config import find_repo, load_config
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(prog="swarmgate sop",
                                description="The upstream rules copy: compare its VERSION with the stamp, "
                                            "or copy upstream again, verify, and stamp.")
    p.add_argument("--repo", help="repository (default: the one around the current directory)")
    sub = p.add_subparsers(dest="cmd")
    sub.add_parser("check", help="stamp == VERSION? (exit 1 and a red line if not)")
    s = sub.add_parser("sync", help="copy upstream, verify with a recursive diff, write the stamp")
    s.add_argument("--from", dest="source", help="upstream directory (default: [sop] upstream)")
    sub.add_parser("stamp", help="record the copy's VERSION as read")
    args = p.parse_args(argv)
    if not args.cmd:
        p.error("expected one of: check, sync, stamp")
    repo = os.path.abspath(args.repo) if args.repo else find_repo()
    try:
        config = load_config(repo)
        if args.cmd == "check":
            ok, msg = stamp_status(repo, config)
        elif args.cmd == "sync":
            ok, msg = sync(repo, config, args.source)
        else:
            ok, msg = stamp(repo, config)
    except OSError as e:  # a config that cannot be used: 251 at the front door
        print(f"swarmgate sop: {e}", file=sys.stderr)
        return 1
    if ok:
        print(msg)
        return 0
    print(_red(msg), file=sys.stderr)
    return 1


# --- self-test ---

def selftest_suite():
    """Cells: sync removes files deleted upstream; sync refuses to stamp a differing copy."""
    import shutil
    import tempfile

    from swarmgate.config import defaults
    from swarmgate.selftest import Cell, Suite

    def tree(files: dict) -> str:
        d = tempfile.mkdtemp(prefix="swarmgate-sop-")
        for rel, text in files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        return d

    from swarmgate.cell_outcome import broken, protected

    def deleted_file_removed():
        repo = tree({".claude/sop/VERSION": "1\n", ".claude/sop/old.md": "old\n"})
        up = tree({"VERSION": "2\n", "new.md": "new\n"})
        try:
            ok, msg = sync(repo, defaults(), up)
            if not os.path.exists(os.path.join(repo, ".claude/sop/new.md")):
                return broken(f"sync did not copy upstream ({msg})")
            kept = os.path.exists(os.path.join(repo, ".claude/sop/old.md"))
            if not kept and not ok:
                return broken(f"sync removed the file but failed: {msg}")
            return protected(not kept, "a file deleted upstream stayed in the copy")
        finally:
            shutil.rmtree(repo, ignore_errors=True)
            shutil.rmtree(up, ignore_errors=True)

    def stale_copy_is_red():
        repo = tree({".claude/sop/VERSION": "2\n", ".claude/sop-version": "1\n"})
        try:
            ok, msg = stamp_status(repo, defaults())
            if not ok and not msg.startswith(RED):
                return broken(f"not ok, but no red line: {msg!r}")
            return protected(not ok, "a copy whose stamp differs from its VERSION passed")
        finally:
            shutil.rmtree(repo, ignore_errors=True)

    return Suite("sop", [Cell("sync-removes-deleted-files", deleted_file_removed),
                         Cell("stale-stamp-is-red", stale_copy_is_red)],
                 {"sop-sync-keeps-deleted": ["sync-removes-deleted-files"]})


if __name__ == "__main__":
    sys.exit(main())
