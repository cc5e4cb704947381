"""What an argv really runs, for the layers that see a program start (issue 10): the exec-time
check (X01, hooks/exec_check.py) and the sightings in subagents' cgroups (X03,
hooks/agent_sightings.py). Not a guard module.

``heavy_argv(argv, config, cwd, repo, env)`` answers with B01's matcher
(``heavy_commands.heavy_match``: the `[heavy] patterns`, `[bash] make_targets`, dry runs
excepted) over
1. the argv itself, and from any argument that names a pattern's program (a launcher's operand:
   ``rustup run stable cargo test --workspace``);
2. pytest's own extra arguments: PYTEST_ADDOPTS, the ini file's addopts, and its testpaths when
   no path is given;
3. what the bash reader says the argv runs (hooks/bash_tree.py with its readers: cargo aliases,
   package scripts and lifecycle scripts, make recipes and prerequisites, justfile, Taskfile,
   tox, nox, ninja, pre-commit), a recipe line counting as `make TARGET` and a package script
   as `npm run NAME`; the program's own environment variables (CARGO_ALIAS_*, MAKEFILES, ...)
   are given to the reader as assignments in front of the argv.
"""
from __future__ import annotations

import os


# --- what the argv runs ------------------------------------------------------------------------

# environment variables through which a program's own configuration says what it runs: handed to the
# reader as assignments in front of the argv, so it resolves them as it would in a typed command
_PROGRAM_ENV_PREFIXES = ("CARGO_ALIAS_", "MAKEFILES", "MAKEFLAGS", "GIT_", "npm_config_", "PYTEST_ADDOPTS")


def pytest_argv(args: list[str], cwd: str, env) -> list[str]:
    """What pytest really collects from (hooks/pytest_collection.py)."""
    from swarmgate.hooks.pytest_collection import pytest_argv as collected

    return collected(args, cwd, env)


def _reader_commands(argv: list[str], config, cwd: str, env) -> list:
    """The commands the bash reader says ``argv`` runs (the argv itself, then what its aliases,
    package scripts, recipes and task files run), each with its via labels."""
    import shlex

    from swarmgate.hooks.bash_tree import analyze

    pre = [f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())
           if k.startswith(_PROGRAM_ENV_PREFIXES) and k.replace("_", "a").isalnum()]
    b = config["bash"]
    analysis = analyze(" ".join([*pre, shlex.join(argv)]), cwd=cwd, max_depth=int(b["max_depth"]),
                       budget_s=b["budget_ms"] / 1000.0, max_script_bytes=int(b["max_script_bytes"]),
                       parser="lexical")
    return list(analysis.commands)


# --- the judge -------------------------------------------------------------------------------

def pattern_programs(config) -> set:
    """The programs the heavy patterns name (their first words, basenames; make when
    `[bash] make_targets` is set)."""
    from swarmgate.hooks.command_patterns import basename, split_words

    names = set()
    for p in config["heavy"]["patterns"]:
        try:
            w = split_words(p)
        except ValueError:
            continue
        if w:
            names.add(basename(w[0]))
    if config["bash"]["make_targets"]:
        names |= {"make", "gmake"}
    return names


def heavy_argv(argv: list[str], config, cwd: str, repo: str, env=None) -> tuple[str, list] | None:
    """(pattern, the argv that matched) when ``argv`` runs a heavy command, else None. Reads the
    files the program reads (aliases, scripts, recipes, ini files) but changes nothing."""
    from swarmgate.hooks.command_patterns import Argv, basename
    from swarmgate.hooks.equivalents_table import PYTEST_NAMES
    from swarmgate.hooks.heavy_commands import heavy_match, via_argvs

    if not argv:
        return None
    env = os.environ if env is None else env
    names = pattern_programs(config)

    def judge(words: list[str]):
        hit = heavy_match(Argv(words), config, cwd, repo)
        if hit:
            return hit, words
        for i in range(1, len(words)):   # a launcher's operand: `rustup run stable cargo test ...`
            if basename(words[i]) in names:
                hit = heavy_match(Argv(words[i:]), config, cwd, repo)
                if hit:
                    return hit, words[i:]
        return None

    first = basename(argv[0])
    tries = [list(argv)]
    if first in PYTEST_NAMES:
        tries.append(pytest_argv(list(argv[1:]), cwd, env))
    for words in tries:
        found = judge(words)
        if found:
            return found
    for cmd in _reader_commands(list(argv), config, cwd, env):
        words = list(cmd.words)
        if not words:
            continue
        found = None
        for _labels, via in via_argvs(cmd):   # first: the script a body line came from names the pattern best
            found = found or judge(via)
        found = found or judge(words)
        if found is None and basename(words[0]) in PYTEST_NAMES:
            found = judge(pytest_argv(words[1:], cwd, env))
        if found:
            return found
    return None
