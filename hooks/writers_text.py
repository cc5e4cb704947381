"""The writers' parsers for programs that edit files in place (hooks/shell_writers.py dispatches here):
patch (the paths its patch names), sed -i, perl -i, gawk -i inplace, ex/vim/ed scripts that write,
dd of=, sqlite3 with writing SQL, apply_patch; and the readers of a command's input they share with
``git apply``/``am`` (hooks/writers_git.py): a here-document or ``< FILE`` (``stdin_text``), a
bounded file (``read_file``), the paths a patch writes (``patch_file_paths``).

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writers import in_dir, parse_args
from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


def stdin_text(cmd: SimpleCommand) -> str | None:
    """A here-document/here-string body, or the text of a readable `< FILE` (bounded)."""
    for r in getattr(cmd, "redirects", ()) or ():
        op = getattr(r, "op", "")
        if op in ("<<", "<<-") and isinstance(getattr(r, "heredoc", None), str):
            return r.heredoc
        if op == "<<<":
            return r.target
        if op == "<" and getattr(r, "fd", None) in (None, 0):
            return read_file(cmd, r.target)
    return None


def read_file(cmd: SimpleCommand, path: str, limit: int = 1 << 20) -> str | None:
    from swarmgate import lean_os as os
    base = getattr(cmd, "cwd", None)
    if not path or "$" in path or (not path.startswith("/") and not base):
        return None
    full = path if path.startswith("/") else os.path.join(base, path)
    try:
        from swarmgate.bounded_read import read_text
        return read_text(full, limit)
    except (OSError, ValueError):
        return None


def patch_texts(cmd: SimpleCommand, files: list[str]) -> list[str]:
    texts = [t for t in (read_file(cmd, f) for f in files if f != "-") if t]
    if not files or "-" in files:
        t = stdin_text(cmd)
        if t:
            texts.append(t)
    return texts


def patch_file_paths(text: str, strip: int = 1) -> list[str]:
    """The paths a unified/git diff writes (new and old names, renames, deletions), ``strip``
    leading components removed (``-pN``); /dev/null left out."""
    out: list[str] = []
    for line in text.splitlines():
        path = None
        if line.startswith(("+++ ", "--- ")):
            path = line[4:].split("\t", 1)[0].strip()
            if path.startswith('"') and path.endswith('"'):
                path = path[1:-1]
            if path == "/dev/null":
                continue
            parts = path.split("/")
            path = "/".join(parts[strip:]) if strip < len(parts) else parts[-1]
        elif line.startswith(("rename from ", "rename to ", "copy to ")):
            path = line.split(" ", 2)[2].strip()
        elif line.startswith("diff --git "):
            bits = line[11:].split(" ")
            for b in bits:
                if "/" in b:
                    parts = b.split("/")
                    q = "/".join(parts[strip:]) if strip < len(parts) else parts[-1]
                    if q and q not in out:
                        out.append(q)
            continue
        if path and path not in out:
            out.append(path)
    return out


def patch(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    opts, ops = parse_args(args, {"-p", "--strip", "-i", "--input", "-o", "--output", "-d", "--directory",
                                  "-D", "--ifdef", "-B", "--prefix", "-F", "--fuzz", "-r", "--reject-file",
                                  "-V", "--version-control", "-Y", "--basename-prefix", "-z", "--suffix",
                                  "-g", "--get", "--quoting-style"})
    names = {o for o, _ in opts}
    if names & {"--dry-run", "-C", "--check"}:
        return []
    d = next((v for o, v in opts if o in ("-d", "--directory") and v), "")
    out_file = [v for o, v in opts if o in ("-o", "--output") and v]
    if out_file:
        return [Target(v, f"`patch -o {v}`") for v in out_file]
    if ops:
        return [Target(in_dir(d, ops[0]), f"`patch {ops[0]}`")]
    strip_v = next((v for o, v in opts if o in ("-p", "--strip") and v), None)
    inputs = [v for o, v in opts if o in ("-i", "--input") and v]
    texts = [t for t in (read_file(cmd, f) for f in inputs) if t] if inputs else \
        [t for t in (stdin_text(cmd),) if t]
    out = []
    for text in texts:
        strips = [int(strip_v)] if strip_v and strip_v.isdigit() else [0, 1]
        for s in strips:
            for p in patch_file_paths(text, s):
                t = Target(in_dir(d, p), f"`patch` of a patch that writes {p}")
                if all(x.path != t.path for x in out):
                    out.append(t)
    if not texts:
        return [Target(d or ".", "`patch` with a patch it reads at run time", tree=True)]
    return out


def sed(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    return [Target(p, f"`sed -i` on {p}") for p in sed_inplace_files(args)]


def perl(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    return [Target(p, f"`perl -i` on {p}") for p in perl_inplace_files(args)]


def awk(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """gawk -i inplace PROGRAM FILES (the inplace extension edits FILES)."""
    inplace = any(a == "inplace" and i > 0 and args[i - 1] in ("-i", "--include") for i, a in enumerate(args)) \
        or "-iinplace" in args or "--include=inplace" in args
    if not inplace:
        return []
    opts, ops = parse_args(args, {"-i", "--include", "-f", "--file", "-v", "--assign", "-F",
                                  "--field-separator", "-E", "--exec", "-l", "--load"})
    has_f = any(o in ("-f", "--file", "-E", "--exec") for o, _ in opts)
    files = ops if has_f else ops[1:]
    return [Target(p, f"`awk -i inplace` on {p}") for p in files if "=" not in p]


def dd(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    return [Target(a[3:], f"`dd {a}`") for a in args if a.startswith("of=")]


_EDITOR_WRITES = ("w", "wq", "x", "up", "update", "sav", "saveas", "wall", "wa", "xa", "xall", "wqa", "wn", "exit")


def editor(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
    """ex/vim/vi/nvim/ed run as scripts (``-c CMD``, ``+CMD``, ``-s``/``-es``, ``-S FILE``, a script on
    stdin): the files named are written when a command of the script writes."""
    silent_flag = name in ("ex", "ed") or any(a in ("-e", "-es", "-E", "-Es") for a in args)
    values = {"-c", "--cmd", "-S", "-u", "-U", "-i", "-T", "-w", "-W", "--listen"} | (set() if silent_flag else {"-s"})
    scripts, files = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a in values and name != "ed" and i + 1 < len(args):
            if a in ("-c", "--cmd"):
                scripts.append(args[i + 1])
            elif a in ("-S", "-s"):
                t = read_file(cmd, args[i + 1])
                scripts.append(t if t is not None else "w")   # a script we cannot read may write
            i += 2
            continue
        if a.startswith("+") and len(a) > 1:
            scripts.append(a[1:])
        elif not a.startswith("-"):
            files.append(a)
        i += 1
    feed = stdin_text(cmd)
    if feed:
        scripts.append(feed)
    writes = False
    for s in scripts:
        for piece in s.replace("|", "\n").splitlines():
            w = piece.strip().lstrip(":%").strip().split(" ", 1)[0].rstrip("!")
            w = w.lstrip("0123456789,.$")
            if w in _EDITOR_WRITES or (name == "ed" and w in ("w", "wq", "W")):
                writes = True
    if not writes:
        return []
    return [Target(p, f"`{name}` script writes {p}") for p in files]


def sqlite(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """sqlite3 DB [SQL]: the database file, when the SQL writes (or cannot be read: it comes on stdin)."""
    opts, ops = parse_args(args, {"-cmd", "-separator", "-newline", "-nullvalue", "-init", "-vfs", "-mmap",
                                  "-pagecache", "-lookaside", "-maxsize", "-A"})
    if not ops:
        return []
    db = ops[0]
    if db == ":memory:":
        return []
    sql = " ".join(ops[1:] + [v for o, v in opts if o == "-cmd" and v]).lower()
    feed = stdin_text(cmd)
    if not ops[1:] and feed is not None:
        sql = feed.lower()
    elif not ops[1:]:
        sql = "?"   # SQL typed on stdin at run time
    writing = ("insert", "update", "delete", "drop", "create", "alter", "replace", "vacuum", "attach",
               "pragma", ".restore", ".import", ".read", ".load", ".save", ".backup", "reindex", "?")
    if "-readonly" in {o for o, _ in opts} or not any(w in sql for w in writing):
        return []
    return [Target(db, f"`sqlite3 {db}` writes the database")]


def apply_patch(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    return [Target(p, f"`apply_patch` on {p}") for p in patch_targets(cmd, args)]


# -- in place: sed -i, perl -i, apply_patch (the reader, hooks/bash_walker.py, reads sed's and perl's too) --
def _operands(args: list[str], opts_with_value: tuple[str, ...] = ()) -> list:
    """Non-option arguments (after `--`, everything is an operand)."""
    out = []
    skip = False
    dashdash = False
    for a in args:
        if skip:
            skip = False
            continue
        if dashdash:
            out.append(a)
            continue
        if a == "--":
            dashdash = True
            continue
        if a.startswith("-") and a != "-":
            if a in opts_with_value:
                skip = True
            continue
        out.append(a)
    return out


def sed_inplace_files(args: list[str]) -> list:
    """The files ``sed -i ...`` edits in place (none without -i)."""
    if not any(a == "-i" or (a.startswith("-i") and not a.startswith("--")) or a.startswith("--in-place")
               or (a.startswith("-") and not a.startswith("--") and "i" in a[1:] and "e" not in a[1:])
               for a in args):
        return []
    has_script_opt = any(a in ("-e", "-f", "--expression", "--file") or a.startswith(("--expression=", "--file="))
                         for a in args)
    ops = _operands(args, ("-e", "-f", "--expression", "--file", "-l", "--line-length"))
    return ops if has_script_opt else ops[1:]


def perl_inplace_files(args: list[str]) -> list:
    """The files ``perl -i ...`` edits in place (none without -i). perl's switches cluster
    (``-pi.bak``, ``-pe EXPR``, ``-i -pe EXPR``): ``e``/``E`` take the next word (the
    program), ``i`` takes the rest of its cluster (the backup suffix), ``M``/``I``/``m``
    the rest or the next word; without -e the first operand is the program file."""
    inplace = False
    has_e = False
    ops: list = []
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "--":
            ops.extend(args[i + 1:])
            break
        if not a.startswith("-") or a == "-":
            ops.append(a)
            i += 1
            continue
        if a.startswith("--"):
            i += 1
            continue
        j, take_next = 1, False
        while j < len(a):
            c = a[j]
            if c == "i":
                inplace = True
                break                     # the rest is the backup suffix
            if c in "eE":
                has_e = True
                take_next = j == len(a) - 1
                break                     # -eCODE or -e CODE
            if c in "MmIdDxCl0":
                if c in "MmI" and j == len(a) - 1:
                    take_next = True
                break                     # the rest is this switch's value
            j += 1
        i += 2 if take_next else 1
    if not inplace:
        return []
    return ops if has_e else ops[1:]


def patch_targets(cmd: SimpleCommand, args: list[str]) -> list[str]:
    """The paths an apply_patch command writes: from the patch text it is given in the command."""
    from swarmgate.codex_protocol import patch_paths

    texts = [a for a in args if "*** " in a]
    texts += [r.heredoc for r in getattr(cmd, "redirects", ()) or ()
              if getattr(r, "op", "") in ("<<", "<<-", "<<<") and isinstance(getattr(r, "heredoc", None), str)]
    return [p for text in texts for p in patch_paths(text)]
