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

Pure functions, light imports (used on the hook hot path by D21 and
SubagentStart): ``parse_frontmatter``, ``agents_dir``, ``known_types``,
``load_agent``, ``subagent_context``.
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
    return os.path.join(agents_dir(repo, config), agent_type + ".md")


def known_types(repo: str, config) -> list[str]:
    """Sorted agent types defined in the repository (file names without `.md`)."""
    try:
        names = os.listdir(agents_dir(repo, config))
    except OSError:
        return []
    return sorted(n[:-3] for n in names if n.endswith(".md") and not n.startswith("."))


def load_agent(repo: str, config, agent_type: str) -> dict | None:
    """The definition of ``agent_type`` or None when there is no such file.

    Returns {"type", "path", "name", "description", "tools": [...],
    "rules": [...], "prompt_lines": [...], "builds": bool, "fields": {...},
    "body": str}. Raises DefinitionError when the file exists but cannot be
    parsed. ``agent_type`` containing a path separator is never a type.
    """
    if not agent_type or "/" in agent_type or "\\" in agent_type or agent_type.startswith("."):
        return None
    path = agent_path(repo, config, agent_type)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DefinitionError(f"{path}: cannot read: {e}") from None
    fields, body = parse_frontmatter(text, path)
    return {
        "type": agent_type,
        "path": path,
        "name": str(fields.get("name") or agent_type),
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
    common = os.path.join(claude_dir(repo), "agent-common.md")
    text = _read(common)
    if text is None:
        parts.append("swarmgate: .claude/agent-common.md is missing (run `swarmgate install`).")
    else:
        parts.append(f"## .claude/agent-common.md\n\n{text.strip()}")
    if agent_type:
        try:
            agent = load_agent(repo, config, agent_type)
        except DefinitionError as e:
            agent = None
            parts.append(f"swarmgate: the definition of {agent_type} cannot be read: {e}")
        if agent is not None:
            for rel in agent["rules"]:
                body = _read(rule_path(repo, rel))
                if body is None:
                    parts.append(f"swarmgate: rule {rel} listed by {agent_type} is missing "
                                 f"(.claude/{rel}).")
                else:
                    parts.append(f"## .claude/{rel}\n\n{body.strip()}")
    return "\n\n".join(parts) + "\n"
