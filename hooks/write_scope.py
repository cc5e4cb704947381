"""W01 write scope: each agent type writes only what its row of the `[write]` table allows.

Checked on the file tools (Write/Edit/MultiEdit/NotebookEdit: `file_path`,
`notebook_path`) and on shell writes found in the parsed command tree
(Bash and Monitor; which writes are recognised: hooks/shell_writes.py).

Decisions (documented in docs/bash-guards.md):
- Paths are resolved against the command's working directory and then made
  relative to the agent's work root: the git worktree a subagent dispatched with
  `isolation: "worktree"` works in (its `src/a.py` is `src/a.py`, not
  `.claude/worktrees/<w>/src/a.py`), else the repository; a path in the project's
  own checkout stays relative to the project (hooks/agent_worktree.py). Writes
  outside the repository (`/tmp`, `/dev/null`, `$HOME`) are not the write table's
  business: scratch space is free. The
  protected paths (G01) are checked everywhere, inside or outside.
- Targets are placed by hooks/write_paths.py (tilde, $HOME/$PWD/$OLDPWD, cd/pushd/popd, links
  made earlier in the command, symbolic links on disk: the real path is judged too). A target that
  cannot be placed (`> "$OUT"`) is left alone by W01 (G01 refuses it when it names a protected
  file). A directory written as a whole (an extraction, `rm -r`, `git checkout -- DIR`) is allowed
  only where the row allows anything under it.
- The acting agent's row: `main` for the main agent, the subagent's
  `agent_type` otherwise. A type without a row writes nothing inside the
  repository, and the refusal names the exact line to add.

Light at import: no `re`, `fnmatch`, `pathlib` until a check runs.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import guard_gates
from swarmgate.hooks.agent_worktree import CASE_FILES, CASE_WORKTREE
from swarmgate.hooks.shell_event import analysis_of, broken
from swarmgate.hooks.shell_writes import placed_of, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent



def glob_allows(globs: list[str], rel: str) -> bool:
    # fnmatchcase's answers without its `re` for the commonest globs (`*` only): milliseconds per Write
    from swarmgate.hooks.protected_paths import glob_match

    for g in globs:
        g = g.lstrip("/")
        if g.startswith("./"):
            g = g[2:]
        if glob_match(rel, g):
            return True
        if g.startswith("**/") and glob_match(rel, g[3:]):
            return True
        if g.endswith("/**") and rel == g[:-3]:
            return True
    return False



PLUGIN_PREFIX = "swarmgate:"   # swarmgate's plugin's agents, as Claude Code names them (docs/plugin.md)


def _lookup(table: dict, name: str) -> list[str] | None:
    if name in table:
        return table[name]
    low = name.lower()
    return next((v for k, v in table.items() if k.lower() == low), None)


def shipped_path() -> str:
    """The shipped config (rules/swarmgate.toml, what `swarmgate install` copies into a repository)."""
    from swarmgate import rules
    from swarmgate.lean_path import dirname, join
    return join(dirname(rules.__file__), "swarmgate.toml")


def shipped_rows() -> dict:
    """The [write] rows of the shipped config: the rows of the shipped agent types, which a repository
    without a config of its own (the plugin alone) writes by."""
    from swarmgate.config import parse_toml
    rows = parse_toml(shipped_path()).get("write")
    return rows if isinstance(rows, dict) else {}


def _row(config: Config, actor: str) -> list[str] | None:
    """The actor's row; types compare case-insensitively, as Claude Code matches them (an exact key
    wins). swarmgate's plugin's `swarmgate:implementer` writes by the `implementer` row when it has
    none of its own; a repository without a config file writes by the shipped rows."""
    names = [actor]
    if actor.lower().startswith(PLUGIN_PREFIX):
        names.append(actor[len(PLUGIN_PREFIX):])
    tables = [config["write"]]
    if config.path is None:
        tables.append(shipped_rows())
    for table in tables:
        for name in names:
            row = _lookup(table, name)
            if row is not None:
                return row
    return None


def _row_key(actor: str) -> str:
    name = actor[len(PLUGIN_PREFIX):] if actor.lower().startswith(PLUGIN_PREFIX) else actor
    bare = name and all(c.isalnum() or c in "-_" for c in name)
    return name if bare else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _missing_row(actor: str, path: str, tool: str, config: Config) -> Finding:
    row = f'{_row_key(actor)} = ["src/**", "tests/**"]'
    if config.path is None:   # the plugin alone: no config file to add a row to; the shipped one has the rows
        how = (f"this repository has no .claude/swarmgate.toml (it writes by the shipped rows): ask the person "
               f"to copy the shipped config there, `mkdir -p .claude && cp {shipped_path()} .claude/swarmgate.toml`, "
               f"and add under [write] `{row}` (the globs this type may write).")
    else:
        how = (f"ask the person to add its row to .claude/swarmgate.toml under [write], e.g. `{row}` "
               "(the globs this type may write).")
    return G.Finding(
        "W01",
        f"{tool} writes {path}, but agent type `{actor}` has no row in the write table, so it may "
        f"write nothing in this repository.", how)


def _outside(actor: str, rel: str, globs: list[str], tool: str, how: str = "") -> Finding:
    what = f" ({how})" if how else ""
    return G.Finding(
        "W01",
        f"{tool} writes {rel}{what}, outside what agent type `{actor}` may write "
        f"({', '.join(globs) or 'nothing'}).",
        f"write only paths matching {', '.join(globs) or '(none)'}; if this file belongs to the task, "
        f"say so in your report and let the main agent (or a type whose row covers {rel}) write it.")


def check_w01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not guard_gates.writes(event, config):   # the gate the engine asks before loading this module
        return None
    if broken(event, "w01-allow-all-writes"):
        return None
    actor = event.actor
    globs = _row(config, actor)
    repo = event.repo
    cwd = event.cwd or repo
    findings = []
    if event.tool_name in G.FILE_TOOLS:
        items = []
        for p in event.file_paths:
            full, _rel = resolve(p, cwd, repo, event.root)
            items.append((p, "", [full], False))
        tool = event.client_tool or event.tool_name
    else:
        analysis = analysis_of(event, config)
        if analysis is None:
            return None
        # a target that cannot be placed (a variable, a directory changed to at run time) is G01's
        # business only when it names a protected file: W01 leaves it (docs/bash-guards.md)
        items = [(w.path, w.how, w.names, w.tree) for w in placed_of(event, analysis, config) if w.full]
        items += _interpreter_items(event, analysis)
        tool = "this command"
    seen = set()
    for _path, how, names, tree in items:
        for full in names:
            rel = _relative(full, event.root, repo)
            if rel is None and tree and _holds(full, event.root or repo):
                rel = "."   # a tree above the work root (`find / -exec rm {} +`) writes all of it
            if rel is None or (full, tree) in seen:
                continue
            seen.add((full, tree))
            if globs is None:
                findings.append(_missing_row(actor, rel, tool, config))
                return findings
            probe = (rel + "/" if rel != "." else "") + "\x00" if tree else rel
            if not glob_allows(globs, probe):
                shown = f"{rel} (anything under it)" if tree else rel
                findings.append(_outside(actor, shown, globs, tool, how))
                break
    return findings


def _interpreter_items(event: HookEvent, analysis) -> list:
    """(path, how, names, tree) for each path interpreter code writes (``python -c``, ``node -e``, a
    program on stdin): literals that are the target of a write (hooks/interpreter_writes.py), placed
    against the program's directory."""
    programs = [p for p in getattr(analysis, "programs", ()) or () if p.code]
    if not programs:
        return []
    from swarmgate.hooks.interpreter_writes import path_literals, writes_literal
    from swarmgate.hooks.write_paths import absolute, expand_known, is_placeable, real

    out = []
    for prog in programs:
        code = prog.code
        here = prog.cwd or event.cwd or event.repo
        for path, where in path_literals(code):
            if code[where:where + len(path)] != path or not writes_literal(code, where, path):
                continue   # a joined form, or a path the code does not write
            p = expand_known(path, here)
            full = absolute(p, here) if is_placeable(p) else None
            if full:
                out.append((path, f"{prog.interpreter} code writes {path}", [full, real(full)], False))
    return out


def _holds(tree: str, root: str) -> bool:
    """Whether the directory ``tree`` (absolute, normalised) lies above the work root ``root``."""
    return bool(root) and tree.startswith("/") and (tree == "/" or root.startswith(tree.rstrip("/") + "/"))


def _relative(full: str, root: str, repo: str) -> str | None:
    """``full`` relative to the work root or the repository (hooks/agent_worktree.relative), also
    when those are reached through a symbolic link (``full`` may be a real path)."""
    from swarmgate.hooks.agent_worktree import relative
    from swarmgate.hooks.write_paths import real

    rel = relative(full, root, repo)
    if rel is None and full.startswith("/"):
        rr, rp = real(root) if root else root, real(repo) if repo else repo
        if (rr, rp) != (root, repo):
            rel = relative(full, rr, rp)
    return rel


_IMPL = 'implementer = ["src/**", "tests/**"]\n'
_WT_AGENT = {"agent_id": "a1", "agent_type": "implementer", "cwd": CASE_WORKTREE}

GUARDS = (
    G.Guard(
        code="W01",
        summary="each agent type writes only the paths its row of the [write] table allows",
        events=("PreToolUse",),
        tools=G.FILE_TOOLS + G.SHELL_TOOLS,
        check=check_w01,
        needs=("bash",),
        doc=G.GuardDoc(
            why="Parallel agents that each touch only their own files can be merged without conflicts "
                "and reviewed by what they were asked to do. An implementer that 'fixes' a shared "
                "config or another task's module on the way breaks someone else's work silently.",
            example='an implementer (row `["src/**", "tests/**"]`) runs `echo x > docs/notes.md` or '
                    'Writes `Cargo.toml`',
            instead="Write inside your row's globs; report what else needs changing so the main agent "
                    "dispatches it or does it itself.",
            exceptions="Writes outside the repository (/tmp scratch, /dev/null) are not checked by W01 "
                       "(G01 still guards protected paths there), except a tree above the repository "
                       "(`find / -exec rm {} +`: all of it). `mkdir` is not a write. Targets held "
                       "in variables cannot be placed and are not checked. `{}` of `find ROOTS -exec` "
                       "is the files under ROOTS.",
        ),
        breaks={"w01-allow-all-writes": "every agent may write every path"},
        cases=lambda: (
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
            G.Case("worktree-agent-writes-its-src", "PreToolUse",
                   {**_WT_AGENT, "tool_name": "Bash", "tool_input": {"command": "echo x > src/a.py"}},
                   fires=False, files=CASE_FILES, config="[write]\n" + _IMPL),
            G.Case("worktree-agent-writes-its-docs", "PreToolUse",
                   {**_WT_AGENT, "tool_name": "Bash", "tool_input": {"command": "echo x > docs/a.md"}},
                   fires=True, breaks=("w01-allow-all-writes",), files=CASE_FILES, config="[write]\n" + _IMPL),
            G.Case("worktree-agent-writes-another-worktree", "PreToolUse",
                   {**_WT_AGENT, "tool_name": "Write",
                    "tool_input": {"file_path": "../agent-b2/src/a.py", "content": "x"}},
                   fires=True, breaks=("w01-allow-all-writes",), files=CASE_FILES, config="[write]\n" + _IMPL),
            G.Case("implementer-apply-patch-outside", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer", "tool_input": {
                       "command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: docs/x.md\n+x\n"
                                  "*** End Patch\nEOF\n"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("implementer-apply-patch-inside", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer", "tool_input": {
                       "command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/x.py\n+x\n"
                                  "*** End Patch\nEOF\n"}},
                   fires=False, config="[write]\n" + _IMPL),
            G.Case("implementer-extracts-into-docs", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "unzip -o /tmp/site.zip -d docs"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("implementer-git-restores-another-file", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "git restore README.md src/a.py"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("implementer-git-restores-its-file", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "git restore src/a.py && git checkout -- tests/"}},
                   fires=False, config="[write]\n" + _IMPL),
            G.Case("implementer-find-exec-rm-in-src", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer", "tool_input": {
                       "command": "find src -name __pycache__ -type d -exec rm -rf {} +"}},
                   fires=False, config="[write]\n" + _IMPL),
            G.Case("implementer-find-exec-rm-from-root", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "find / -name x -exec rm {} +"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("implementer-find-exec-mv-into-docs", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "find src -name '*.md' -exec mv {} docs \\;"}},
                   fires=True, breaks=("w01-allow-all-writes",), config="[write]\n" + _IMPL),
            G.Case("scratch-outside-repo", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "implementer",
                    "tool_input": {"command": "cargo test -p core > /tmp/out.log 2>&1"}},
                   fires=False, config="[write]\n" + _IMPL),
        ),
    ),
)
