"""`dispatch-prompt TYPE`: the dispatch skeleton of an agent type (SPEC §4.1).

The skeleton holds every line the dispatch guards require, with the values
the config registers, and placeholders ``<... fill in>`` for what the main
agent must write. D20 refuses a dispatch while any placeholder is left, so
the skeleton as printed is refused until filled.

Lines, in order:
    task: <task fill in>
    inputs: <inputs fill in>
    exit criterion: <exit criterion fill in>
    report: <report fill in>
    heavy test: do not run            ([dispatch] heavy_line, D01)
    thread cap: 31                    ([threads] heavy_default, D15)
    scratch: <path fill in>           (only when the type `builds: yes`, D16)
    ...the type's own `prompt_lines:` from its frontmatter

Pure API: ``skeleton(repo, config, type)``; the placeholder format it prints (``PLACEHOLDER_PATTERN``,
``find_placeholders(text)``, ``placeholder(what)``) is hooks/dispatch_prompt_parse.py's, which D20 reads with.
"""
from __future__ import annotations

import os
import sys

from swarmgate.front_door import entry, say
from swarmgate.host_defaults import thread_default
from swarmgate.hooks.dispatch_prompt_parse import PLACEHOLDER_PATTERN, find_placeholders, placeholder  # noqa: F401 - the pure API

class UnknownType(Exception):
    """No definition for the type; the message lists the known types."""


def skeleton(repo: str, config, agent_type: str) -> str:
    """The dispatch skeleton for ``agent_type`` (text ending in a newline).

    Raises UnknownType (message lists the known types) when the type has no
    definition or is denied by `[dispatch] denied_types`, and
    agent_definitions.DefinitionError when its file cannot be parsed.
    """
    from swarmgate.agents.agent_definitions import catalog, dispatchable, load_agent

    types = catalog(repo, config)
    known = sorted(r.name for r in types if r.source in ("project", "plugin"))
    denied = {d.lower() for d in config["dispatch"]["denied_types"]}
    clerk = dispatchable(repo, config, "clerk")
    if agent_type.lower() in denied:
        raise UnknownType(f"{agent_type} may not be dispatched ([dispatch] denied_types, D12); "
                          f"one-off work goes to {clerk.name if clerk else 'clerk'}. "
                          f"Known types: {', '.join(known) or '(none)'}")
    found = dispatchable(repo, config, agent_type)
    agent = load_agent(repo, config, found.name) if found is not None else None
    if agent is None:
        where = os.path.relpath(os.path.join(str(repo), config["dispatch"]["agents_dir"]), str(repo))
        raise UnknownType(f"no agent type {agent_type!r} (no definition in {where}/ has that `name:`). "
                          f"Known types: {', '.join(known) or '(none: run `swarmgate install`)'}")
    d = config["dispatch"]
    lines = [
        f"task: {placeholder('task')}",
        f"inputs: {placeholder('inputs')}",
        f"exit criterion: {placeholder('exit criterion')}",
        f"report: {placeholder('report')}",
        d["heavy_line"],
        f"{d['thread_cap_line']}: {thread_default(config)}",
    ]
    if agent["builds"]:
        lines.append(f"{d['scratch_line']}: {placeholder('path')}")
    lines.extend(agent["prompt_lines"])
    return "\n".join(lines) + "\n"


@entry("dispatch-prompt")
def main(argv: list[str] | None = None) -> int:
    from swarmgate.agents.agent_definitions import DefinitionError
    from swarmgate.config import ConfigError, find_repo, load_config
    from swarmgate.tool_parser import ToolParser

    p = ToolParser(
        prog="dispatch-prompt",
        description="Print the dispatch skeleton of an agent type: every mandatory line, and "
                    "placeholders <... fill in> that must be filled before the dispatch is allowed (D20).")
    p.add_argument("type", help="agent type (a file .claude/agents/TYPE.md, or a plugin's: swarmgate:TYPE)")
    p.add_argument("--repo", help="repository (default: the one around the current directory)")
    args = p.parse_args(argv)
    repo = os.path.abspath(args.repo) if args.repo else find_repo()
    try:
        config = load_config(repo)
        text = skeleton(repo, config, args.type)
    except (ConfigError, DefinitionError, UnknownType) as e:
        return say("dispatch-prompt", str(e))  # an unknown type, or a config / definition that cannot be used
    sys.stdout.write(text)
    from swarmgate.agents.agent_definitions import dispatchable
    found = dispatchable(repo, config, args.type)
    if found is not None and found.name.lower() != args.type.strip().lower():   # `implementer`, a plugin's here
        print(f"dispatch-prompt: {args.type} is the plugin's `{found.name}` here: dispatch it with "
              f"subagent_type \"{found.name}\"", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
