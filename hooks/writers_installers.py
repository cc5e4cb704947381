"""The writers' parsers for package installers (hooks/shell_writers.py dispatches here): pip, npm, pnpm,
yarn into a directory (``--target``, ``--prefix``, ``--root``), pip run by its path (the environment
it belongs to) and ``python -m pip``.

Imported on the first such command only. Parsing only: the guards judge the targets.
"""
from __future__ import annotations

from swarmgate.hooks.shell_writers import parse_args
from swarmgate.hooks.writer_table import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


def installer(cmd: SimpleCommand, name: str, args: list[str]) -> list[Target]:
    """pip/npm/uv pip installing into a directory (``--target``, ``--prefix``, ``--root``, ``-t``),
    or into the environment of the program named by its path (``/venv/bin/pip install``)."""
    from swarmgate import lean_path as posixpath
    words = list(cmd.words)
    sub_at = next((i for i, a in enumerate(args) if a in ("install", "uninstall", "i", "add", "remove", "rm",
                                                         "ci", "update", "sync")), None)
    if sub_at is None:
        return []
    rest = args[sub_at + 1:]
    opts, _ops = parse_args(rest, {"-t", "--target", "--prefix", "--root", "-r", "--requirement", "-c",
                                   "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
                                   "--python", "-p"})
    out = [Target(v, f"`{name}` installs into {v}", tree=True) for o, v in opts
           if o in ("-t", "--target", "--prefix", "--root") and v]
    if name in ("npm", "pnpm", "yarn") and "-g" not in {o for o, _ in opts} and not out:
        return []
    exe = words[0] if words else ""
    if not out and "/" in exe and name.startswith("pip"):
        out.append(Target(posixpath.dirname(posixpath.dirname(exe)), f"`{exe}` installs into its environment",
                          tree=True))
    return out


def python_pip(cmd: SimpleCommand, args: list[str]) -> list[Target]:
    """``/venv/bin/python -m pip install ...``: the interpreter's environment."""
    if len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "pip3"):
        return installer(cmd, "pip", args[2:])
    return []
