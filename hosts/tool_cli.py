"""What every host tool's command line shares: `OPTIONS -- COMMAND`, --hosts-config, and loading
hosts.toml with a one-line error (--selftest and the break-switch refusal: swarmgate.front_door)."""
from __future__ import annotations

import sys

from swarmgate.config import ConfigError
from swarmgate.hosts_config import load_hosts_config
from swarmgate.exit_codes import Exit
from swarmgate.tool_parser import ToolParser


def split_command(argv) -> tuple[list[str], list[str]]:
    """(options, command): everything after the first `--` is the command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def parser(prog: str, doc: str | None) -> ToolParser:
    p = ToolParser(prog=prog, description=(doc or "").split("\n")[0])
    p.add_argument("--hosts-config", help="hosts.toml (default ~/.config/swarmgate/hosts.toml)")
    return p


def preamble(args, tool: str, say, command: list[str] | None) -> int | None:
    """An exit code when the tool must stop here (no command after `--`)."""
    if command is not None and not command:
        say("nothing to run: put the command after `--`")
        return Exit.USAGE
    return None


def load_hosts(args, say):
    """The hosts config, or Exit.USAGE after saying what is wrong with it."""
    try:
        return load_hosts_config(args.hosts_config)
    except ConfigError as e:
        say(str(e))
        return Exit.USAGE
