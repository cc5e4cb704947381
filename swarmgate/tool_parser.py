"""The argument parser every console tool uses: argparse, except that a command line it rejects
becomes front_door.UsageError (one line, exit 251 at the front door) instead of argparse's usage
block and exit 2, and that `--selftest` is listed in every tool's help (the front door runs it)."""
from __future__ import annotations

import argparse
import os
import sys

from swarmgate.front_door import UsageError


def terminal_columns() -> int:
    """shutil.get_terminal_size().columns: COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class ToolParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` for a tool's top-level command line."""

    lists_selftest = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.lists_selftest:
            self.add_argument("--selftest", action="store_true",
                              help="run this tool's self-test: every cell green, each break switch turns its "
                                   "cells red")

    def _get_formatter(self):
        # argparse's formatter asks shutil for the terminal's width, and add_argument makes one to
        # check every argument: shutil (with zlib, bz2 and lzma) imported for a help nobody prints.
        # The same width without it (what a tool's all-cached run saves: bench/gate_cache.py)
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)

    def error(self, message: str):
        raise UsageError(f"{message} (`{self.prog} --help` shows the usage)", prog=self.prog)

    def add_subparsers(self, **kwargs):
        kwargs.setdefault("parser_class", SubcommandParser)
        return super().add_subparsers(**kwargs)


class SubcommandParser(ToolParser):
    """A subcommand's parser (`workspace-lock acquire`): same errors, --selftest listed once, on top."""

    lists_selftest = False
