"""Agent definitions (`.claude/agents/<type>.md`) and what a subagent is told at start.

An agent definition is a Claude Code subagent file: YAML frontmatter between
``---`` lines, then the agent's system prompt. swarmgate reads a small, strict
subset of YAML (enough for every file it ships and for hand-written ones):

    ---
    name: implementer
    description: Implements one task from a dispatch prompt.
    tools: Read, Grep, Glob, Edit, Write, Bash
    rules: rules/implementing.md, rules/testing.md
    builds: yes
    prompt_lines:
      - "target crate: <crate fill in>"
    ---
    body...

Keys swarmgate uses besides Claude Code's own (``name``, ``description``,
``tools``, ``model``, ...):

- ``rules``: rule files (relative to ``.claude/``) that SubagentStart returns
  to the subagent together with ``.claude/agent-common.md``. A comma-separated
  string or a YAML list.
- ``builds``: ``yes`` when the type builds or copies the repository: its
  dispatch skeleton then carries a ``scratch: <path fill in>`` line (D16).
- ``prompt_lines``: extra mandatory lines of this type's dispatch skeleton
  (quote them in YAML when they contain ``: ``).

Types are resolved as Claude Code resolves them (``resolve``, ``catalog``):
frontmatter ``name:``, case-insensitive, project before user-level
(``~/.claude/agents``), plugin agents as ``<plugin>:<name>``, the built-ins.

Pure functions, light imports (used on the hook hot path by D21 and
SubagentStart): ``parse_frontmatter``, ``agents_dir``, ``resolve``,
``known_types``, ``load_agent``, ``subagent_context``.
"""
from __future__ import annotations

import os


class DefinitionError(Exception):
    """An agent definition cannot be read; the message names the file and line."""


LIST_KEYS = ("tools", "rules", "prompt_lines", "disallowedTools", "skills")


def _unquote(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        inner = v[1:-1]
        if v[0] == '"':
            inner = inner.replace('\\"', '"').replace("\\\\", "\\")
        else:
            inner = inner.replace("''", "'")
        return inner
    return v


def _split_list(value: str) -> list[str]:
    v = value.strip()
    if v.startswith("[") and v.endswith("]"):
        v = v[1:-1]
    return [_unquote(x) for x in v.split(",") if x.strip()]


def parse_frontmatter(text: str, where: str = "<text>") -> tuple[dict, str]:
    """(fields, body) of a Markdown file with YAML frontmatter.

    Supports ``key: value`` (plain or quoted scalars), ``key:`` followed by
    ``  - item`` lines, and comments. List-valued keys (``tools``, ``rules``,
    ``prompt_lines``) are always returned as lists of strings (a
    comma-separated scalar is split). ``builds`` becomes a bool. Raises
    DefinitionError naming ``where`` and the line for anything else.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise DefinitionError(f"{where}: no frontmatter (the file must start with a `---` line)")
    end = None
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            end = i
            break
    if end is None:
        raise DefinitionError(f"{where}: frontmatter is not closed (no second `---` line)")
    fields: dict = {}
    current_list: str | None = None
    for n in range(1, end):
        raw = lines[n]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") or stripped == "-":
            if current_list is None:
                raise DefinitionError(f"{where}:{n + 1}: list item outside a list key: {stripped!r}")
            fields[current_list].append(_unquote(stripped[1:].strip()))
            continue
        if raw[:1] in (" ", "\t"):
            raise DefinitionError(f"{where}:{n + 1}: unexpected indented line {stripped!r}")
        key, sep, value = raw.partition(":")
        key = key.strip()
        if not sep or not key or " " in key:
            raise DefinitionError(f"{where}:{n + 1}: expected `key: value`, found {stripped!r}")
        if key in fields:
            raise DefinitionError(f"{where}:{n + 1}: key {key!r} given twice")
        value = value.strip()
        if not value:
            fields[key] = []
            current_list = key
            continue
        current_list = None
        if key in LIST_KEYS:
            fields[key] = _split_list(value)
        else:
            fields[key] = _unquote(value)
    for key in LIST_KEYS:
        if key in fields and isinstance(fields[key], str):
            fields[key] = _split_list(fields[key])
    if "builds" in fields:
        b = fields["builds"]
        b = b if isinstance(b, str) else ""
        if b.lower() not in ("yes", "no", "true", "false"):
            raise DefinitionError(f"{where}: builds = {b!r}: expected yes or no")
        fields["builds"] = b.lower() in ("yes", "true")
    body = "\n".join(lines[end + 1:])
    return fields, body


def claude_dir(repo: str) -> str:
    return os.path.join(str(repo), ".claude")


def agents_dir(repo: str, config) -> str:
    """Absolute directory of the agent definitions (`[dispatch] agents_dir`)."""
    d = config["dispatch"]["agents_dir"] if config is not None else ".claude/agents"
    return d if os.path.isabs(d) else os.path.join(str(repo), d)


def agent_path(repo: str, config, agent_type: str) -> str:
    """The file of the project agent named ``agent_type`` as Claude Code resolves it (frontmatter
    ``name:``, case-insensitive), else where a file of that name would be."""
    r = resolve(repo, config, agent_type)
    if r is not None and r.path and r.source == "project":
        return r.path
    return os.path.join(agents_dir(repo, config), agent_type + ".md")


# --- resolving a subagent_type as Claude Code 2.1.332 does -------------------------------------
#
# Measured with the pinned binary (tests/e2e/agent_types_e2e_test.py): a type is the frontmatter
# `name:` of a definition (not its file name), matched case-insensitively (`IMPLEMENTER` runs
# `implementer`; hooks then see the canonical name); project definitions (.claude/agents) come
# before user-level ones (~/.claude/agents, or $CLAUDE_CONFIG_DIR/agents); plugin agents are
# `<plugin>:<name>` (the bare name is not found); the built-ins are listed below ("fork" is the
# fork of the calling agent).

BUILTIN_TYPES = ("general-purpose", "Explore", "Plan", "statusline-setup", "claude", "fork")
SOURCES = ("project", "user", "plugin", "builtin")


class ResolvedType:
    """A subagent type as the client will run it: its canonical ``name``, where it is defined
    (``source``: project | user | plugin | builtin), its file (None for a built-in) and, when
    that file cannot be read, ``error``."""
    __slots__ = ("name", "source", "path", "error")

    def __init__(self, name: str, source: str, path: str | None = None, error: str = "") -> None:
        self.name = name
        self.source = source
        self.path = path
        self.error = error

    def __repr__(self) -> str:
        return f"ResolvedType({self.name!r}, {self.source!r})"


def claude_config_dir() -> str:
    """The user's Claude Code directory: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def _md_files(directory: str, recursive: bool = False) -> list[str]:
    out: list[str] = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return out
    for e in entries:
        if e.name.startswith("."):
            continue
        if e.name.endswith(".md") and e.is_file():
            out.append(e.path)
        elif recursive and e.is_dir(follow_symlinks=False):
            out.extend(_md_files(e.path, True))
    return out


def _defined(files: list[str], source: str, prefix: str = "") -> list[ResolvedType]:
    """The types ``files`` define: each file's frontmatter `name:` (its stem when it has none or
    cannot be read: then ``error`` says why, and D21 names it)."""
    out = []
    for path in files:
        stem = os.path.basename(path)[:-3]
        try:
            from swarmgate.bounded_read import read_text
            fields, _ = parse_frontmatter(read_text(path, 1 << 20), path)
            name = str(fields.get("name") or stem).strip() or stem
            out.append(ResolvedType(prefix + name, source, path))
        except (DefinitionError, OSError, UnicodeDecodeError) as e:
            out.append(ResolvedType(prefix + stem, source, path, str(e)))
    return out


def _json(path: str) -> dict:
    from swarmgate import fast_json   # json's results without its import (the Agent hook reads this)
    try:
        from swarmgate.bounded_read import read_text
        data = fast_json.loads(read_text(path, 4 << 20))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _enabled_plugins(repo: str, home: str) -> dict:
    """{"plugin@marketplace": bool} from the user's, the project's and the local settings, later ones
    winning (Claude Code's enabledPlugins)."""
    out: dict = {}
    for path in (os.path.join(home, "settings.json"), os.path.join(repo, ".claude", "settings.json"),
                 os.path.join(repo, ".claude", "settings.local.json")):
        ep = _json(path).get("enabledPlugins")
        if isinstance(ep, dict):
            out.update({str(k): bool(v) for k, v in ep.items()})
    return out


def plugin_agents(repo: str, home: str | None = None) -> list[ResolvedType]:
    """The agents of the enabled installed plugins (``~/.claude/plugins/installed_plugins.json``,
    version 2): each plugin's ``agents/**/*.md`` as ``<plugin>:<name>``."""
    home = home or claude_config_dir()
    installed = _json(os.path.join(home, "plugins", "installed_plugins.json")).get("plugins")
    if not isinstance(installed, dict):
        return []
    enabled = _enabled_plugins(repo, home)
    out: list[ResolvedType] = []
    for key, installs in sorted(installed.items()):
        if not enabled.get(str(key)) or not isinstance(installs, list):
            continue
        plugin = str(key).split("@", 1)[0]
        for inst in installs:
            if not isinstance(inst, dict) or not isinstance(inst.get("installPath"), str):
                continue
            project = inst.get("projectPath")
            if inst.get("scope") in ("project", "local") and project and os.path.abspath(str(project)) != repo:
                continue
            # absolute as Claude Code writes it; a relative one is taken from the plugins directory
            where = os.path.join(home, "plugins", inst["installPath"])
            out.extend(_defined(_md_files(os.path.join(where, "agents"), True), "plugin", plugin + ":"))
            break
    return out


def catalog(repo: str, config, home: str | None = None) -> list[ResolvedType]:
    """Every subagent type the client can run here, in Claude Code's precedence: project, user,
    plugin, built-in (an earlier definition of a name, compared case-insensitively, hides a later)."""
    home = home or claude_config_dir()
    repo = os.path.abspath(str(repo))
    found = (_defined(_md_files(agents_dir(repo, config)), "project")
             + _defined(_md_files(os.path.join(home, "agents")), "user")
             + plugin_agents(repo, home)
             + [ResolvedType(n, "builtin") for n in BUILTIN_TYPES])
    out, seen = [], set()
    for r in found:
        if r.name.lower() not in seen:
            seen.add(r.name.lower())
            out.append(r)
    return out


def find(types: list[ResolvedType], requested: str) -> ResolvedType | None:
    """The type of ``types`` (a catalog) the client runs for ``subagent_type`` = ``requested``:
    compared case-insensitively, as Claude Code does; None when there is none."""
    want = (requested or "").strip().lower()
    if not want:
        return None
    return next((r for r in types if r.name.lower() == want), None)


def resolve(repo: str, config, requested: str, home: str | None = None) -> ResolvedType | None:
    """The type the client runs for ``subagent_type`` = ``requested`` (case-insensitive), or None."""
    return find(catalog(repo, config, home), requested) if (requested or "").strip() else None


def known_types(repo: str, config) -> list[str]:
    """Sorted agent types the repository defines (their frontmatter names)."""
    return sorted(r.name for r in catalog(repo, config) if r.source == "project")


def dispatchable(repo: str, config, requested: str) -> ResolvedType | None:
    """The type ``requested`` names for a person or an agent typing it: what the client resolves, else
    the one plugin type named ``<plugin>:<requested>`` (in a repository that has only swarmgate's
    plugin, `implementer` is `swarmgate:implementer`; the client itself wants the full name)."""
    types = catalog(repo, config)
    found = find(types, requested)
    if found is not None or ":" in (requested or ""):
        return found
    want = (requested or "").strip().lower()
    hits = [r for r in types if r.source == "plugin" and r.name.lower().partition(":")[2] == want]
    return hits[0] if len(hits) == 1 else None


def definition_root(repo: str, r: ResolvedType) -> str:
    """The directory a definition's ``rules:`` (and agent-common.md) are relative to: the plugin's
    folder for a plugin's agent (``<folder>/agents/**/NAME.md``), else the repository's .claude/."""
    if r.source != "plugin" or not r.path:
        return claude_dir(repo)
    root = r.path
    while os.path.basename(root) != "agents" and os.path.dirname(root) != root:
        root = os.path.dirname(root)
    return os.path.dirname(root)


def load_agent(repo: str, config, agent_type: str) -> dict | None:
    """The definition of ``agent_type`` (a project, user-level or plugin type, resolved as Claude
    Code does) or None when there is none (the built-ins carry no swarmgate keys).

    Returns {"type", "path", "root", "name", "description", "tools": [...],
    "rules": [...], "prompt_lines": [...], "builds": bool, "fields": {...},
    "body": str}; ``root`` is the directory its ``rules:`` are relative to (.claude/ of the
    repository, or the plugin's folder for a plugin's agent). Raises DefinitionError when the file
    exists but cannot be parsed. ``agent_type`` containing a path separator is never a type.
    """
    if not agent_type or "/" in agent_type or "\\" in agent_type or agent_type.startswith("."):
        return None
    r = resolve(repo, config, agent_type)
    if r is None or r.source not in ("project", "user", "plugin") or not r.path:
        return None
    path = r.path
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DefinitionError(f"{path}: cannot read: {e}") from None
    fields, body = parse_frontmatter(text, path)
    return {
        "type": r.name,
        "path": path,
        "root": definition_root(repo, r),
        "name": str(fields.get("name") or r.name),
        "description": str(fields.get("description") or ""),
        "tools": list(fields.get("tools") or []),
        "rules": list(fields.get("rules") or []),
        "prompt_lines": list(fields.get("prompt_lines") or []),
        "builds": bool(fields.get("builds", False)),
        "fields": fields,
        "body": body,
    }


def rule_path(repo: str, rel: str) -> str:
    """Where a rule named in an agent's ``rules:`` list lives (relative to .claude/)."""
    return rel if os.path.isabs(rel) else os.path.join(claude_dir(repo), rel)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def subagent_context(repo: str, config, agent_type: str | None) -> str:
    """What SubagentStart returns as additionalContext for ``agent_type``.

    ``.claude/agent-common.md`` followed by every rule the type lists, each
    under a ``## <path>`` heading. A missing piece is named in the text (never
    an exception), so a broken install is visible to the agent and the person.
    """
    parts: list[str] = []
    agent, error = None, ""
    if agent_type:
        try:
            agent = load_agent(repo, config, agent_type)
        except DefinitionError as e:
            error = f"swarmgate: the definition of {agent_type} cannot be read: {e}"
    # a plugin's agent in a repository `swarmgate install` never wired reads the plugin's own texts
    plugin_root = agent["root"] if agent is not None and agent["root"] != claude_dir(repo) else None
    common = os.path.join(claude_dir(repo), "agent-common.md")
    text, shown = _read(common), ".claude/agent-common.md"
    if text is None and plugin_root is not None:
        text, shown = _read(os.path.join(plugin_root, "agent-common.md")), f"{plugin_root}/agent-common.md"
    if text is None:
        parts.append("swarmgate: .claude/agent-common.md is missing (run `swarmgate install`).")
    else:
        parts.append(f"## {shown}\n\n{text.strip()}")
    if error:
        parts.append(error)
    if agent is not None:
        for rel in agent["rules"]:
            path = rel if os.path.isabs(rel) else os.path.join(agent["root"], rel)
            body = _read(path)
            shown = f".claude/{rel}" if plugin_root is None else path
            if body is None:
                parts.append(f"swarmgate: rule {rel} listed by {agent_type} is missing ({shown}).")
            else:
                parts.append(f"## {shown}\n\n{body.strip()}")
    return "\n\n".join(parts) + "\n"
