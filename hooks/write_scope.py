"""W01 write scope: each agent type writes only what its row of the `[write]` table allows.

Checked on the file tools (Write/Edit/MultiEdit/NotebookEdit: `file_path`,
`notebook_path`) and on shell writes found in the parsed command tree
(Bash and Monitor). The shell writes recognised (``shell_write_targets``):

- redirections `>`, `>>`, `>|`, `&>`, `&>>`, `<>` (`>&2`, `2>&1` are not files);
- `tee [-a] FILES`;
- `cp`, `mv`, `install`, `ln`, `rsync` destinations (last operand, or `-t DIR`);
- `sed -i` / `perl -i` on FILES;
- `dd of=FILE`; `truncate FILES`; `rm FILES`; `touch FILES`;
- `git apply`/`patch` are not followed (they write where the patch says).

Decisions (documented in docs/bash-guards.md):
- `mkdir` is not a write: an empty directory changes no file and git does not
  track it; what is later written into it is checked.
- Paths are resolved against the command's working directory (the payload's
  `cwd`, followed through `cd DIR` earlier in the same command) and then made
  relative to the repository. Writes outside the repository (`/tmp`, `/dev/null`,
  `$HOME`) are not the write table's business: scratch space is free. The
  protected paths (G01) are checked everywhere, inside or outside.
- A target that is a variable (`> "$OUT"`) or starts with `~` cannot be placed
  statically and is left alone by W01 (G01 still looks at it literally).
- The acting agent's row: `main` for the main agent, the subagent's
  `agent_type` otherwise. A type without a row writes nothing inside the
  repository, and the refusal names the exact line to add.

Light at import: no `re`, `fnmatch`, `pathlib` until a check runs.
"""
from __future__ import annotations

from swarmgate import guard as G

REDIRECT_WRITE_OPS = (">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|")
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-")


def _operands(args, opts_with_value=()) -> list:
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


def _dest_of_copy(name: str, args) -> list:
    """Destination of cp/mv/install/ln/rsync: `-t DIR`, `--target-directory=DIR`, else the last operand."""
    args = list(args)
    for i, a in enumerate(args):
        if a in ("-t",) and i + 1 < len(args):
            return [args[i + 1]]
        if a.startswith("--target-directory="):
            return [a.split("=", 1)[1]]
        if a.startswith("-t") and len(a) > 2 and name != "rsync" and not a.startswith("--"):
            return [a[2:]]
    with_value = {"cp": ("-S", "--suffix"), "mv": ("-S", "--suffix"),
                  "install": ("-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"),
                  "ln": ("-S", "--suffix"),
                  "rsync": ("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--files-from",
                            "--exclude-from", "--include-from", "--log-file", "--chmod", "--chown",
                            "--rsync-path", "--password-file", "--port", "--timeout", "-T",
                            "--temp-dir", "--partial-dir", "--backup-dir", "--suffix")}.get(name, ())
    ops = _operands(args, with_value)
    if name == "install" and ("-d" in args or "--directory" in args):
        return []   # install -d creates directories, like mkdir
    if len(ops) < 2 and not (name == "ln" and ops):
        return []
    dest = ops[-1]
    if name == "rsync" and ":" in dest.split("/", 1)[0]:
        return []   # remote destination
    return [dest]


def _sed_files(args) -> list:
    if not any(a == "-i" or (a.startswith("-i") and not a.startswith("--")) or a.startswith("--in-place")
               or (a.startswith("-") and not a.startswith("--") and "i" in a[1:] and "e" not in a[1:])
               for a in args):
        return []
    has_script_opt = any(a in ("-e", "-f", "--expression", "--file") or a.startswith(("--expression=", "--file="))
                         for a in args)
    ops = _operands(args, ("-e", "-f", "--expression", "--file", "-l", "--line-length"))
    return ops if has_script_opt else ops[1:]


def _perl_files(args) -> list:
    if not any(a.startswith("-i") or (a.startswith("-") and "i" in a[1:] and not a.startswith("--"))
               for a in args if a.startswith("-")):
        return []
    ops = _operands(args, ("-e", "-E", "-M", "-I", "-m"))
    has_e = any(a in ("-e", "-E") or (a.startswith("-") and a.endswith("e") and not a.startswith("--"))
                for a in args)
    return ops if has_e else ops[1:]


def command_write_targets(cmd) -> list:
    """[(path, how)] files a simple command writes, as written (not resolved)."""
    out = []
    for r in getattr(cmd, "redirects", ()) or ():
        op = getattr(r, "op", "")
        target = getattr(r, "target", None)
        if op in REDIRECT_WRITE_OPS and isinstance(target, str) and target:
            if op in (">&",) and (target.isdigit() or target == "-"):
                continue
            if target.isdigit() and op in (">&", "&>"):
                continue
            out.append((target, f"redirection `{op} {target}`"))
    words = cmd.words
    if not words:
        return out
    name = cmd.name
    args = list(cmd.args)
    if name == "tee":
        for p in _operands(args):
            out.append((p, f"`tee {p}`"))
    elif name in ("cp", "mv", "install", "ln", "rsync"):
        for p in _dest_of_copy(name, args):
            out.append((p, f"`{name}` destination {p}"))
    elif name == "sed":
        for p in _sed_files(args):
            out.append((p, f"`sed -i` on {p}"))
    elif name == "perl":
        for p in _perl_files(args):
            out.append((p, f"`perl -i` on {p}"))
    elif name == "dd":
        for a in args:
            if a.startswith("of="):
                out.append((a[3:], f"`dd {a}`"))
    elif name == "truncate":
        for p in _operands(args, ("-s", "--size", "-r", "--reference")):
            out.append((p, f"`truncate {p}`"))
    elif name in ("rm", "touch", "shred", "unlink"):
        opts = ("-d", "--date", "-r", "--reference", "-t") if name == "touch" else \
            (("-n", "--iterations", "-s", "--size", "--random-source") if name == "shred" else ())
        for p in _operands(args, opts):
            out.append((p, f"`{name} {p}`"))
    return [(p, how) for p, how in out if p not in _NOT_FILES]


def _is_static(path: str) -> bool:
    return bool(path) and not path.startswith(("$", "~")) and "$(" not in path and "`" not in path


def resolve(path: str, cwd: str, repo: str):
    """(absolute normalised path, path relative to the repo or None when outside)."""
    import posixpath

    base = cwd or repo
    full = posixpath.normpath(path if path.startswith("/") else posixpath.join(base, path))
    r = posixpath.normpath(repo) if repo else ""
    if r and (full == r or full.startswith(r.rstrip("/") + "/")):
        rel = full[len(r.rstrip("/")) + 1:] if full != r else "."
        return full, rel
    return full, None


def glob_allows(globs, rel: str) -> bool:
    from fnmatch import fnmatchcase

    for g in globs:
        g = g.lstrip("/")
        if g.startswith("./"):
            g = g[2:]
        if fnmatchcase(rel, g):
            return True
        if g.startswith("**/") and fnmatchcase(rel, g[3:]):
            return True
        if g.endswith("/**") and rel == g[:-3]:
            return True
    return False


def shell_writes(analysis, cwd: str):
    """Yield (cmd, path, how, cwd_of_cmd) for every write in the analysed command.

    The directory a command runs in is the tree's (``cd DIR`` with a constant
    DIR is followed); when the tree could not tell (``cd "$X"``), it is None and
    relative targets cannot be placed.
    """
    for cmd in analysis.commands:
        here = getattr(cmd, "cwd", cwd) if hasattr(cmd, "cwd") else cwd
        for path, how in command_write_targets(cmd):
            yield cmd, path, how, here


def _row(config, actor: str):
    table = config["write"]
    return table.get(actor)


def _missing_row(actor: str, path: str, tool: str):
    return G.Finding(
        "W01",
        f"{tool} writes {path}, but agent type `{actor}` has no row in the write table, so it may "
        f"write nothing in this repository.",
        f"ask the person to add its row to .claude/swarmgate.toml under [write], e.g. "
        f'`{actor} = ["src/**", "tests/**"]` (the globs this type may write).')


def _outside(actor: str, rel: str, globs, tool: str, how: str = ""):
    what = f" ({how})" if how else ""
    return G.Finding(
        "W01",
        f"{tool} writes {rel}{what}, outside what agent type `{actor}` may write "
        f"({', '.join(globs) or 'nothing'}).",
        f"write only paths matching {', '.join(globs) or '(none)'}; if this file belongs to the task, "
        f"say so in your report and let the main agent (or a type whose row covers {rel}) write it.")


def check_w01(event, config):
    from swarmgate.hooks.bash_guards import broken

    if broken(event, "w01-allow-all-writes"):
        return None
    actor = event.actor
    globs = _row(config, actor)
    repo = event.repo
    cwd = event.cwd or repo
    findings = []
    if event.tool_name in G.FILE_TOOLS:
        items = [(p, "", cwd) for p in event.file_paths]
        tool = event.tool_name
    else:
        from swarmgate.hooks.bash_guards import analysis_of
        analysis = analysis_of(event, config)
        if analysis is None:
            return None
        writes = event.derived("bash.writes", lambda: list(shell_writes(analysis, cwd)))
        items = [(p, how, here) for _cmd, p, how, here in writes if _is_static(p)]
        tool = "this command"
    seen = set()
    for path, how, here in items:
        if here is None and not path.startswith("/"):
            continue   # relative to a directory the command changed to at run time
        full, rel = resolve(path, here or cwd, repo)
        if rel is None or full in seen:
            continue
        seen.add(full)
        if globs is None:
            findings.append(_missing_row(actor, rel, tool))
            break
        if not glob_allows(globs, rel):
            findings.append(_outside(actor, rel, globs, tool, how))
    return findings


_IMPL = 'implementer = ["src/**", "tests/**"]\n'

GUARDS = (
    G.Guard(
        code="W01",
        summary="each agent type writes only the paths its row of the [write] table allows",
        events=("PreToolUse",),
        tools=G.FILE_TOOLS + G.SHELL_TOOLS,
        check=check_w01,
        doc=G.GuardDoc(
            why="Parallel agents that each touch only their own files can be merged without conflicts "
                "and reviewed by what they were asked to do. An implementer that 'fixes' a shared "
                "config or another task's module on the way breaks someone else's work silently.",
            example='an implementer (row `["src/**", "tests/**"]`) runs `echo x > docs/notes.md` or '
                    'Writes `Cargo.toml`',
            instead="Write inside your row's globs; report what else needs changing so the main agent "
                    "dispatches it or does it itself.",
            exceptions="Writes outside the repository (/tmp scratch, /dev/null) are not checked by W01 "
                       "(G01 still guards protected paths there). `mkdir` is not a write. Targets held "
                       "in variables cannot be placed and are not checked.",
        ),
        breaks={"w01-allow-all-writes": "every agent may write every path"},
        cases=(
            G.Case("implementer-write-docs", "PreToolUse",
                   {"tool_name": "Write", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"file_path": "docs/x.md", "content": "x"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("implementer-write-src", "PreToolUse",
                   {"tool_name": "Edit", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"}},
                   fires=False, config="[write]\n" + _IMPL),
            G.Case("implementer-redirect-outside", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "echo hi > README.md"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("implementer-tee-inside", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "cargo build 2>&1 | tee src/build.log"}},
                   fires=False, config="[write]\n" + _IMPL),
            G.Case("unknown-type", "PreToolUse",
                   {"tool_name": "Write", "agent_id": "a2", "agent_type": "researcher",
                    "tool_input": {"file_path": "notes.md", "content": "x"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("main-restricted", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "cp build/out.bin src/data.bin"}},
                   fires=True, breaks=("w01-allow-all-writes",),
                   config='[write]\nmain = ["docs/**"]\n'),
            G.Case("main-default-everything", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "sed -i s/a/b/ src/lib.rs"}},
                   fires=False),
            G.Case("scratch-outside-repo", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "cargo test -p core > /tmp/out.log 2>&1"}},
                   fires=False, config="[write]\n" + _IMPL),
        ),
    ),
)
