"""The argument parser every console tool uses: argparse, except that a command line it rejects
becomes front_door.UsageError (one line, exit 251 at the front door) instead of argparse's usage
block and exit 2, and that `--selftest` is listed in every tool's help (the front door runs it)."""
from __future__ import annotations

import argparse

from swarmgate.front_door import UsageError


class ToolParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` for a tool's top-level command line."""

    lists_selftest = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.lists_selftest:
            self.add_argument("--selftest", action="store_true",
                              help="run this tool's self-test: every cell green, each break switch turns its "
                                   "cells red")

    def error(self, message: str):
        raise UsageError(f"{message} (`{self.prog} --help` shows the usage)", prog=self.prog)

    def add_subparsers(self, **kwargs):
        kwargs.setdefault("parser_class", SubcommandParser)
        return super().add_subparsers(**kwargs)


class SubcommandParser(ToolParser):
    """A subcommand's parser (`workspace-lock acquire`): same errors, --selftest listed once, on top."""

    lists_selftest = False
