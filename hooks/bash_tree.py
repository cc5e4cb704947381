"""Bash command analysis: every simple command a shell text would execute.

Parsing only, no judging (SPEC §4.3). ``analyze(command, cwd=...)`` parses the
text with bashlex (loaded through ``bashlex_fast``, which caches yacc's
tables) or, where bashlex cannot, with the quote-aware parser in
``bash_lexical``; then one walker visits the tree and yields an ``Analysis``:

- ``commands``: every ``SimpleCommand`` that would execute, anywhere: lists,
  pipelines, ``{ }``, ``( )``, if/while/until/for/case, functions (the body is
  walked where the function is called, or once where it is defined when it
  is never called), ``$( )``, backticks, ``<( )``, ``>( )``, heredocs fed to a
  shell, and through the wrappers below;
- ``loops``, ``unverifiable``, ``nested_background``, ``scripts_read``,
  ``problems``, ``parsed_by``, ``programs``.

The reader is split by concern: result types (``bash_results``), word
expansion (``bash_words``), parsing front ends (``bash_parse``, with
``bashlex_adapter`` and ``bash_lexical``), the wrapper table
(``bash_wrappers``), readers of project files (``makefile_reader``) and the
walker (``bash_walker``). This module is the entry point.

Wrappers (the wrapper is yielded too; the wrapped command carries it in ``via`` and
``wrappers``): every program of the one wrapper table (``bash_wrappers``: env, nice,
timeout, sudo, strace, docker run, uv run, ssh, ... and ``[bash] wrappers`` from the
config), the programs ``bash_programs`` reads (xargs, parallel, tmux, sed ``e``, awk
``system()``, tar, hyperfine, expect, vim), shells with ``-c``, ``eval``, and the runners
of project files (npm/yarn/pnpm/bun scripts, make, just, task, tox, nox, ninja, cargo
aliases, git aliases and hooks, pre-commit: see docs/bash-tree.md).

Decisions documented here (the guards rely on them):
- Command names are normalised: quotes and backslashes removed, basename
  taken (``/usr/bin/cargo``, ``\\cargo``, ``"cargo"``, ``c'argo'`` -> cargo).
- ``$HOME/bin/tool``: the directory part may be dynamic; the basename is
  static, so the command is ``tool`` and nothing is unverifiable. Only when
  the basename itself comes from an unknown expansion (``$CMD args``,
  ``${TOOLS}/$T``, ``$(which cargo) test``) is the command unverifiable.
- Constant variables: ``C=cargo``, ``export C=cargo``, ``declare``/``local``/
  ``readonly`` are followed, in walk order, one flat scope per analysis
  (subshells and command substitutions get a copy). A value containing an
  expansion we cannot resolve makes the variable unknown.
- ``cat FILE | bash`` and ``bash < FILE`` run FILE (read like a script);
  ``echo 'literal' | sh``, ``printf 'literal' | sh``, ``bash <<EOF``,
  ``bash <<< 'text'`` parse the literal text; any other producer piped into a
  shell (``curl``, ``base64 -d``, ``wget -O-``, a variable) is unverifiable.
- Scripts at command position (``./x.sh``, ``dir/x``: a path with a slash
  that is a ``.sh``/``.bash`` file, has a shell shebang, or is an executable
  text file without a shebang), ``bash x.sh``, ``source x.sh``, ``. x.sh``:
  read relative to the tracked cwd (``cd DIR`` with a constant DIR is
  followed; ``cd`` into something unknown makes relative scripts
  unresolvable -> unverifiable), each file at most once per analysis.
  ``python x.py`` and other interpreters' files are never read. A ``.rs``
  file (or any non-executable file without a shell shebang) at command
  position is not a script: bash could not run it.
- A file written earlier in the same command (``cat > x.sh <<EOF``,
  ``echo ... > x.sh``, ``printf``, ``tee x.sh``, ``cp a x.sh``) and then run
  is judged by the content written; non-literal content -> unverifiable.
- Heredocs with an unquoted delimiter expand ``$( )`` and backticks in their
  body even when fed to a non-shell: those substitutions are commands.
- Words of data commands (echo, printf, grep, git commit -m ...) are simply
  words: nothing inside a quoted string is parsed unless bash would run it
  (``$( )`` and backticks inside double quotes do run, as in bash).
- ``xargs CMD ARGS`` yields CMD ARGS followed by the words xargs reads: the
  literal input when it is known (``echo --workspace | xargs cargo test``),
  else one dynamic placeholder word ``$XARGS_INPUT`` (not with ``-I``).
  ``parallel CMD ::: A B`` yields one job per argument.
- ``python -m MODULE ARGS`` yields MODULE ARGS (via "python -m").
- ``trap 'CMDS' SIG`` yields CMDS (via "trap"); ``ssh HOST CMD`` yields CMD
  (via "ssh:HOST"); ``make TARGET`` yields the recipes (via "make:TARGET").
- Positional parameters: a script run with arguments, a function called with
  arguments and ``bash -c STR NAME ARGS`` know their ``$1``.. and ``"$@"``;
  the top-level text has none (``$1`` is empty, as in the Bash tool).
- Redirections of enclosing compound commands are appended to each inner
  command's ``redirects``; for ``<<`` the ``target`` is the delimiter and
  ``heredoc`` the body.
- Interpreter programs (``python -c``, ``node -e``, a program on stdin) are
  recorded in ``programs``, not judged: the reader knows no patterns. The
  guards scan them (``code_scan``). The shell commands their code hands to a
  shell (``os.system("...")``, ``child_process.exec``, perl's backticks:
  ``embedded_shell``) are walked like ``bash -c`` right after the program, via
  ``INTERPRETER SINK`` (``python3 os.system``): every guard sees them.
- Which parser reads the text: ``parser="lexical"`` (the default, what every
  guard judges with) never imports bashlex; ``parser="auto"`` tries bashlex
  first and falls back to the lexical parser. bashlex stays a dependency as
  the suite's differential oracle: every corpus command is parsed by both and
  they must agree, except where bashlex is known wrong
  (tests/hooks/bash_lexical_oracle_test.py).

``analyze`` never raises and answers within ``budget_s``: the clock is
checked while walking, bashlex is skipped for texts it would be slow on, and
every recursion is bounded (``max_depth`` for nested texts, a fixed bound for
tree nesting). What could not be read is reported as ``Unverifiable``.
"""
from __future__ import annotations

from swarmgate import lean_os as os
import time

from swarmgate.hooks.bash_parse import OutOfTime, needs_lexical, parse_text
from swarmgate.hooks.bash_results import (Analysis, Loop, Program, Redirect, SimpleCommand,
                                          Unverifiable, command_name)
from swarmgate.hooks.bash_walker import Ctx, Walker
from swarmgate.hooks.bash_wrappers import INTERPRETERS, SHELLS, compile_config

__all__ = ["Redirect", "SimpleCommand", "Loop", "Unverifiable", "Program", "Analysis", "analyze",
           "SHELLS", "INTERPRETERS", "command_name"]


def analyze(command: str, *, cwd: str, max_depth: int = 6, budget_s: float = 2.0,
            max_script_bytes: int = 1 << 20, parser: str = "lexical", wrappers: dict | None = None) -> Analysis:
    """Every simple command ``command`` would execute (see the module doc).

    Never raises; answers within ``budget_s`` (what is left unread is
    reported as Unverifiable + a problems entry). ``parser="lexical"`` (the
    default) never imports bashlex (bashlex's import alone costs more than the
    whole hook's budget; ~8x faster per parse); ``parser="auto"`` tries bashlex
    first (the differential oracle of the tests)."""
    if parser not in ("auto", "lexical"):
        parser = "lexical"
    an = Analysis()
    start = time.monotonic()
    deadline = start + max(0.01, budget_s)
    if not isinstance(command, str):
        an.problems.append("command is not text")
        an.unverifiable.append(Unverifiable("command is not text", repr(command)[:200]))
        return an
    if "\0" in command:
        an.problems.append("command holds NUL bytes")
        an.unverifiable.append(Unverifiable("command holds NUL bytes: bash would not run it "
                                            "as written", command[:200]))
        command = command.replace("\0", " ")
    if isinstance(cwd, str) and cwd:
        cwd = os.path.abspath(cwd)
    else:
        cwd = None
    w = Walker(an, cwd, max_depth, deadline, max_script_bytes)
    w.extra_wrappers = compile_config(wrappers)
    w.source = command
    w.parser = parser
    ctx = Ctx()
    try:
        if parser == "lexical" or needs_lexical(command):
            an.parsed_by = "lexical"
        seq, by, unsure = parse_text(command, deadline, parser)
        an.parsed_by = by
        if by == "lexical" and parser == "auto":
            why = needs_lexical(command)
            an.problems.append(f"parsed by the lexical fallback ({why or 'bashlex could not parse it'})")
        if unsure:
            an.problems.append(f"the lexical fallback is unsure: {unsure}")
            an.unverifiable.append(Unverifiable(f"the command could not be read with confidence "
                                                f"({unsure})", command[:500]))
        w.walk(seq, ctx)
        w.finish(ctx)
    except OutOfTime:
        an.problems.append(f"time budget of {budget_s:g} s exhausted; the rest was not read")
        an.unverifiable.append(Unverifiable(f"analysis did not finish within {budget_s:g} s",
                                            command[:500]))
    except RecursionError:
        an.problems.append("nesting too deep (recursion limit)")
        an.unverifiable.append(Unverifiable("command nested too deeply to read", command[:500]))
    except Exception as e:  # noqa: BLE001 - never raise to the hook
        an.problems.append(f"internal error while reading the command: {type(e).__name__}: {e}")
        an.unverifiable.append(Unverifiable(f"internal error while reading the command "
                                            f"({type(e).__name__})", command[:500]))
    return an
