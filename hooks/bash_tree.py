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
  ``problems``, ``parsed_by``.

Wrappers unwrapped (the wrapper is yielded too; the wrapped command carries
the wrapper in ``via`` and ``wrappers``): ``bash|sh|zsh|dash|ksh -c STR``
(any short-option cluster ending in c: ``-lc``, ``-ec``, ``-xc``; parsed
again, depth+1), ``eval``, ``env``, ``nice``, ``nohup``, ``timeout``,
``time``, ``command`` (not with -v/-V), ``builtin``, ``exec``, ``sudo``,
``doas``, ``setsid``, ``stdbuf``, ``ionice``, ``chrt``, ``taskset``,
``xargs``, ``find -exec/-execdir/-ok/-okdir``, ``parallel``, ``watch``,
``flock``, ``run-with-memory-cap``, ``host-dispatch``, ``multi-host-run``,
``gpu-quiesce-run``, ``detached-run start``, ``swarmgate preflight``,
``srun``/``systemd-run`` (the command after their options).

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
- ``analyze(..., parser="lexical")`` never imports bashlex (faster; the
  differential tests show both parsers read the same trees where bashlex
  parses); the default tries bashlex first.

``analyze`` never raises and answers within ``budget_s``: the clock is
checked while walking, bashlex is skipped for texts it would be slow on, and
every recursion is bounded (``max_depth`` for nested texts, a fixed bound for
tree nesting). What could not be read is reported as ``Unverifiable``.
"""
from __future__ import annotations

import os
import time

from swarmgate.hooks import bash_lexical as _lx

__all__ = ["Redirect", "SimpleCommand", "Loop", "Unverifiable", "Analysis", "analyze",
           "SHELLS", "INTERPRETERS", "command_matches"]

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "busybox-sh"})
INTERPRETERS = {  # name prefix -> options that take inline code
    "python": ("-c",), "pypy": ("-c",), "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "lua": ("-e",),
}
_BASHLEX_MAX_CHARS = 6000      # bashlex costs ~30 µs/char: beyond this the lexical parser reads
_BASHLEX_MAX_NEST = 40         # and it recurses per nesting level
_MAX_TREE_NEST = 200           # walker recursion bound (nested nodes)
_CACHE_MAX = 256                # parse trees kept per process, by text
_CACHE_TEXT_MAX = 16384         # larger texts (scripts) are not kept
_UNKNOWN_DIR = "/?unknown-dir"   # stands for a directory we cannot name (cd "$(mktemp -d)")
_MAX_FUNC_CALLS = 64
_MAX_LOOP_VALUES = 8            # `for x in a b c`: the body is read once per value up to this            # function bodies expanded per analysis (f calls g twice, g calls h twice...)


class Redirect:
    """A redirection. ``op``: ">", ">>", "<", "<<", "<<-", "<<<", ">&", "<&",
    "&>", "&>>", ">|", "<>"; ``target``: quote-removed (may contain ``$``),
    the fd number as text for ``2>&1``; ``fd``: explicit fd or None;
    ``heredoc``: the body for ``<<``/``<<-`` (the here-string for ``<<<`` is
    ``target``)."""
    __slots__ = ("op", "target", "fd", "heredoc", "quoted")

    def __init__(self, op: str, target: str, fd: int | None = None, heredoc: str | None = None,
                 quoted: bool = False) -> None:
        self.op = op
        self.target = target
        self.fd = fd
        self.heredoc = heredoc
        self.quoted = quoted   # the here-document delimiter was quoted: no expansion in the body

    @property
    def writes(self) -> bool:
        """True when this redirection writes to ``target`` as a file."""
        if self.op in (">", ">>", ">|", "&>", "&>>", "<>"):
            return True
        return self.op == ">&" and not self.target.isdigit() and self.target != "-"

    def __repr__(self) -> str:
        return f"Redirect({self.op!r}, {self.target!r}, fd={self.fd})"


class SimpleCommand:
    """One simple command that would execute. See the module doc for ``via``.

    Extensions beyond the first contract: ``cwd`` (the directory it runs in
    when known, else None), ``dynamic`` (per word: True when the word holds an
    expansion we could not resolve; such words keep the ``$...`` text),
    ``script`` (the absolute path of the script it came from, or None)."""
    __slots__ = ("words", "name", "args", "assignments", "redirects", "via", "background",
                 "wrappers", "text", "is_data", "cwd", "dynamic", "script")

    def __init__(self, words: list[str], assignments: dict, redirects: list, via: tuple,
                 background: int, wrappers: tuple, text: str, cwd: str | None = None,
                 dynamic: list | None = None, script: str | None = None) -> None:
        self.words = words
        self.name = command_name(words[0]) if words else ""
        self.args = words[1:]
        self.assignments = assignments
        self.redirects = redirects
        self.via = via
        self.background = background
        self.wrappers = wrappers
        self.text = text
        self.is_data = False
        self.cwd = cwd
        self.dynamic = dynamic if dynamic is not None else [False] * len(words)
        self.script = script

    def __repr__(self) -> str:
        return f"SimpleCommand({self.words!r}, via={self.via!r}, bg={self.background})"


class Loop:
    __slots__ = ("kind", "condition_commands", "body_commands", "has_break", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.condition_commands: list[SimpleCommand] = []
        self.body_commands: list[SimpleCommand] = []
        self.has_break = False
        self.text = text

    def __repr__(self) -> str:
        return f"Loop({self.kind!r}, break={self.has_break}, {self.text[:40]!r})"


class Unverifiable:
    __slots__ = ("reason", "text")

    def __init__(self, reason: str, text: str) -> None:
        self.reason = reason
        self.text = text

    def __repr__(self) -> str:
        return f"Unverifiable({self.reason!r})"


class Analysis:
    __slots__ = ("commands", "loops", "unverifiable", "nested_background", "scripts_read",
                 "problems", "parsed_by")

    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.loops: list[Loop] = []
        self.unverifiable: list[Unverifiable] = []
        self.nested_background: list[str] = []
        self.scripts_read: list[str] = []
        self.problems: list[str] = []
        self.parsed_by = "bashlex"

    def __repr__(self) -> str:
        return (f"Analysis(commands={self.commands!r}, unverifiable={self.unverifiable!r}, "
                f"problems={self.problems!r}, parsed_by={self.parsed_by!r})")


# ---------------------------------------------------------------------------
# names and patterns


def command_name(word: str) -> str:
    """Basename of a command word (already quote-removed)."""
    k = word.rfind("/")
    return word[k + 1:] if k >= 0 else word


def command_matches(cmd: SimpleCommand, pattern: str | list) -> bool:
    """SPEC §4.3 matching: the first pattern word equals the command name
    (basename), the others appear among the arguments in order, whole words,
    other arguments allowed between; pattern words may be globs. Kept here
    for the interpreter one-liner scan; guards may reuse it."""
    return words_match(cmd.name, cmd.args, pattern)


def words_match(name: str, args: list, pattern) -> bool:
    pw = pattern.split() if isinstance(pattern, str) else list(pattern)
    if not pw:
        return False
    if not _word_eq(name, command_name(pw[0])) and not _word_eq(name, pw[0]):
        return False
    i = 0
    for p in pw[1:]:
        while i < len(args) and not _word_eq(args[i], p):
            i += 1
        if i >= len(args):
            return False
        i += 1
    return True


def _word_eq(word: str, pat: str) -> bool:
    if word == pat:
        return True
    if any(c in pat for c in "*?["):
        import fnmatch
        return fnmatch.fnmatchcase(word, pat)
    return False


# ---------------------------------------------------------------------------
# word expansion (quote removal + constant variables)

_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
              "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _match_close(s: str, i: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket matching s[i] (quote-aware); len(s) if none.

    Words longer than 4000 characters are not scanned (pathological nesting
    would make expansion quadratic): the rest of the word counts as dynamic."""
    depth = 0
    n = len(s)
    if n - i > 4000:
        return n
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and open_c != "{":
            k = s.find("'", i + 1)
            i = n if k < 0 else k + 1
            continue
        if c == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            i = j + 1
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


_env_vars: dict | None = None  # kept for callers that reset it; no longer a cache
_ENV_KNOWN = ("HOME", "USER", "LOGNAME", "TMPDIR", "SHELL")


def _base_vars(cwd: str | None) -> dict:
    """Variables whose value the Bash tool's shell certainly has: a few from
    the environment the hook runs in (the same user and session), and PWD.
    Read on every call: a hook is a fresh process, so a cache gains nothing and
    a long-lived caller (tests, swarm-watch) must see the environment as it is now."""
    out: dict[str, str | None] = {k: os.environ[k] for k in _ENV_KNOWN if os.environ.get(k)}
    if cwd:
        out["PWD"] = cwd
    return out


def _param(inner: str, variables: dict) -> str | None:
    """Value of ${inner} when it is known: NAME, NAME[0], NAME:-word, NAME-word."""
    if inner.isidentifier() or inner.isdigit() or inner in ("@", "*", "#"):
        return variables.get(inner)
    k = inner.find("[")
    if k > 0 and inner.endswith("]") and inner[:k].isidentifier() and inner[k + 1:-1] in ("0", "@", "*"):
        return variables.get(inner[:k])
    for op in (":-", ":=", "-", "="):
        k = inner.find(op)
        if k > 0 and inner[:k].isidentifier():
            name, word = inner[:k], inner[k + len(op):]
            static_word = not any(c in word for c in "$`'\"\\")
            if name not in variables:
                # not set by this text: the default is what runs unless the
                # environment sets it (judged as the default: ${CARGO:-cargo} is cargo)
                return word if static_word else None
            val = variables[name]
            if val is None:
                return None   # set to something we cannot read
            if val == "" and op.startswith(":"):
                return word if static_word else None
            return val
    return None


def expand(raw: str, variables: dict, subst=None, heredoc: bool = False) -> tuple[str, int]:
    """Quote removal and constant-variable expansion of one word.

    Returns (value, last_dynamic_end): expansions that cannot be resolved keep
    their source text in ``value``; ``last_dynamic_end`` is the index in value
    just after the last such piece (-1 when the word is fully static)."""
    if "$" not in raw and "'" not in raw and '"' not in raw and "\\" not in raw and "`" not in raw:
        return raw, -1
    out: list[str] = []
    olen = 0
    last = -1
    i, n = 0, len(raw)
    dq = heredoc   # an unquoted here-document body expands like "..." without the quotes
    while i < n:
        c = raw[i]
        if heredoc and c == '"':
            out.append(c)
            olen += 1
            i += 1
            continue
        if c == "\\":
            if i + 1 < n:
                nx = raw[i + 1]
                if nx == "\n":
                    pass
                elif dq and nx not in '$`"\\':
                    out.append("\\" + nx)
                    olen += 2
                else:
                    out.append(nx)
                    olen += 1
            i += 2
            continue
        if c == '"':
            dq = not dq
            i += 1
            continue
        if c == "'" and not dq:
            k = raw.find("'", i + 1)
            k = n if k < 0 else k
            piece = raw[i + 1:k]
            out.append(piece)
            olen += len(piece)
            i = k + 1
            continue
        if c == "`":
            j = i + 1
            while j < n and raw[j] != "`":
                j += 2 if raw[j] == "\\" else 1
            piece = raw[i:j + 1]
            val = subst(raw[i + 1:j]) if subst is not None else None
            if val is not None:
                out.append(val)
                olen += len(val)
                i = j + 1
                continue
            out.append(piece)
            olen += len(piece)
            last = olen
            i = j + 1
            continue
        if c in "<>" and not dq and i + 1 < n and raw[i + 1] == "(":
            # process substitution: a /dev/fd path known only at run time
            j = _match_close(raw, i + 1, "(", ")")
            piece = raw[i:j]
            out.append(piece)
            olen += len(piece)
            last = olen
            i = j
            continue
        if c == "$" and i + 1 < n:
            nx = raw[i + 1]
            if nx == "'" and not dq:
                j = i + 2
                while j < n and raw[j] != "'":
                    j += 2 if raw[j] == "\\" else 1
                piece = _c_unescape(raw[i + 2:j])
                out.append(piece)
                olen += len(piece)
                i = j + 1
                continue
            if nx == '"' and not dq:   # $"..." locale string
                i += 1
                continue
            if nx == "(":
                j = _match_close(raw, i + 1, "(", ")")
                piece = raw[i:j]
                val = subst(raw[i + 2:j - 1]) if subst is not None and not piece.startswith("$((") else None
                if val is not None:
                    out.append(val)
                    olen += len(val)
                    i = j
                    continue
                out.append(piece)
                olen += len(piece)
                last = olen
                i = j
                continue
            if nx == "{":
                j = _match_close(raw, i + 1, "{", "}")
                inner = raw[i + 2:j - 1]
                val = _param(inner, variables)
                if val is None:
                    piece = raw[i:j]
                    out.append(piece)
                    olen += len(piece)
                    last = olen
                else:
                    out.append(val)
                    olen += len(val)
                i = j
                continue
            if nx.isalpha() or nx == "_":
                j = i + 1
                while j < n and (raw[j].isalnum() or raw[j] == "_"):
                    j += 1
                name = raw[i + 1:j]
                val = variables.get(name)
                if val is None:
                    piece = raw[i:j]
                    out.append(piece)
                    olen += len(piece)
                    last = olen
                else:
                    out.append(val)
                    olen += len(val)
                i = j
                continue
            if nx.isdigit() or nx in "@*#?$!-":
                val = variables.get(nx) if nx in "0123456789@*#" else None
                if val is None:
                    out.append(raw[i:i + 2])
                    olen += 2
                    last = olen
                else:
                    out.append(val)
                    olen += len(val)
                i += 2
                continue
        out.append(c)
        olen += 1
        i += 1
    return "".join(out), last


# ---------------------------------------------------------------------------
# parsing front ends

_cache: dict = {}
_lcache: dict = {}


def _lexical_parse(text: str, deadline: float | None):
    try:
        seq, unsure = _lx.parse(text, deadline)
    except _lx.ParseTimeout:
        return None
    return seq, "lexical", unsure


def _needs_lexical(text: str) -> str | None:
    """Why bashlex should not be tried on this text (None: try it)."""
    if len(text) > _BASHLEX_MAX_CHARS:
        return f"text of {len(text)} characters"
    if text.count("(") + text.count("`") + text.count("{") > _BASHLEX_MAX_NEST:
        return "deeply nested text"
    k = text.find("((")
    while k >= 0:
        if k == 0 or text[k - 1] != "$":
            return "arithmetic (( ))"
        k = text.find("((", k + 2)
    if "$((" in text:
        return "arithmetic expansion"
    # bashlex reads `;# comment` as a command, and mishandles backslashes in backquotes
    for pair in (";#", "&#", "|#", "(#", ")#"):
        if pair in text:
            return "comment right after an operator"
    if "`" in text and "\\" in text:
        return "backslash inside backquotes"
    # bashlex neither sees substitutions inside ${...} nor splits such words right
    k = text.find("${")
    while k >= 0:
        end = text.find("}", k)
        seg = text[k:end if end >= 0 else len(text)]
        if "$(" in seg or "`" in seg:
            return "substitution inside ${...}"
        k = text.find("${", k + 2)
    # constructs bashlex rejects anyway (saves the failed attempt)
    if "[[" in text or "=(" in text:
        return "[[ ]] or an array"
    if text.lstrip().startswith(("time ", "case ", "select ", "coproc ")):
        return "time/case/select/coproc"
    return None


def parse_text(text: str, deadline: float | None = None, parser: str = "auto"):
    """Parse a shell text: (Seq, parsed_by, unsure_reason_or_None). Cached by text.

    ``parser``: "auto" (bashlex, else the lexical parser), "lexical" (never
    import bashlex). Past ``deadline`` (time.monotonic) raises _OutOfTime;
    bashlex (which cannot be interrupted) is only tried when its expected cost fits."""
    hit = _cache.get(text) if parser == "auto" else _lcache.get(text)
    if hit is not None:
        return hit
    if parser == "lexical":
        result = _lexical_parse(text, deadline)
        if result is None:
            raise _OutOfTime()
        if len(text) <= _CACHE_TEXT_MAX:
            if len(_lcache) >= _CACHE_MAX:
                _lcache.clear()
            _lcache[text] = result
        return result
    why = _needs_lexical(text)
    if why is None and deadline is not None:
        # ~30 µs per character is bashlex's pace; keep a wide margin
        if time.monotonic() + len(text) * 1e-4 + 0.01 > deadline:
            why = "not enough time left for bashlex"
    result = None
    if why is None:
        try:
            from swarmgate.hooks import bashlex_fast
            bashlex = bashlex_fast.load()
            trees = bashlex.parser.parse(text)
            _conv["cmds"], _conv["heredocs"] = [], []
            items = []
            for t in trees:
                items.extend(_bl_items(t, text))
            _check_heredocs(text)
            seen: set = set()
            if sum(_bl_count_commands(t, seen) for t in trees) != len(_conv["cmds"]):
                raise _PositionMismatch("the bashlex tree has commands the conversion did not reach")
            result = (_lx.Seq(items, text), "bashlex", None)
        except RecursionError:
            result = None
        except Exception:  # noqa: BLE001 - bashlex raises many kinds; fall back
            result = None
    if result is None:
        result = _lexical_parse(text, deadline)
        if result is None:
            raise _OutOfTime()
    if len(text) <= _CACHE_TEXT_MAX and why != "not enough time left for bashlex":
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[text] = result
    return result


def _bl_items(node, src: str) -> list:
    """bashlex top-level/list node -> [(node, terminator)]."""
    if node.kind == "list":
        items: list = []
        for p in node.parts:
            if p.kind == "operator":
                op = p.op
                if items and op in (";", "&&", "||", "&"):
                    items[-1] = (items[-1][0], op)
                continue
            items.append((_bl(p, src), ""))
        return items
    return [(_bl(node, src), "")]


def _bl_seq(nodes, src: str) -> _lx.Seq:
    items: list = []
    for n in nodes:
        if n.kind == "reservedword":
            continue
        if n.kind == "operator":
            if items and n.op in (";", "&&", "||", "&"):
                items[-1] = (items[-1][0], n.op)
            continue
        items.extend(_bl_items(n, src))
    return _lx.Seq(items, "")


_conv: dict = {"cmds": [], "heredocs": []}   # positions seen while converting one bashlex tree


def _check_heredocs(src: str) -> None:
    """bashlex reads a here-document inside { }, ( ), if, loops or functions
    after the compound command, and parses its body as commands: a command
    that starts inside a body means the tree is wrong."""
    for rend, hend in _conv["heredocs"]:
        nl = src.find("\n", rend)
        if nl < 0:
            continue
        for start in _conv["cmds"]:
            if nl < start < hend:
                raise _PositionMismatch("bashlex read a here-document body as commands")


class _PositionMismatch(ValueError):
    """bashlex's positions do not point at the word it reports (it happens
    inside backquotes with escapes): its tree is not used."""


def _bl_word(node, src: str) -> _lx.Word:
    raw = src[node.pos[0]:node.pos[1]]
    word = getattr(node, "word", None)
    if word is not None and word != raw and expand(raw, {})[0] != word:
        raise _PositionMismatch(f"{raw!r} != {word!r}")
    subs: list = []
    _bl_collect_subs(node, src, subs)
    return _lx.Word(raw, subs)


def _in_single_quotes(raw: str, offset: int) -> bool:
    """Is ``raw[offset]`` inside single quotes (outside double quotes)?"""
    sq = dq = False
    i = 0
    while i < offset and i < len(raw):
        c = raw[i]
        if c == "\\" and not sq:
            i += 2
            continue
        if c == "'" and not dq:
            sq = not sq
        elif c == '"' and not sq:
            dq = not dq
        i += 1
    return sq


def _bl_collect_subs(node, src: str, subs: list, top=None) -> None:
    top = node if top is None else top
    for p in getattr(node, "parts", ()) or ():
        k = p.kind
        if k in ("commandsubstitution", "processsubstitution") and hasattr(top, "pos"):
            raw = src[top.pos[0]:top.pos[1]]
            if _in_single_quotes(raw, p.pos[0] - top.pos[0]):
                raise _PositionMismatch("bashlex read a substitution inside single quotes")
        if k == "commandsubstitution":
            kind = "backtick" if src[p.pos[0]:p.pos[0] + 1] == "`" else "cmdsubst"
            subs.append((kind, _bl_seq([p.command], src)))
        elif k == "processsubstitution":
            kind = "procsubst-in" if src[p.pos[0]:p.pos[0] + 1] == "<" else "procsubst-out"
            subs.append((kind, _bl_seq([p.command], src)))
        else:
            _bl_collect_subs(p, src, subs, top)


def _bl_redir(node, src: str) -> _lx.Redir:
    op = node.type
    fd = node.input if isinstance(getattr(node, "input", None), int) else None
    out = node.output
    if isinstance(out, int) or isinstance(out, str):
        r = _lx.Redir(op, fd, None, int(out) if isinstance(out, int) or out.isdigit() else -1)
        return r
    r = _lx.Redir(op, fd, _bl_word(out, src))
    hd = getattr(node, "heredoc", None)
    if hd is not None and op in ("<<", "<<-"):
        _conv["heredocs"].append((node.pos[1], hd.pos[1]))
        raw = r.target.raw
        r.quoted = any(ch in raw for ch in "'\"\\")
        r.delim = raw.replace("'", "").replace('"', "").replace("\\", "")
        body = hd.value
        k = body.rfind("\n")
        if k >= 0 and body[k + 1:].strip("\t") == r.delim:
            body = body[:k + 1]
        elif body.strip("\t") == r.delim:
            body = ""
        r.heredoc = body
    return r


def _bl_flat(parts) -> list:
    out = []
    for p in parts:
        if p.kind == "reservedword":
            if isinstance(p.word, list):
                out.extend(_bl_flat(p.word))
            continue
        out.append(p)
    return out


def _bl_count_commands(node, seen: set | None = None, depth: int = 0) -> int:
    """Every distinct CommandNode in a bashlex tree (to check nothing was dropped;
    a node reachable twice, like a function's body, counts once)."""
    if seen is None:
        seen = set()
    if id(node) in seen:
        return 0
    seen.add(id(node))
    if depth > 500:
        raise _PositionMismatch("bashlex tree too deep")
    n = 1 if getattr(node, "kind", None) == "command" else 0
    for v in vars(node).values():
        if isinstance(v, list):
            for x in v:
                if hasattr(x, "kind"):
                    n += _bl_count_commands(x, seen, depth + 1)
        elif hasattr(v, "kind") and hasattr(v, "__dict__"):
            n += _bl_count_commands(v, seen, depth + 1)
    return n


def _bl(node, src: str):
    k = node.kind
    text = src[node.pos[0]:node.pos[1]] if hasattr(node, "pos") else ""
    if k == "command":
        _conv["cmds"].append(node.pos[0])
        first = next((p for p in node.parts if p.kind in ("word", "assignment")), None)
        if first is not None and first.kind == "word":
            raw0 = src[first.pos[0]:first.pos[1]]
            b = raw0.find("[")
            if b > 0 and raw0[:b].isidentifier() and ("]=" in raw0 or "]+=" in raw0):
                raise _PositionMismatch("bashlex read NAME[i]=value as a command")
        assigns, words, redirs = [], [], []
        for p in node.parts:
            if p.kind == "assignment" and not words:
                assigns.append(_bl_word(p, src))
            elif p.kind in ("word", "assignment"):
                words.append(_bl_word(p, src))
            elif p.kind == "redirect":
                redirs.append(_bl_redir(p, src))
        return _lx.Cmd(assigns, words, redirs, text)
    if k == "pipeline":
        cmds = [_bl(p, src) for p in node.parts if p.kind not in ("pipe", "reservedword")]
        return cmds[0] if len(cmds) == 1 else _lx.Pipe(cmds, text)
    if k == "list":
        return _lx.Seq(_bl_items(node, src), text)
    if k == "compound":
        redirs = [_bl_redir(r, src) for r in (getattr(node, "redirects", None) or [])]
        lst = node.list
        first = lst[0] if lst else None
        if first is not None and first.kind == "reservedword" and first.word in ("{", "("):
            kind = "brace" if first.word == "{" else "subshell"
            return _lx.Group(kind, _bl_seq(lst, src), redirs, text)
        inner = [p for p in lst if p.kind != "reservedword"]
        if len(inner) == 1:
            got = _bl(inner[0], src)
            if hasattr(got, "redirs"):
                got.redirs = list(got.redirs) + redirs
            return got
        return _lx.Group("brace", _bl_seq(lst, src), redirs, text)
    if k == "if":
        # bashlex wraps a third and later elif in a reservedword node whose
        # `word` is the list of nodes: flatten it
        parts = [_bl_seq([p], src) for p in _bl_flat(node.parts)]
        return _lx.If(parts, [], text)
    if k in ("while", "until"):
        seqs = [p for p in node.parts if p.kind != "reservedword"]
        cond = _bl_seq(seqs[:1], src)
        body = _bl_seq(seqs[1:], src)
        return _lx.Loop(k, cond, [], body, [], text)
    if k == "for":
        words, body, seen_in, seen_do, var = [], [], False, False, None
        for p in node.parts:
            if p.kind == "reservedword":
                if p.word == "in":
                    seen_in = True
                elif p.word == "do":
                    seen_do = True
                continue
            if seen_do:
                body.append(p)
            elif seen_in and p.kind == "word":
                words.append(_bl_word(p, src))
            elif not seen_in and p.kind == "word" and var is None:
                var = p.word if p.word.isidentifier() else None
        return _lx.Loop("for", None, words, _bl_seq(body, src), [], text, var if seen_in else None)
    if k == "function":
        name = node.name.word if hasattr(node, "name") else ""
        return _lx.Func(name, _bl(node.body, src), text)
    raise ValueError(f"bashlex node kind {k!r} not handled")


# ---------------------------------------------------------------------------
# the walker


class _OutOfTime(Exception):
    pass


class _Ctx:
    __slots__ = ("via", "bg", "depth", "wrappers", "env", "script", "redirs")

    def __init__(self, via=(), bg=0, depth=0, wrappers=(), env=None, script=None, redirs=()) -> None:
        self.via = via
        self.bg = bg
        self.depth = depth
        self.wrappers = wrappers
        self.env = env or {}
        self.script = script
        self.redirs = redirs          # redirections of enclosing compound commands

    def sub(self, label: str | None = None, *, bg: int | None = None, depth: int | None = None,
            wrapper: str | None = None, env: dict | None = None, script: str | None = None,
            redirs: tuple | None = None) -> "_Ctx":
        return _Ctx(self.via + (label,) if label else self.via,
                    self.bg if bg is None else bg,
                    self.depth if depth is None else depth,
                    self.wrappers + (wrapper,) if wrapper else self.wrappers,
                    self.env if env is None else env,
                    self.script if script is None else script,
                    self.redirs if redirs is None else redirs)


_WRAPPER_LABELS = {"nohup", "setsid", "sudo", "doas", "timeout", "xargs", "watch", "parallel",
                   "flock", "srun", "systemd-run"}
# options that take a value, per wrapper (short and long forms)
_OPT_ARGS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "time": {"-f", "--format", "-o", "--output"},
    "exec": {"-a"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host",
             "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U",
             "--other-user", "-R", "--chroot"},
    "doas": {"-u", "-C"},
    "setsid": set(),
    "stdbuf": {"-i", "--input", "-o", "--output", "-e", "--error"},
    "ionice": {"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"},
    "chrt": {"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"},
    "taskset": set(),
    "xargs": {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-n", "--max-args",
              "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "--eof"},
    "watch": {"-n", "--interval", "-d", "--differences", "-q", "--equexit", "--chgexit", "-s"},
    "parallel": {"-j", "--jobs", "-P", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter",
                 "-I", "--colsep", "-C", "--joblog", "--results", "--tmpdir", "--timeout", "-L",
                 "-n", "-N", "--halt", "--memfree", "--load", "--delay", "--workdir", "--wd",
                 "-E", "--tag-string", "--retries", "--sshloginfile", "--basefile", "--env"},
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"},
    "srun": {"-n", "--ntasks", "-c", "--cpus-per-task", "-N", "--nodes", "-p", "--partition",
             "-t", "--time", "--mem", "-J", "--job-name", "-w", "--nodelist", "-o", "--output",
             "-e", "--error", "-A", "--account", "--gres", "-G", "--gpus", "--mem-per-cpu", "-D",
             "--chdir", "-q", "--qos"},
    "systemd-run": {"-p", "--property", "-u", "--unit", "--slice", "-E", "--setenv",
                    "--description", "-M", "--machine", "--uid", "--gid", "--nice",
                    "--working-directory", "--on-active", "--on-boot", "--on-startup",
                    "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property",
                    "-H", "--host"},
    # swarmgate's own runners (SPEC §5)
    "run-with-memory-cap": {"--label", "--timeout", "--wait", "--backend"},
    "host-dispatch": {"--mem", "--expect-duration", "--label", "--backend", "--threads"},
    "multi-host-run": {"--memory-cap", "--label", "--fetch", "--host", "--timeout"},
    "gpu-quiesce-run": set(),
    "detached-run": {"--label", "--wall-clock"},
}
_RUNNERS = ("run-with-memory-cap", "host-dispatch", "multi-host-run", "gpu-quiesce-run",
            "detached-run")
# every command name dispatch() does more with than yield it
_SPECIAL = frozenset(SHELLS) | frozenset(_OPT_ARGS) | frozenset(_RUNNERS) | frozenset({
    "break", "exit", "return", "source", ".", "trap", "eval", "cd", "pushd", "export", "declare",
    "typeset", "local", "readonly", "unset", "read", "mapfile", "readarray", "find", "make", "gmake",
    "command", "builtin", "su", "ssh", "uv", "poetry", "pipenv", "pdm", "hatch", "rye",
    "nix-shell", "nix", "script", "tmux", "screen", "swarmgate", "time", "nohup", "exec",
    "alias", "busybox", "printf", "set"})
_INTERP_PREFIXES = tuple(INTERPRETERS)
# commands that do not create files (a missing script after them still cannot run)
_NO_FILE_CREATION = frozenset({
    "cd", "pushd", "popd", "export", "set", "shopt", "unset", "echo", "printf", "true", "false",
    ":", "test", "[", "[[", "ls", "pwd", "cat", "head", "tail", "grep", "rg", "which", "type",
    "command", "env", "nice", "nohup", "timeout", "time", "sudo", "source", ".", "wc", "sort",
    "date", "sleep", "chmod", "chown", "stat", "file", "id", "whoami", "uname", "hostname",
    "alias", "read", "wait", "kill", "jobs", "trap", "declare", "local", "readonly"})


def _opt_value(args: list, short: str, longs: tuple = ()) -> str | None:
    """The value of option -X (also inside a getopt cluster: -qc VALUE, -cVALUE) or --long[=V]."""
    n = len(args)
    for k, a in enumerate(args):
        if a == "--":
            return None
        if longs and a.startswith(longs):
            if "=" in a:
                return a.split("=", 1)[1]
            if a in longs and k + 1 < n:
                return args[k + 1]
        if a.startswith("-") and not a.startswith("--") and short in a[1:]:
            j = a.index(short, 1)
            if j < len(a) - 1:
                return a[j + 1:]
            if k + 1 < n:
                return args[k + 1]
    return None


def _skip_opts(args: list, i: int, takes: set) -> int:
    """Skip options starting at args[i]; return index of the first operand."""
    n = len(args)
    while i < n:
        a = args[i]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-":
            return i
        if "=" in a and a.startswith("--"):
            i += 1
            continue
        if a in takes:
            i += 2
            continue
        if not a.startswith("--") and len(a) > 2:
            # getopt cluster: the first letter that takes a value takes the rest
            # of the cluster (-n5) or, when it is the last letter, the next word (-dmS name)
            for k in range(1, len(a)):
                if "-" + a[k] in takes:
                    i += 2 if k == len(a) - 1 else 1
                    break
            else:
                i += 1
            continue
        i += 1
    return i


class _Walker:
    def __init__(self, an: Analysis, cwd: str, max_depth: int, deadline: float,
                 max_script_bytes: int, patterns) -> None:
        self.an = an
        self.cwd: str | None = cwd
        self.max_depth = max_depth
        self.deadline = deadline
        self.max_script_bytes = max_script_bytes
        self.patterns = [p for p in patterns if isinstance(p, str) and p.split()]
        self.vars: dict[str, str | None] = _base_vars(cwd)
        self.positional: list[str] | None = []      # the Bash tool's shell has no arguments
        self._script_args: tuple | None = None
        self._set_positional([], [])
        self.funcs: dict[str, tuple] = {}        # name -> (body node, ctx at definition)
        self.called: set[str] = set()
        self.active_funcs: list[int] = []
        self.func_calls = 0
        self.seen_scripts: set[str] = set()
        self.written: dict[str, tuple | None] = {}
        self.collect: list[list] = []            # loop command lists being filled
        self.loops_open: list[Loop] = []
        self.nest = 0
        self.ticks = 0
        self._io: tuple = ([], [], None)
        self.stdin_stack: list[tuple] = []
        self.makefiles: dict[str, tuple] = {}
        self.unknown_dirs = 0
        self.parser = "auto"
        self.aliases: dict[str, str | None] = {}
        self.expanded_loops = 0
        self.active_aliases: list[str] = []

    # -- bookkeeping ---------------------------------------------------------
    def tick(self) -> None:
        self.ticks += 1
        if (self.ticks & 15) == 0 and time.monotonic() > self.deadline:
            raise _OutOfTime()

    def unverifiable(self, reason: str, text: str) -> None:
        for u in self.an.unverifiable:
            if u.reason == reason and u.text == text:
                return
        self.an.unverifiable.append(Unverifiable(reason, text[:500]))

    def problem(self, msg: str) -> None:
        if msg not in self.an.problems:
            self.an.problems.append(msg)

    # -- nodes ---------------------------------------------------------------
    def walk(self, node, ctx: _Ctx, feed=None) -> None:
        self.tick()
        self.nest += 1
        try:
            if self.nest > _MAX_TREE_NEST:
                self.problem(f"tree nested deeper than {_MAX_TREE_NEST} levels")
                self.unverifiable("command nested too deeply to read", getattr(node, "text", ""))
                return
            t = type(node)
            if t is not _lx.Cmd and getattr(node, "redirs", None):
                # `{ ...; } > f`, `while ...; done < f`: the inner commands inherit them
                outer = self._redirects(node.redirs)
                for r in outer:
                    if r.writes and "$" not in r.target:
                        p = self._abspath(r.target)
                        if p is not None:
                            self.written[p] = None
                ctx = ctx.sub(None, redirs=ctx.redirs + tuple(outer))
            if t is _lx.Cmd:
                self.walk_cmd(node, ctx, feed)
            elif t is _lx.Seq:
                self.walk_seq(node, ctx)
            elif t is _lx.Pipe:
                self.walk_pipe(node, ctx)
            elif t is _lx.Group:
                self.walk_group(node, ctx)
            elif t is _lx.If:
                self.walk_redir_subs(node.redirs, ctx)
                for p in node.parts:
                    self.walk(p, ctx.sub("if"))
            elif t is _lx.Loop:
                self.walk_loop(node, ctx)
            elif t is _lx.Case:
                if node.word is not None:
                    self.walk_word_subs(node.word, ctx)
                self.walk_redir_subs(node.redirs, ctx)
                for b in node.bodies:
                    self.walk(b, ctx.sub("case"))
            elif t is _lx.Func:
                self.funcs[node.name] = (node.body, ctx)
            elif t is _lx.Test:
                for w in node.words:
                    self.walk_word_subs(w, ctx)
        finally:
            self.nest -= 1

    def walk_seq(self, seq: _lx.Seq, ctx: _Ctx) -> None:
        items = seq.items
        if not items:
            return
        multi = len(items) > 1
        # group and-or chains: a `&` or `;` ends a chain and applies to all of it
        chain: list = []
        for node, term in items:
            chain.append(node)
            if term in ("&&", "||"):
                continue
            self._walk_chain(chain, term, ctx, multi)
            chain = []
        if chain:
            self._walk_chain(chain, "", ctx, multi)

    def _walk_chain(self, chain: list, term: str, ctx: _Ctx, multi: bool) -> None:
        sub = ctx.sub("list") if multi and "list" not in ctx.via[-1:] else ctx
        if term == "&":
            text = " && ".join(getattr(n, "text", "") for n in chain)
            if ctx.bg > 0:
                self.an.nested_background.append((text + " &").strip())
            sub = sub.sub(None, bg=ctx.bg + 1)
            saved = (dict(self.vars), self.cwd)   # a background job runs in a subshell
            for n in chain:
                self.walk(n, sub)
            self.vars, self.cwd = saved
            return
        for n in chain:
            self.walk(n, sub)

    def walk_pipe(self, pipe: _lx.Pipe, ctx: _Ctx) -> None:
        sub = ctx.sub("pipeline")
        prev = None
        saved = (dict(self.vars), self.cwd)
        for c in pipe.cmds:
            self.vars, self.cwd = dict(saved[0]), saved[1]   # each element is a subshell
            self.walk(c, sub, feed=prev)
            prev = c
        self.vars, self.cwd = saved

    def walk_group(self, g: _lx.Group, ctx: _Ctx) -> None:
        self.walk_redir_subs(g.redirs, ctx)
        if g.kind == "subshell":
            saved = (dict(self.vars), self.cwd)
            self.walk(g.body, ctx.sub("subshell"))
            self.vars, self.cwd = saved
        else:
            self.walk(g.body, ctx.sub("group"))

    def walk_loop(self, node: _lx.Loop, ctx: _Ctx) -> None:
        loop = Loop(node.kind if node.kind != "select" else "for", node.text)
        self.an.loops.append(loop)
        self.walk_redir_subs(node.redirs, ctx)
        sub = ctx.sub(f"loop:{loop.kind}")
        self.collect.append(loop.condition_commands)
        try:
            if node.cond is not None:
                self.walk(node.cond, sub)
            for w in node.words:
                self.walk_word_subs(w, sub)
        finally:
            self.collect.pop()
        if node.kind in ("for", "select") and node.words:
            pass
        values = self._loop_values(node)
        self.collect.append(loop.body_commands)
        self.loops_open.append(loop)
        try:
            if not values:
                # unknown values (or none we can see): the body is read once
                if node.var:
                    self.vars[node.var] = None
                self.walk(node.body, sub)
            else:
                # a short constant list: the body is read once per value
                self.expanded_loops += 1
                try:
                    for v in values:
                        self.vars[node.var] = v
                        self.walk(node.body, sub)
                finally:
                    self.expanded_loops -= 1
        finally:
            self.loops_open.pop()
            self.collect.pop()

    def _loop_values(self, node) -> list | None:
        """The values of ``for VAR in WORDS`` when constant (globs expanded in
        the known cwd) and at most _MAX_LOOP_VALUES; else None."""
        if node.kind not in ("for", "select") or not node.var or not node.words:
            return None
        if self.expanded_loops >= 2:
            return None   # nested value loops would multiply: read inner ones once
        out: list[str] = []
        for v, last, w in zip(*self._expand_words(node.words), node.words):
            if last >= 0:
                return None
            if any(c in v for c in "*?[") and not any(q in w.raw for q in "'\"\\"):
                if not self._known_dir(self.cwd):
                    return None
                import glob
                hits = sorted(glob.glob(v if os.path.isabs(v) else os.path.join(self.cwd, v)))
                if hits and not os.path.isabs(v):
                    hits = [os.path.relpath(h, self.cwd) for h in hits]
                out.extend(hits or [v])
            else:
                out.append(v)
            if len(out) > _MAX_LOOP_VALUES:
                return None
        return out

    def walk_word_subs(self, w: _lx.Word, ctx: _Ctx) -> None:
        for kind, seq in w.subs:
            label = "procsubst" if kind.startswith("procsubst") else kind
            saved = (dict(self.vars), self.cwd)
            self.walk(seq, ctx.sub(label))
            self.vars, self.cwd = saved

    def walk_redir_subs(self, redirs: list, ctx: _Ctx) -> None:
        for r in redirs:
            if r.target is not None:
                self.walk_word_subs(r.target, ctx)
            if r.heredoc and not r.quoted and ("$(" in r.heredoc or "`" in r.heredoc):
                self._heredoc_expansions(r.heredoc, ctx)

    def _heredoc_expansions(self, body: str, ctx: _Ctx) -> None:
        """An unquoted heredoc's body undergoes $( ) and backtick substitution."""
        p = _lx.Parser(body)
        subs = p.scan_expansions()
        self.walk_word_subs(_lx.Word(body, subs), ctx.sub("heredoc"))

    # -- simple commands -----------------------------------------------------
    def _expand_words(self, words: list) -> tuple[list, list]:
        vals, dyn = [], []
        for w in words:
            if w.raw in ('"$@"', "$@", "$*", '"${@}"', "${@}") and self.positional is not None:
                vals.extend(self.positional)   # "$@": one word per argument
                dyn.extend([-1] * len(self.positional))
                continue
            raw = w.raw
            v, last = expand(raw, self.vars, self._const_subst if w.subs else None)
            if ("$" in raw and (" " in v or "\t" in v or "\n" in v)
                    and "'" not in raw and '"' not in raw and "\\" not in raw):
                # an unquoted expansion is split into words (C="cargo test"; $C --workspace)
                parts = v.split()
                vals.extend(parts)
                dyn.extend([-1 if last < 0 else len(p) for p in parts])
                continue
            vals.append(v)
            dyn.append(last)
        return vals, dyn

    def _const_subst(self, inner: str) -> str | None:
        """The output of a command substitution whose result is certain:
        ``pwd``, ``dirname X``, ``basename X``, ``cd X && pwd``,
        ``git rev-parse --show-toplevel`` (X constant). Else None."""
        t = inner.strip()
        if t == "pwd" or t == "pwd -P":
            return self.cwd if self._known_dir(self.cwd) else None
        if t.startswith(("dirname ", "basename ")):
            arg = t.split(None, 1)[1].strip()
            v, last = expand(arg, self.vars, self._const_subst)
            if last >= 0 or any(c in v for c in " \t\n;|&<>"):
                return None
            return os.path.dirname(v) or "." if t.startswith("dirname") else os.path.basename(v)
        for sep in ("&&", ";"):
            if sep in t:
                head, _, tail = t.partition(sep)
                head, tail = head.strip(), tail.strip()
                for junk in (">/dev/null", "> /dev/null", "2>/dev/null", "2> /dev/null", "1>/dev/null"):
                    head = head.replace(junk, "").strip()
                if head.startswith("cd ") and tail in ("pwd", "pwd -P") and self._known_dir(self.cwd):
                    v, last = expand(head[3:].strip(), self.vars, self._const_subst)
                    if last >= 0 or not v:
                        return None
                    return os.path.normpath(os.path.join(self.cwd, os.path.expanduser(v)))
                return None
        if t == "git rev-parse --show-toplevel" and self._known_dir(self.cwd):
            d = self.cwd
            while True:
                if os.path.exists(os.path.join(d, ".git")):
                    return d
                up = os.path.dirname(d)
                if up == d:
                    return None
                d = up
        return None

    def walk_cmd(self, c: _lx.Cmd, ctx: _Ctx, feed) -> None:
        # substitutions run first (word expansion), in a subshell each
        for w in c.assigns:
            self.walk_word_subs(w, ctx)
        for w in c.words:
            self.walk_word_subs(w, ctx)
        self.walk_redir_subs(c.redirs, ctx)
        assigns: dict[str, str] = {}
        for w in c.assigns:
            v, last = expand(w.raw, self.vars, self._const_subst if w.subs else None)
            k = v.find("=")
            name, val = v[:k].rstrip("+"), v[k + 1:]
            assigns[name] = val
            if not c.words:
                kr = w.raw.find("=")
                array = kr >= 0 and w.raw[kr + 1:kr + 2] == "("
                self.vars[name] = val if last < 0 and not array else None
        redirs = self._redirects(c.redirs)
        if not c.words:
            self._note_writes(None, [], redirs, c, feed)
            return
        vals, last = self._expand_words(c.words)
        env = dict(ctx.env)
        env.update(assigns)
        self.dispatch(vals, last, env, redirs, c.redirs, ctx, c.text, feed, c)

    def _redirects(self, redirs: list) -> list:
        out = []
        for r in redirs:
            if r.target is None:
                tgt = str(r.dup) if r.dup is not None and r.dup >= 0 else "-"
            else:
                tgt = expand(r.target.raw, self.vars, self._const_subst if r.target.subs else None)[0]
            if r.op in ("<<", "<<-"):
                tgt = r.delim
            out.append(Redirect(r.op, tgt, r.fd, r.heredoc if r.op in ("<<", "<<-") else None,
                                r.quoted))
        return out

    def emit(self, words, last, env, redirs, ctx: _Ctx, text: str) -> SimpleCommand:
        dyn = [x >= 0 for x in last]
        if ctx.redirs:
            redirs = list(ctx.redirs) + list(redirs)
        sc = SimpleCommand(list(words), dict(env), redirs, ctx.via, ctx.bg, ctx.wrappers, text,
                           self.cwd if self._known_dir(self.cwd) else None, dyn, ctx.script)
        self.an.commands.append(sc)
        for lst in self.collect:
            lst.append(sc)
        return sc

    def dispatch(self, words: list, last: list, env: dict, redirs: list, raw_redirs: list,
                 ctx: _Ctx, text: str, feed, node) -> None:
        """Yield the command, then follow whatever it runs."""
        self.tick()
        if not words:
            return   # "$@" with no arguments: nothing runs
        w0 = words[0]
        if last[0] >= 0 and w0.rfind("/") < last[0]:
            self.emit(words, last, env, redirs, ctx, text)
            self.unverifiable(f"the command name is dynamic ({w0}): it cannot be read statically",
                              text)
            return
        name = command_name(w0)
        sc = self.emit(words, last, env, redirs, ctx, text)
        self._io = (redirs, raw_redirs, feed)
        args = words[1:]
        largs = last[1:]
        self._note_writes(sc, args, redirs, node, feed)
        if (name not in _SPECIAL and name not in self.funcs and name not in self.aliases and "/" not in w0
                and not name.startswith(_INTERP_PREFIXES)):
            return   # an ordinary command: nothing more runs through it

        # control flow inside loops
        if name in ("break", "exit", "return") and self.loops_open:
            if name == "break":
                levels = int(args[0]) if args and args[0].isdigit() else 1
                for lp in self.loops_open[-levels:]:
                    lp.has_break = True
            else:
                for lp in self.loops_open:
                    lp.has_break = True
            return

        if name == "alias":
            for a, la in zip(args, largs):
                k = a.find("=")
                if k > 0:
                    self.aliases[a[:k]] = a[k + 1:] if la < 0 else None
            return
        if name in self.aliases and w0 == name and name not in self.active_aliases:
            # an alias defined earlier in this text (bash expands it when
            # expand_aliases is on; judged as if it were)
            value = self.aliases[name]
            if value is None:
                self.unverifiable(f"alias {name} has a value that cannot be read statically", text)
                return
            self.active_aliases.append(name)
            try:
                self._nested_text(value + " " + " ".join(_shell_quote(a) for a in args),
                                  ctx.sub(f"alias:{name}"), f"alias {name}", text)
            finally:
                self.active_aliases.pop()
            return
        if name == "busybox" and args:
            return self._inner_now(args, largs, 0, env, ctx.sub(None, wrapper="busybox"), text)

        # shell functions defined in this command
        if name in self.funcs and w0 == name:
            body, _ = self.funcs[name]
            self.called.add(name)
            # recursion stops at a body already being walked; a body is walked
            # again per call site, up to _MAX_FUNC_CALLS calls in all
            if id(body) not in self.active_funcs and self.func_calls < _MAX_FUNC_CALLS:
                self.func_calls += 1
                self.active_funcs.append(id(body))
                saved_pos = (self.positional, {k: v for k, v in self.vars.items()
                                               if k.isdigit() and k != "0" or k in "#@*"})
                self._set_positional(args, largs)
                try:
                    self.walk(body, ctx.sub(f"function:{name}"))
                finally:
                    self.active_funcs.pop()
                    self.positional = saved_pos[0]
                    for k in [k for k in self.vars if k.isdigit() and k != "0" or k in "#@*"]:
                        del self.vars[k]
                    self.vars.update(saved_pos[1])
            return

        if name in SHELLS:
            self._shell(name, args, largs, env, redirs, raw_redirs, ctx, text, feed)
            return
        if name in ("source", "."):
            if args:
                self._script_args = (args[1:], largs[1:]) if len(args) > 1 else None
                self._script_arg(args[0], largs[0], env, ctx, text, "source", share=True)
            return
        if name == "trap":
            # trap 'CMDS' SIGNAL...: CMDS run later, on the signal or at exit
            a = [x for x in args if x != "--"]
            if len(a) >= 2 and a[0] not in ("-", "") and not a[0].startswith("-"):
                self._nested_text(a[0], ctx.sub("trap"), "trap", text)
            return
        if name == "eval":
            if args:
                self._nested_text(" ".join(args), ctx.sub("eval"), "eval", text)
            return
        if name in ("cd", "pushd"):
            self._cd(args, largs)
            return
        if name in ("export", "declare", "typeset", "local", "readonly"):
            for a, la in zip(args, largs):
                k = a.find("=")
                if k > 0 and a[:k].isidentifier():
                    self.vars[a[:k]] = a[k + 1:] if la < 0 else None
            return
        if name == "printf" and len(args) >= 3 and args[0] == "-v":
            # printf -v NAME FORMAT ARGS: an assignment
            var, fmt = args[1], args[2]
            if var.isidentifier():
                known = all(x < 0 for x in largs[2:])
                if known and "%" not in fmt.replace("%%", ""):
                    self.vars[var] = _c_unescape(fmt).replace("%%", "%")
                elif known and fmt in ("%s", "%b") and len(args) == 4:
                    self.vars[var] = args[3]
                else:
                    self.vars[var] = None
            return
        if name == "set" and "--" in args:
            k = args.index("--")
            self._set_positional(args[k + 1:], largs[k + 1:])
            return
        if name == "unset":
            for a in args:
                self.vars.pop(a, None)
            return
        if name in ("read", "mapfile", "readarray"):
            for a in args:
                if a.isidentifier():
                    self.vars[a] = None
            return
        if name == "find":
            self._find(args, largs, env, ctx, text)
            return
        if name in ("make", "gmake"):
            self._make(args, largs, ctx, text)
            return
        inner = self._wrapped(name, args, largs, env, ctx, text, feed)
        if inner is not None:
            return
        for prefix, opts in INTERPRETERS.items():
            if name == prefix or (name.startswith(prefix) and name[len(prefix):].replace(".", "").isdigit()):
                if prefix in ("python", "pypy"):
                    # `python -m pytest ...` runs the module as a command: yield it as one
                    i = _skip_opts(args, 0, {"-W", "-X", "-Q"})
                    if 0 < i <= len(args) and args[i - 1] == "-m" and i < len(args):
                        self._io = (redirs, raw_redirs, feed)
                        self._inner(args, largs, i, env, ctx.sub("python -m", wrapper=name), text)
                        return
                    k = next((j for j, a in enumerate(args[:i]) if a == "-m"), None)
                    if k is not None and k + 1 < len(args):
                        self._io = (redirs, raw_redirs, feed)
                        self._inner(args, largs, k + 1, env, ctx.sub("python -m", wrapper=name), text)
                        return
                self._interpreter(name, args, opts, raw_redirs, text)
                return
        if "/" in w0:
            self._script_args = (args, largs)
            self._maybe_script(w0, args, env, ctx, text)

    # -- wrappers ------------------------------------------------------------
    def _wrapped(self, name, args, largs, env, ctx, text, feed) -> bool | None:
        """Unwrap a wrapper command; True when handled, None when not a wrapper."""
        if name == "env":
            i = 0
            env2 = dict(env)
            n = len(args)
            while i < n:
                a = args[i]
                if a in ("-S", "--split-string") and i + 1 < n:
                    self._nested_text(args[i + 1] + " " + " ".join(args[i + 2:]),
                                      ctx.sub("env", wrapper="env"), "env -S", text)
                    return True
                if a == "--":
                    i += 1
                    break
                if a.startswith("-"):
                    i += 2 if a in _OPT_ARGS["env"] else 1
                    continue
                k = a.find("=")
                if k > 0:
                    env2[a[:k]] = a[k + 1:]
                    i += 1
                    continue
                break
            while i < n and "=" in args[i] and args[i].split("=", 1)[0].isidentifier():
                env2[args[i].split("=", 1)[0]] = args[i].split("=", 1)[1]
                i += 1
            return self._inner(args, largs, i, env2, ctx.sub("env", wrapper="env"), text)
        if name in ("nice", "nohup", "setsid", "stdbuf", "ionice", "exec", "builtin", "time",
                    "doas", "flock"):
            takes = _OPT_ARGS.get(name, set())
            i = _skip_opts(args, 0, takes)
            if name == "nice" and args and args[0].startswith("-") and args[0][1:].isdigit():
                i = _skip_opts(args, 1, takes)
            if name == "ionice" and any(a in ("-p", "--pid", "-P", "--pgid", "-u", "--uid") for a in args[:i]):
                return True
            if name == "flock":
                for j, a in enumerate(args[:i]):
                    if a in ("-c", "--command") and j + 1 < len(args):
                        self._nested_text(args[j + 1], ctx.sub("flock", wrapper="flock"), "flock -c", text)
                        return True
                i += 1   # the lock file
                if i < len(args) and args[i] in ("-c", "--command") and i + 1 < len(args):
                    self._nested_text(args[i + 1], ctx.sub("flock", wrapper="flock"), "flock -c", text)
                    return True
            label = name if name in _WRAPPER_LABELS else None
            bg = None
            if name == "setsid" and any(a in ("-f", "--fork") or (a.startswith("-") and not a.startswith("--") and "f" in a)
                                        for a in args[:i]):
                bg = self._detach(ctx, text)   # setsid -f forks into the background
            return self._inner(args, largs, i, env, ctx.sub(label, wrapper=name, bg=bg), text)
        if name == "command":
            i = 0
            while i < len(args) and args[i].startswith("-") and args[i] != "--":
                if "v" in args[i] or "V" in args[i]:
                    return True   # lookup only: nothing runs
                i += 1
            if i < len(args) and args[i] == "--":
                i += 1
            return self._inner(args, largs, i, env, ctx.sub(None, wrapper="command"), text)
        if name in ("sudo", "doas"):
            takes = _OPT_ARGS[name]
            i = _skip_opts(args, 0, takes)
            env2 = dict(env)
            while i < len(args) and "=" in args[i] and args[i].split("=", 1)[0].isidentifier():
                k, v = args[i].split("=", 1)
                env2[k] = v
                i += 1
            bg = None
            if any(a in ("-b", "--background") or (a.startswith("-") and not a.startswith("--") and "b" in a)
                   for a in args[:i]):
                bg = self._detach(ctx, text)   # sudo -b runs it in the background
            return self._inner(args, largs, i, env2, ctx.sub(name, wrapper=name, bg=bg), text)
        if name == "timeout":
            i = _skip_opts(args, 0, _OPT_ARGS["timeout"])
            return self._inner(args, largs, i + 1, env, ctx.sub("timeout", wrapper="timeout"), text)
        if name in ("chrt", "taskset"):
            if any(a in ("-p", "--pid") or (a.startswith("-") and not a.startswith("--") and "p" in a)
                   for a in args[:2]):
                return True
            i = _skip_opts(args, 0, _OPT_ARGS[name])
            return self._inner(args, largs, i + 1, env, ctx.sub(None, wrapper=name), text)
        if name == "xargs":
            i = _skip_opts(args, 0, _OPT_ARGS["xargs"])
            if i >= len(args):
                return True   # xargs without a command runs echo
            replace = any(o.startswith(("-I", "-i", "--replace")) for o in args[:i])
            if not replace:
                # the words it reads are appended: known when the input is literal,
                # else one dynamic placeholder word ($XARGS_INPUT)
                extra = self._input_words()
                if extra is None:
                    args, largs = args + ["$XARGS_INPUT"], largs + [len("$XARGS_INPUT")]
                else:
                    args, largs = args + extra[:64], largs + [-1] * len(extra[:64])
            return self._inner(args, largs, i, env, ctx.sub("xargs", wrapper="xargs"), text)
        if name == "watch":
            i = _skip_opts(args, 0, _OPT_ARGS["watch"])
            if i < len(args):
                # watch hands its arguments to `sh -c` joined by spaces (unless -x)
                if any(a in ("-x", "--exec") for a in args[:i]):
                    return self._inner(args, largs, i, env, ctx.sub("watch", wrapper="watch"), text)
                self._nested_text(" ".join(args[i:]), ctx.sub("watch", wrapper="watch"), "watch", text)
            return True
        if name == "parallel":
            i = _skip_opts(args, 0, _OPT_ARGS["parallel"])
            rest = args[i:]
            sep = next((k for k, a in enumerate(rest) if a in (":::", "::::", ":::+", "::::+")), len(rest))
            cmd_words = rest[:sep]
            sub = ctx.sub("parallel", wrapper="parallel")
            if cmd_words and sep < len(rest) and rest[sep] == ":::":
                # one job per argument: {} replaced, or the argument appended
                for a in rest[sep + 1:sep + 17]:
                    if a.startswith(":::"):
                        break
                    words = [w.replace("{}", a) for w in cmd_words]
                    if not any("{}" in w for w in cmd_words):
                        words.append(a)
                    self._nested_text(" ".join(words), sub, "parallel", text)
            elif cmd_words:
                self._nested_text(" ".join(cmd_words + ["$PARALLEL_INPUT"]), sub, "parallel", text)
            elif sep < len(rest) and rest[sep] == ":::":
                # no command: each argument is a command line
                for a in rest[sep + 1:]:
                    if a.startswith(":::"):
                        break
                    self._nested_text(a, sub, "parallel", text)
            else:
                self.unverifiable("parallel reads the commands it runs from its input", text)
            return True
        if name == "srun" or name == "systemd-run":
            i = _skip_opts(args, 0, _OPT_ARGS[name])
            return self._inner(args, largs, i, env, ctx.sub(name, wrapper=name), text)
        if name in _RUNNERS:
            a = list(args)
            if name == "detached-run":
                if not a or a[0] != "start":
                    return True
                a = a[1:]
                off = len(args) - len(a)
            else:
                off = 0
            if "--" in a:
                i = a.index("--") + 1
            else:
                i = _skip_opts(a, 0, _OPT_ARGS[name])
                if name == "run-with-memory-cap" and i < len(a):
                    i += 1   # the CAP
            return self._inner(args, largs, i + off, env, ctx.sub(name, wrapper=name), text)
        if name == "su":
            code = _opt_value(args, "c", ("--command",))
            if code is not None:
                self._nested_text(code, ctx.sub("su", wrapper="su"), "su -c", text)
            return True
        if name == "ssh":
            # ssh [opts] HOST [COMMAND...]: the command runs on HOST through its shell
            i = _skip_opts(args, 0, {"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L",
                                     "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w"})
            if i + 1 < len(args):
                self._nested_text(" ".join(args[i + 1:]), ctx.sub(f"ssh:{args[i]}", wrapper="ssh"),
                                  "ssh", text)
            return True
        if name in ("uv", "poetry", "pipenv", "pdm", "hatch", "rye") and args[:1] == ["run"]:
            i = _skip_opts(args, 1, {"--with", "--python", "-p", "--env", "-e", "--directory",
                                     "--project", "--package", "--extra", "--group"})
            return self._inner(args, largs, i, env, ctx.sub(f"{name} run", wrapper=name), text)
        if name in ("nix-shell", "nix") :
            for k, a in enumerate(args):
                if a in ("--run", "--command", "-c") and k + 1 < len(args):
                    rest = args[k + 1] if name == "nix-shell" else " ".join(args[k + 1:])
                    self._nested_text(rest, ctx.sub(name, wrapper=name), name, text)
                    return True
            return True
        if name == "script":
            code = _opt_value(args, "c", ("--command",))
            if code is not None:
                self._nested_text(code, ctx.sub("script -c", wrapper="script"), "script -c", text)
                return True
            return None
        if name in ("tmux", "screen"):
            # tmux new[-session] [-d] ... 'cmd' / screen -dm cmd...: a detached background job
            if name == "tmux" and args[:1] and args[0] in ("new", "new-session", "new-window", "split-window", "send-keys"):
                i = _skip_opts(args, 1, {"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-l"})
                if args[0] == "send-keys":
                    return True
                if i < len(args):
                    self._nested_text(" ".join(args[i:]), ctx.sub(name, bg=self._detach(ctx, text),
                                                                  wrapper=name), name, text)
                return True
            if name == "screen" and any(a.startswith("-d") or a.startswith("-D") for a in args):
                i = _skip_opts(args, 0, {"-S", "-c", "-e", "-h", "-p", "-T", "-t", "-X"})
                return self._inner(args, largs, i, env, ctx.sub(name, bg=self._detach(ctx, text),
                                                                wrapper=name), text)
            return True
        if name == "swarmgate" and args[:1] == ["preflight"]:
            if len(args) > 1:
                self._script_arg(args[1], largs[1], env, ctx.sub("swarmgate preflight"), text,
                                 "swarmgate preflight", share=False)
            return True
        return None

    def _detach(self, ctx: _Ctx, text: str) -> int:
        """A wrapper that puts its command in the background: one more level."""
        if ctx.bg > 0:
            self.an.nested_background.append(text.strip())
        return ctx.bg + 1

    def _inner_now(self, args, largs, i, env, ctx, text) -> None:
        self._inner(args, largs, i, env, ctx, text)

    def _inner(self, args, largs, i, env, ctx, text) -> bool:
        if i < len(args):
            inner = args[i:]
            # the wrapped command inherits the wrapper's stdin/stdout (heredoc, pipe, files)
            redirs, raw_redirs, feed = self._io
            self.dispatch(inner, largs[i:], env, redirs, raw_redirs, ctx, text, feed, None)
        return True

    def _heredoc_text(self, r) -> str | None:
        """The text a here-document feeds, expanded when its delimiter is unquoted;
        None when that expansion is not constant."""
        body = r.heredoc or ""
        if r.quoted or ("$" not in body and "`" not in body):
            return body
        v, last = expand(body, self.vars, self._const_subst, heredoc=True)
        return None if last >= 0 else v

    def _input_words(self) -> list | None:
        """The words on the current command's stdin when they are literal, else None."""
        redirs, _, feed = self._io
        for r in redirs:
            if r.op in ("<<", "<<-") and r.fd in (None, 0):
                body = self._heredoc_text(r)
                return None if body is None else body.split()
            if r.op == "<<<":
                return None if "$" in r.target else r.target.split()
            if r.op == "<" and r.fd in (None, 0):
                return None
        if feed is not None:
            out = self._static_output(feed)
            if out is not None and out[0] == "text":
                return out[1].split()
        return None

    def _find(self, args, largs, env, ctx, text) -> None:
        i, n = 0, len(args)
        while i < n:
            a = args[i]
            if a in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < n and args[j] not in (";", "+"):
                    j += 1
                if j > i + 1:
                    self.dispatch(args[i + 1:j], largs[i + 1:j], env, [], [],
                                  ctx.sub("find -exec", wrapper="find"), text, None, None)
                i = j + 1
                continue
            i += 1

    def _cd(self, args, largs) -> None:
        rest = [a for a in args if not a.startswith("-") or a == "-"]
        if not rest:
            self.cwd = self.vars.get("HOME") or os.path.expanduser("~")
            return
        d = rest[0]
        if largs[args.index(d)] >= 0 or d == "-":
            # a directory we cannot name: files written and run there still match
            self.unknown_dirs += 1
            self.cwd = f"{_UNKNOWN_DIR}-{self.unknown_dirs}"
            return
        d = os.path.expanduser(d)
        if os.path.isabs(d):
            self.cwd = os.path.normpath(d)
        elif self.cwd is not None:
            self.cwd = os.path.normpath(os.path.join(self.cwd, d))

    def _known_dir(self, p: str | None) -> bool:
        return p is not None and not p.startswith(_UNKNOWN_DIR)

    # -- nested shell text ---------------------------------------------------
    def _nested_text(self, body: str, ctx: _Ctx, what: str, text: str, script: str | None = None) -> None:
        if ctx.depth + 1 > self.max_depth:
            self.problem(f"nesting deeper than {self.max_depth} levels ({what})")
            self.unverifiable(f"{what}: nested deeper than {self.max_depth} levels", text)
            return
        seq, by, unsure = parse_text(body, self.deadline, self.parser)
        if by != "bashlex" and by != self.an.parsed_by:
            self.problem(f"{what}: parsed by the lexical fallback")
        if unsure:
            self.problem(f"{what}: {unsure}")
            self.unverifiable(f"{what}: could not be read with confidence ({unsure})", body)
        # commands in the nested text inherit the stdin of the command that runs it
        self.stdin_stack.append(self._io)
        try:
            self.walk(seq, ctx.sub(None, depth=ctx.depth + 1))
        finally:
            self.stdin_stack.pop()

    def _shell(self, name, args, largs, env, redirs, raw_redirs, ctx, text, feed) -> None:
        i, n = 0, len(args)
        cmd_string = None
        reads_stdin = False
        while i < n:
            a = args[i]
            if a == "--" or a == "-":
                i += 1
                break
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if a.startswith("--"):
                i += 1
                continue
            if a.startswith("-") or a.startswith("+"):
                letters = a[1:]
                if "c" in letters and a[0] == "-":
                    cmd_string = i + 1
                if "s" in letters and a[0] == "-":
                    reads_stdin = True
                i += 1
                continue
            break
        sub = ctx.sub("bash -c" if cmd_string is not None else None)
        if cmd_string is not None:
            # first operand after the options is the command string
            j = cmd_string
            while j < n and args[j].startswith("-") and j < i:
                j += 1
            j = max(j, i)
            if j >= n:
                self.unverifiable(f"{name} -c without a command string", text)
                return
            # bash -c STR NAME ARGS...: $0 = NAME, "$@" = ARGS
            saved = (self.positional, dict(self.vars))
            self._set_positional(args[j + 2:], largs[j + 2:])
            if j + 1 < n:
                self.vars["0"] = args[j + 1] if largs[j + 1] < 0 else None
            try:
                self._nested_text(args[j], sub, f"{name} -c", text)
            finally:
                self.positional = saved[0]
                for k in [k for k in self.vars if k.isdigit() or k in "#@*"]:
                    del self.vars[k]
                self.vars.update({k: v for k, v in saved[1].items() if k.isdigit() or k in "#@*"})
            return
        if i < n and not reads_stdin:
            self._script_args = (args[i + 1:], largs[i + 1:])
            self._script_arg(args[i], largs[i], env, ctx, text, name, share=False)
            return
        self._shell_stdin(name, redirs, feed, ctx, text)

    def _shell_stdin(self, name, redirs, feed, ctx, text) -> None:
        """A shell reading commands from its standard input."""
        src = None
        for r in redirs:
            if r.op in ("<<", "<<-") and (r.fd in (None, 0)):
                src = ("text", r.heredoc or "", "heredoc-shell")
            elif r.op == "<<<":
                src = ("text", r.target + "\n", "herestring-shell")
            elif r.op == "<" and r.fd in (None, 0):
                if r.target.startswith(("<(", ">(")) or "$" in r.target:
                    src = None
                    self.unverifiable(f"{name} reads its input from something that cannot be "
                                      "read statically", text)
                    return
                src = ("files", [r.target], "stdin")
        if src is None and feed is None and not redirs and self.stdin_stack:
            # no input of its own: it reads what the enclosing command was given
            outer_redirs, _, outer_feed = self.stdin_stack[-1]
            if outer_redirs or outer_feed is not None:
                saved = self.stdin_stack.pop()
                try:
                    self._shell_stdin(name, outer_redirs, outer_feed, ctx, text)
                finally:
                    self.stdin_stack.append(saved)
                return
        if src is None and feed is not None:
            src = self._static_output(feed)
            if src is None:
                self.unverifiable(
                    f"input piped into {name} cannot be read statically "
                    f"({getattr(feed, 'text', '')[:60].strip()} | {name})", text)
                return
        if src is None:
            return   # no input: the shell reads nothing (the Bash tool has no stdin)
        kind, val, label = src
        if kind == "text":
            self._nested_text(val, ctx.sub(label), f"{name} <<input", text)
        else:
            for f in val:
                self._run_script_path(f, ctx.sub("stdin"), text, f"{name} < file", share=False)

    def _static_output(self, node):
        """What a pipeline element writes to stdout, when statically known:
        ("text", str, label) | ("files", [paths], label) | None."""
        if type(node) is not _lx.Cmd or not node.words:
            return None
        vals, last = self._expand_words(node.words)
        name = command_name(vals[0])
        args, largs = vals[1:], last[1:]
        if name == "echo":
            k = 0
            while k < len(args) and args[k] in ("-n", "-e", "-E", "-ne", "-en"):
                k += 1
            if any(x >= 0 for x in largs[k:]):
                return None
            body = " ".join(args[k:])
            if "-e" in args[:k] or "-ne" in args[:k] or "-en" in args[:k]:
                body = _c_unescape(body)
            return ("text", body + "\n", "echo-shell")
        if name == "printf":
            if not args or any(x >= 0 for x in largs):
                return None
            fmt = args[0]
            if "%" not in fmt.replace("%%", ""):
                return ("text", _c_unescape(fmt).replace("%%", "%"), "printf-shell")
            if fmt in ("%s", "%s\\n", "%s\n") and len(args) > 1:
                return ("text", "\n".join(args[1:]) + "\n", "printf-shell")
            return None
        if name == "cat":
            files = [a for a in args if not a.startswith("-") or a == "-"]
            if any(largs[args.index(f)] >= 0 for f in files) or "-" in files:
                return None
            if files:
                return ("files", files, "stdin")
            for r in node.redirs:
                if r.op in ("<<", "<<-") and r.heredoc is not None:
                    body = self._heredoc_text(r)
                    return None if body is None else ("text", body, "heredoc-shell")
                if r.op == "<<<" and r.target is not None:
                    v, l2 = expand(r.target.raw, self.vars)
                    return None if l2 >= 0 else ("text", v + "\n", "herestring-shell")
                if r.op == "<" and r.target is not None:
                    v, l2 = expand(r.target.raw, self.vars)
                    return None if l2 >= 0 else ("files", [v], "stdin")
            return None
        return None

    # -- scripts -------------------------------------------------------------
    def _abspath(self, path: str) -> str | None:
        if path.startswith("~"):
            path = os.path.expanduser(path)
        if os.path.isabs(path):
            return os.path.normpath(path)
        if self.cwd is None:
            return None
        return os.path.normpath(os.path.join(self.cwd, path))

    def _script_arg(self, word: str, last: int, env, ctx, text, how: str, share: bool) -> None:
        if word.startswith(("<(", ">(")):
            self.unverifiable(f"{how} <(...): shell input from a process substitution cannot be "
                              "read statically", text)
            return
        if last >= 0:
            self.unverifiable(f"{how} {word}: the script path is dynamic", text)
            return
        if word in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
            redirs, _, feed = self._io
            self._shell_stdin(how, redirs, feed, ctx, text)
            return
        if word.startswith(("/dev/fd/", "/proc/self/fd/")):
            self.unverifiable(f"{how} {word}: shell input from a file descriptor cannot be read "
                              "statically", text)
            return
        self._run_script_path(word, ctx, text, how, share)

    def _maybe_script(self, w0: str, args, env, ctx, text) -> None:
        """A path at command position: a shell script if bash would run it as one."""
        p = self._abspath(w0)
        if p is None:
            self.unverifiable(f"{w0}: cannot tell where it is (the directory changed to "
                              "something unknown)", text)
            return
        if p in self.written:
            self._run_script_path(w0, ctx, text, "run", share=False)
            return
        if not self._known_dir(p):
            if w0.endswith((".sh", ".bash")):
                self.unverifiable(f"{w0}: cannot tell where it is (the directory changed to "
                                  "something unknown)", text)
            else:
                self.problem(f"{w0}: in a directory that cannot be named; not read")
            return
        kind = _script_kind(p)
        if kind == "missing":
            if w0.endswith((".sh", ".bash")):
                self._missing_script(p, text)
            return
        if kind == "shell":
            self._run_script_path(w0, ctx, text, "run", share=False)

    def _run_script_path(self, word: str, ctx, text, how: str, share: bool) -> None:
        p = self._abspath(word)
        if p is None:
            self.unverifiable(f"{how} {word}: cannot tell where it is (the directory changed to "
                              "something unknown)", text)
            return
        if p not in self.written and not self._known_dir(p):
            self.unverifiable(f"{how} {word}: cannot tell where it is (the directory changed to "
                              "something unknown)", text)
            return
        label = f"script:{p}"
        # each file at most once per analysis (symlinks resolved; a file written
        # by this command counts as one file too)
        key = p if p in self.written else os.path.realpath(p)
        if key in self.seen_scripts:
            return
        self.seen_scripts.add(key)
        if p in self.written:
            content = self.written[p]
            if content is None:
                self.unverifiable(f"{p} is written by this same command with content that "
                                  "cannot be read statically, then run", text)
                return
            if content[0] == "text":
                self._script_body(content[1], p, ctx.sub(label, script=p), text, share)
                return
            for f in content[1]:
                self._run_script_path(f, ctx, text, how, share)
            return
        body = self._read_script(p, text)
        if body is None:
            return
        self.an.scripts_read.append(p)
        self._script_body(body, p, ctx.sub(label, script=p), text, share)

    def _script_body(self, body: str, path: str, ctx, text, share: bool) -> None:
        saved_vars, saved_cwd, saved_pos = dict(self.vars), self.cwd, self.positional
        script_args, self._script_args = self._script_args, None
        if not share:
            self.vars = _base_vars(self.cwd)
            self.positional = []
        if script_args is not None:
            self._set_positional(*script_args)
        elif not share:
            self._set_positional([], [])
        self.vars["0"] = path
        self.vars["BASH_SOURCE"] = path
        try:
            self._nested_text(body, ctx, f"script {path}", text, script=path)
        finally:
            if not share:
                self.vars, self.cwd = saved_vars, saved_cwd
            self.positional = saved_pos if (not share or script_args is not None) else self.positional

    def _set_positional(self, args: list, largs: list) -> None:
        """$1.. $# $@ $* for a script or function body (unknown when an argument is dynamic)."""
        for k in list(self.vars):
            if k.isdigit() and k != "0":
                del self.vars[k]
        if any(x >= 0 for x in largs):
            self.positional = None
            for k in ("#", "@", "*"):
                self.vars[k] = None
            for n, (a, la) in enumerate(zip(args, largs), 1):
                self.vars[str(n)] = a if la < 0 else None
            return
        self.positional = list(args)
        for n, a in enumerate(args, 1):
            self.vars[str(n)] = a
        for n in range(len(args) + 1, 10):
            self.vars[str(n)] = ""
        self.vars["#"] = str(len(args))
        self.vars["@"] = self.vars["*"] = " ".join(args)

    def _missing_script(self, p: str, text: str) -> None:
        """A script that does not exist cannot run, unless an earlier command of
        this text creates it in a way we cannot see (python writing it, git
        checkout, a build): then its content is unknown."""
        maker = next((c for c in self.an.commands[:-1]
                      if c.name not in _NO_FILE_CREATION
                      or any(r.writes and r.target != "/dev/null" for r in c.redirects)), None)
        if maker is None or p.endswith("/bin/activate"):
            # (a virtualenv's activate script, made by `python -m venv`, is standard)
            self.problem(f"script {p} does not exist (it cannot run either)")
            return
        self.problem(f"script {p} does not exist yet")
        self.unverifiable(f"script {p} does not exist yet: an earlier command ({maker.name}) may "
                          "create it, and what it would contain cannot be read", text)

    def _read_script(self, p: str, text: str) -> str | None:
        try:
            st = os.stat(p)
        except FileNotFoundError:
            self._missing_script(p, text)
            return None
        except OSError as e:
            self.problem(f"script {p} cannot be read: {e.strerror}")
            self.unverifiable(f"script {p} cannot be read", text)
            return None
        import stat as _stat
        if not _stat.S_ISREG(st.st_mode):
            self.problem(f"{p} is not a regular file")
            return None
        if st.st_size > self.max_script_bytes:
            self.problem(f"script {p} is {st.st_size} bytes, over the {self.max_script_bytes}-byte limit")
            self.unverifiable(f"script {p} is too large to read ({st.st_size} bytes)", text)
            return None
        try:
            with open(p, "rb") as fh:
                data = fh.read(self.max_script_bytes + 1)
        except OSError as e:
            self.problem(f"script {p} cannot be read: {e.strerror}")
            self.unverifiable(f"script {p} cannot be read", text)
            return None
        if b"\0" in data:
            self.problem(f"{p} is not a text file (NUL bytes)")
            self.unverifiable(f"{p} is a binary file run as a script", text)
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.problem(f"{p} is not UTF-8 text")
            self.unverifiable(f"{p} is not text: it cannot be read as a script", text)
            return None

    # -- writes (scripts written then run) -----------------------------------
    def _note_writes(self, sc, args, redirs, node, feed) -> None:
        name = sc.name if sc is not None else ""
        content = None
        if node is not None and sc is not None and any(r.writes for r in redirs):
            out = self._static_output(node)
            if out is not None:
                content = out[:2]
        for r in redirs:
            if r.writes and r.fd in (None, 1) and r.op != "<>":
                p = self._abspath(r.target) if "$" not in r.target else None
                if p is None:
                    continue
                if r.op in (">>", "&>>") and p in self.written:
                    prev = self.written[p]
                    if prev is not None and content is not None and prev[0] == content[0] == "text":
                        self.written[p] = ("text", prev[1] + content[1])
                    else:
                        self.written[p] = None
                else:
                    self.written[p] = content if sc is not None else ("text", "")
        if sc is None:
            return
        if name == "tee":
            files = [a for a in args if not a.startswith("-")]
            src = None
            for r in (node.redirs if node is not None else []):
                if r.op in ("<<", "<<-") and r.heredoc is not None:
                    body = self._heredoc_text(r)
                    src = None if body is None else ("text", body)
                elif r.op == "<<<" and r.target is not None:
                    v, l2 = expand(r.target.raw, self.vars)
                    src = None if l2 >= 0 else ("text", v + "\n")
            if src is None and feed is not None:
                o = self._static_output(feed)
                src = o[:2] if o else None
            for f in files:
                p = self._abspath(f)
                if p is not None:
                    self.written[p] = src
        elif name in ("cp", "mv", "install", "ln") and len(args) >= 2:
            ops = [a for a in args if not a.startswith("-")]
            if len(ops) == 2:
                dst, srcp = self._abspath(ops[1]), self._abspath(ops[0])
                if dst is not None:
                    if os.path.isdir(dst):
                        dst = os.path.join(dst, os.path.basename(ops[0]))
                    if srcp is not None and srcp in self.written:
                        self.written[dst] = self.written[srcp]
                    else:
                        self.written[dst] = ("files", [srcp]) if srcp else None
        elif name in ("curl", "wget"):
            flag = "o" if name == "curl" else "O"
            longs = ("--output", "--output-document")
            for k, a in enumerate(args):
                target = None
                if a.startswith(longs) and "=" in a:
                    target = a.split("=", 1)[1]
                elif (a in longs or (a.startswith("-") and not a.startswith("--")
                                     and a.endswith(flag))) and k + 1 < len(args):
                    target = args[k + 1]
                if target and target != "-":
                    p = self._abspath(target)
                    if p is not None:
                        self.written[p] = None
        elif name == "dd":
            for a in args:
                if a.startswith("of="):
                    p = self._abspath(a[3:])
                    if p is not None:
                        self.written[p] = None

    # -- interpreters --------------------------------------------------------
    def _interpreter(self, name, args, opts, raw_redirs, text) -> None:
        if not self.patterns:
            return
        code = None
        for k, a in enumerate(args):
            if a in opts and k + 1 < len(args):
                code = args[k + 1]
                break
            if a.startswith("-") and not a.startswith("--") and len(a) > 2 and ("-" + a[-1]) in opts:
                if k + 1 < len(args):
                    code = args[k + 1]
                    break
            if a.startswith("-c") and len(a) > 2 and "-c" in opts:
                code = a[2:]
                break
            if not a.startswith("-"):
                break
        if code is None and (not args or args[0] == "-"):
            # the program comes from stdin: a heredoc, a here-string, a file, a pipe
            code, unknown = self._stdin_program(raw_redirs)
            if unknown:
                self.unverifiable(f"the program fed to {name} on its input cannot be read "
                                  "statically", text)
                return
        if code is None:
            return
        hit = self._scan_code(code)
        if hit:
            self.unverifiable(f"{name} one-liner runs a shell command matching {hit!r} from its "
                              "code: it cannot be judged as a command", text)

    def _stdin_program(self, raw_redirs) -> tuple[str | None, bool]:
        """(program text, unknown) for an interpreter reading its program from stdin."""
        _, _, feed = self._io
        for r in raw_redirs:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                return r.heredoc, False
            if r.op == "<<<" and r.target is not None:
                return expand(r.target.raw, self.vars)[0], False
            if r.op == "<" and r.fd in (None, 0) and r.target is not None:
                v, last = expand(r.target.raw, self.vars)
                body = self._read_code(v) if last < 0 else None
                return body, body is None
        if feed is None:
            return None, False
        out = self._static_output(feed)
        if out is None:
            return None, True
        if out[0] == "text":
            return out[1], False
        parts = [self._read_code(f) for f in out[1]]
        if any(p is None for p in parts):
            return None, True
        return "\n".join(parts), False

    def _read_code(self, path: str) -> str | None:
        p = self._abspath(path)
        if p is None or not self._known_dir(p):
            return None
        try:
            if os.path.getsize(p) > self.max_script_bytes:
                return None
            with open(p, "rb") as fh:
                return fh.read(self.max_script_bytes).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _scan_code(self, code: str) -> str | None:
        """The first interpreter pattern that a string literal of ``code`` runs
        as a shell command (each literal read as shell text once), or that a
        list of literals spells as an argv (["cargo", "test", "--workspace"])."""
        lits = _string_literals(code)
        groups: list[list[str]] = []
        for lit, joined_prev in lits:
            if joined_prev and groups:
                groups[-1].append(lit)
            else:
                groups.append([lit])
        firsts = {command_name(p.split()[0]) for p in self.patterns}
        globby = any(any(ch in f for ch in "*?[") for f in firsts)
        for g in groups:
            for lit in g:
                if not globby and not any(f in lit for f in firsts):
                    continue
                cmds = self._literal_commands(lit)
                for p in self.patterns:
                    if any(command_matches(c, p) for c in cmds):
                        return p
            if len(g) > 1:
                words = [w for lit in g for w in lit.split()]
                for p in self.patterns:
                    pw = p.split()
                    for k, w in enumerate(words):
                        if words_match(command_name(w), words[k + 1:], pw):
                            return p
        return None

    def _literal_commands(self, lit: str) -> list:
        try:
            sub = analyze(lit, cwd=self.cwd if self._known_dir(self.cwd) else "/", max_depth=2,
                          parser=self.parser,
                          budget_s=max(0.01, min(0.2, self.deadline - time.monotonic())))
        except Exception:  # noqa: BLE001
            return []
        return sub.commands

    # -- make ----------------------------------------------------------------
    def _make(self, args, largs, ctx, text) -> None:
        """``make [targets]``: the recipes of the named targets (or the default
        one) and of their prerequisites, each line a shell text, via
        ``make:TARGET``. Make variables defined in the Makefile are expanded;
        others become unknown shell variables (dynamic words)."""
        mdir, mfile, targets, dry = self.cwd, None, [], False
        overrides: dict[str, str] = {}
        i, n = 0, len(args)
        while i < n:
            a = args[i]
            if a in ("-C", "--directory") and i + 1 < n:
                mdir = os.path.join(mdir, args[i + 1]) if mdir else None
                i += 2
                continue
            if a.startswith("-C") and len(a) > 2:
                mdir = os.path.join(mdir, a[2:]) if mdir else None
            elif a.startswith("--directory="):
                mdir = os.path.join(mdir, a.split("=", 1)[1]) if mdir else None
            elif a in ("-f", "--file", "--makefile") and i + 1 < n:
                mfile = args[i + 1]
                i += 2
                continue
            elif a in ("-o", "-W", "-I", "--old-file", "--what-if", "--include-dir") and i + 1 < n:
                i += 2
                continue
            elif a in ("-j", "-l", "--jobs", "--load-average") and i + 1 < n and args[i + 1].isdigit():
                i += 2
                continue
            elif a in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question"):
                dry = True
            elif a.startswith("-"):
                pass
            elif "=" in a:
                k, v = a.split("=", 1)
                overrides[k] = v
            else:
                targets.append(a)
            i += 1
        if dry:
            return
        if not self._known_dir(mdir):
            self.unverifiable("make: cannot tell which directory it runs in", text)
            return
        path = None
        if mfile:
            path = mfile if os.path.isabs(mfile) else os.path.join(mdir, mfile)
        else:
            for cand in ("GNUmakefile", "makefile", "Makefile"):
                if os.path.isfile(os.path.join(mdir, cand)):
                    path = os.path.join(mdir, cand)
                    break
        if path is None:
            return   # no makefile: make fails, nothing runs
        path = os.path.normpath(path)
        rules = self.makefiles.get(path)
        if rules is None:
            body = self._read_script(path, text)
            if body is None:
                return
            self.an.scripts_read.append(path)
            rules = _parse_makefile(body)
            self.makefiles[path] = rules
        mvars, recipes, prereqs, default = rules
        mvars = dict(_MAKE_BUILTINS, **mvars)
        mvars.update(overrides)
        done: set[str] = set()
        saved_cwd = self.cwd
        self.cwd = mdir

        def run_target(t: str, level: int) -> None:
            if t in done or level > 8:
                return
            done.add(t)
            for p in prereqs.get(t, ()):
                run_target(p, level + 1)
            for line in recipes.get(t, ()):
                shell = _make_expand(line, mvars, t, prereqs.get(t, ()))
                self._nested_text(shell, ctx.sub(f"make:{t}"), f"make {t}", text)
        try:
            for t in targets or ([default] if default else []):
                run_target(t, 0)
        finally:
            self.cwd = saved_cwd

    # -- functions never called ------------------------------------------------
    def finish(self, ctx: _Ctx) -> None:
        for name, (body, dctx) in list(self.funcs.items()):
            if name not in self.called:
                self.called.add(name)
                self._set_positional(["$1"], [2])   # a function never called: arguments unknown
                self.active_funcs.append(id(body))
                try:
                    self.walk(body, dctx.sub(f"function:{name}"))
                finally:
                    self.active_funcs.pop()


_MAKE_BUILTINS = {"CC": "cc", "CXX": "g++", "AR": "ar", "AS": "as", "LD": "ld", "RM": "rm -f",
                  "INSTALL": "install", "LEX": "lex", "YACC": "yacc", "FC": "f77", "CPP": "cc -E",
                  "SHELL": "/bin/sh", "CFLAGS": "", "CXXFLAGS": "", "LDFLAGS": "", "LDLIBS": "",
                  "CPPFLAGS": "", "ARFLAGS": "rv", "MAKEFLAGS": "", "CURDIR": "."}


def _parse_makefile(text: str):
    """(variables, recipes{target: [lines]}, prereqs{target: [names]}, default target)."""
    lines: list[str] = []
    buf = ""
    for raw in text.split("\n"):
        if raw.endswith("\\"):
            buf += raw[:-1] + " "
            continue
        lines.append(buf + raw)
        buf = ""
    if buf:
        lines.append(buf)
    mvars: dict[str, str] = {}
    recipes: dict[str, list[str]] = {}
    prereqs: dict[str, list[str]] = {}
    default = None
    current: list[str] = []
    for line in lines:
        if line.startswith("\t"):
            if current:
                body = line[1:].lstrip()
                while body[:1] in ("@", "-", "+"):
                    body = body[1:].lstrip()
                if body and not body.startswith("#"):
                    for t in current:
                        recipes.setdefault(t, []).append(body)
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        for op in ("::=", ":=", "?=", "+=", "!=", "="):
            k = stripped.find(op)
            colon = stripped.find(":")
            if k > 0 and (colon < 0 or colon >= k or op in ("::=", ":=")) and \
                    stripped[:k].strip().replace("override ", "").replace("export ", "").strip().replace("_", "a").replace(".", "a").isalnum():
                name = stripped[:k].strip().replace("override ", "").replace("export ", "").strip()
                val = stripped[k + len(op):].strip()
                if op == "+=":
                    mvars[name] = (mvars.get(name, "") + " " + val).strip()
                elif op == "?=":
                    mvars.setdefault(name, val)
                elif op == "!=":
                    mvars[name] = None
                else:
                    mvars[name] = val
                current = []
                break
        else:
            if ":" in stripped and not stripped.startswith((".", "include", "-include", "ifeq", "ifneq",
                                                            "ifdef", "ifndef", "else", "endif", "define")):
                head, _, rest = stripped.partition(":")
                rest = rest.lstrip(":")
                rest, _, inline = rest.partition(";")
                names = head.split()
                current = names
                for t in names:
                    prereqs.setdefault(t, []).extend(rest.split())
                    if default is None and "%" not in t:
                        default = t
                if inline.strip():
                    for t in names:
                        recipes.setdefault(t, []).append(inline.strip())
            elif stripped.startswith("."):
                head = stripped.partition(":")[0]
                current = [] if head.strip() in (".PHONY", ".SUFFIXES", ".DEFAULT_GOAL") else head.split()
            else:
                current = []
    return mvars, recipes, prereqs, default


def _make_expand(line: str, mvars: dict, target: str, prereqs, level: int = 0) -> str:
    """Expand make's $(VAR) ${VAR} $@ $< $^ $$ in a recipe line into shell text."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nx = line[i + 1]
        if nx == "$":
            out.append("$")
            i += 2
            continue
        if nx in "@<^+*?":
            out.append({"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs),
                        "+": " ".join(prereqs), "*": target, "?": " ".join(prereqs)}[nx])
            i += 2
            continue
        if nx in "({":
            close = ")" if nx == "(" else "}"
            j = _match_close(line, i + 1, nx, close)
            inner = line[i + 2:j - 1]
            name = inner.strip()
            if name in ("MAKE", "MAKE_COMMAND"):
                out.append("make")
            elif name in mvars and mvars[name] is not None and level < 5:
                out.append(_make_expand(mvars[name], mvars, target, prereqs, level + 1))
            else:
                safe = "".join(ch if ch.isalnum() else "_" for ch in name)[:40] or "x"
                out.append("${MAKE_" + safe + "}")
            i = j
            continue
        out.append("${MAKE_" + nx + "}" if nx.isalnum() else "$" + nx)
        i += 2
    return "".join(out)


def _shell_quote(word: str) -> str:
    """Quote a word so that parsing it again gives it back (dynamic words keep their $)."""
    if word and all(c.isalnum() or c in "-_./=:,+%@^" for c in word):
        return word
    if "$" in word:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'
    return "'" + word.replace("'", "'\\''") + "'"


def _c_unescape(s: str) -> str:
    """Backslash escapes as $'...', echo -e and printf decode them (\\n, \\xHH, \\NNN, \\uHHHH)."""
    if "\\" not in s:
        return s
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n:
            e = s[i + 1]
            if e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                j = i + 2
                while j < n and j < i + 2 + width and s[j] in "0123456789abcdefABCDEF":
                    j += 1
                if j > i + 2:
                    try:
                        out.append(chr(int(s[i + 2:j], 16)))
                    except (ValueError, OverflowError):
                        out.append(s[i:j])
                    i = j
                    continue
            if e in "01234567":
                j = i + 1
                while j < n and j < i + 4 and s[j] in "01234567":
                    j += 1
                out.append(chr(int(s[i + 1:j], 8) & 0xFF))
                i = j
                continue
            out.append(_C_ESCAPES.get(e, "\\" + e))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _string_literals(code: str) -> list[tuple[str, bool]]:
    """String literals of a python/js/perl/ruby one-liner, in order, each with
    whether it directly follows the previous literal in a list (``, ``)."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(code)
    last_end = -10
    while i < n:
        c = code[i]
        if c == "#" and (i == 0 or code[i - 1] in " \t\n;"):
            j = code.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "'\"`":
            q = c
            if code.startswith(q * 3, i):
                j = code.find(q * 3, i + 3)
                j = n if j < 0 else j
                lit = code[i + 3:j]
                end = j + 3
            else:
                j = i + 1
                buf = []
                while j < n and code[j] != q:
                    if code[j] == "\\" and j + 1 < n:
                        buf.append(_C_ESCAPES.get(code[j + 1], code[j + 1]))
                        j += 2
                        continue
                    buf.append(code[j])
                    j += 1
                lit = "".join(buf)
                end = j + 1
            between = code[last_end:i] if last_end >= 0 else "x"
            joined = last_end >= 0 and between.strip(" \t\n,[]()") == ""
            out.append((lit, joined))
            last_end = end
            i = end
            continue
        i += 1
    return out


_SHEBANG_SHELLS = SHELLS


def _script_kind(p: str) -> str:
    """'shell' | 'other' | 'missing' for a path at command position."""
    try:
        st = os.stat(p)
    except OSError:
        return "missing"
    import stat as _stat
    if not _stat.S_ISREG(st.st_mode):
        return "other"
    try:
        with open(p, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return "other"
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if not line:
            return "other"
        prog = command_name(line[0])
        if prog == "env":
            rest = [x for x in line[1:] if not x.startswith("-")]
            prog = command_name(rest[0]) if rest else ""
        return "shell" if prog in _SHEBANG_SHELLS else "other"
    if p.endswith((".sh", ".bash")):
        return "shell"
    if b"\0" in head or head.startswith(b"\x7fELF"):
        return "other"
    if st.st_mode & 0o111:
        return "shell"   # executable text without a shebang: bash runs it as a script
    return "other"


# ---------------------------------------------------------------------------


def analyze(command: str, *, cwd: str, max_depth: int = 6, budget_s: float = 2.0,
            max_script_bytes: int = 1 << 20, interpreter_patterns=(), parser: str = "auto") -> Analysis:
    """Every simple command ``command`` would execute (see the module doc).

    Never raises; answers within ``budget_s`` (what is left unread is
    reported as Unverifiable + a problems entry). ``parser="lexical"`` skips
    bashlex altogether (~15 ms less per hook process, ~8x faster per parse;
    the differential tests show both read the same trees where bashlex parses)."""
    if parser not in ("auto", "lexical"):
        parser = "auto"
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
    w = _Walker(an, cwd, max_depth, deadline,
                max_script_bytes, interpreter_patterns or ())
    w.parser = parser
    ctx = _Ctx()
    try:
        if parser == "lexical" or _needs_lexical(command):
            an.parsed_by = "lexical"
        seq, by, unsure = parse_text(command, deadline, parser)
        an.parsed_by = by
        if by == "lexical" and parser == "auto":
            why = _needs_lexical(command)
            an.problems.append(f"parsed by the lexical fallback ({why or 'bashlex could not parse it'})")
        if unsure:
            an.problems.append(f"the lexical fallback is unsure: {unsure}")
            an.unverifiable.append(Unverifiable(f"the command could not be read with confidence "
                                                f"({unsure})", command[:500]))
        w.walk(seq, ctx)
        w.finish(ctx)
    except _OutOfTime:
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
