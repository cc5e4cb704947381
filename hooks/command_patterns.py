"""Command patterns (SPEC §4.3): sequences of shell words matched against simple commands.

Pure and light (hot path: no `re`, `shlex` or `fnmatch` at import time).

A simple command matches a pattern when
- its command name equals the pattern's first word, compared by basename
  after quote removal (`/usr/bin/cargo`, `\\cargo`, `"cargo"` are all `cargo`);
- the pattern's other words appear among its arguments in the same order,
  as whole words, other arguments allowed between
  (`cargo --locked test --release --workspace` matches `cargo test --workspace`;
  `cargo test --all-features` does not match `cargo test --all`);
- a pattern word holding `*`, `?` or `[` is a glob (fnmatch, `*` crosses `/`;
  the first word too: `qemu-system-*`):
  `bash .claude/gate.d/*`. A path-like argument is also compared in its
  repository-relative form (`./.claude/gate.d/x.sh`, `/abs/repo/.claude/gate.d/x.sh`).

A command run by `xargs` gets arguments nobody can read statically: it
matches when its known arguments begin the pattern (`xargs cargo test` may
become `cargo test --workspace`), not when they diverge from it.

Besides the command as written, the program an environment runner starts is
matched too (`python -m MOD ARGS` as `MOD ARGS`, `uv run CMD`, `npx CMD`,
`conda run CMD`); `views(..., through="all")` follows every wrapper
(`timeout 60 CMD`, `strace -f CMD`) for a raw argv. The one wrapper table
(`bash_wrappers`) says where each wrapper's command is. This is the one
pattern matcher: the guards, the interpreter-code scan and the exec-time
shims all match through it.
"""
from __future__ import annotations

_GLOB_CHARS = frozenset("*?[")
_cache: dict = {}


class PatternError(ValueError):
    """A pattern string that is not a sequence of shell words (unbalanced quote, empty)."""


def split_words(text: str) -> list[str]:
    """Shell words of ``text`` with quotes removed (POSIX rules for '', "" and \\)."""
    words: list[str] = []
    cur: list[str] = []
    have = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n":
            if have:
                words.append("".join(cur))
                cur, have = [], False
            i += 1
            continue
        have = True
        if c == "\\":
            if i + 1 < n:
                if text[i + 1] != "\n":
                    cur.append(text[i + 1])
                i += 2
            else:
                i += 1
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise PatternError(f"unbalanced ' in pattern {text!r}")
            cur.append(text[i + 1:j])
            i = j + 1
            continue
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`':
                    cur.append(text[i + 1])
                    i += 2
                    continue
                cur.append(text[i])
                i += 1
            if i >= n:
                raise PatternError(f'unbalanced " in pattern {text!r}')
            i += 1
            continue
        cur.append(c)
        i += 1
    if have:
        words.append("".join(cur))
    return words


def basename(word: str) -> str:
    """Command name as compared: quote-removed already, leading backslashes dropped, basename."""
    w = word.lstrip("\\")
    if "/" in w:
        w = w.rstrip("/").rsplit("/", 1)[-1]
    return w


class Pattern:
    """A parsed pattern: name (basename) and the argument words that must follow in order."""
    __slots__ = ("text", "name", "words", "globs", "name_glob")

    def __init__(self, text: str) -> None:
        words = split_words(text)
        if not words:
            raise PatternError(f"empty command pattern {text!r}")
        self.text = text
        self.name = basename(words[0])
        self.words = tuple(words[1:])
        self.globs = tuple(bool(_GLOB_CHARS.intersection(w)) for w in self.words)
        self.name_glob = bool(_GLOB_CHARS.intersection(self.name))

    def __repr__(self) -> str:
        return f"Pattern({self.text!r})"


def compile_pattern(pattern) -> Pattern:
    if isinstance(pattern, Pattern):
        return pattern
    p = _cache.get(pattern)
    if p is None:
        p = _cache[pattern] = Pattern(pattern)
    return p


def compile_all(patterns) -> tuple:
    """Parsed patterns; a bad one raises PatternError naming it."""
    key = tuple(patterns)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = tuple(compile_pattern(p) for p in key)
    return hit


def _norm_path(word: str, cwd: str, repo: str) -> str:
    """``word`` relative to the repository when it is a path inside it, else lexically normalised."""
    from swarmgate import lean_path as posixpath

    if not word or "/" not in word and word not in (".", ".."):
        return word
    base = cwd or repo or "/"
    full = word if word.startswith("/") else posixpath.join(base, word)
    full = posixpath.normpath(full)
    if repo:
        r = posixpath.normpath(repo)
        if full == r:
            return "."
        if full.startswith(r.rstrip("/") + "/"):
            return full[len(r.rstrip("/")) + 1:]
    return posixpath.normpath(word)


def _word_matches(pw: str, is_glob: bool, arg: str, cwd: str, repo: str) -> bool:
    if not is_glob and pw == arg:
        return True
    if is_glob:
        from fnmatch import fnmatchcase
        if fnmatchcase(arg, pw):
            return True
    if "/" in pw and "/" in arg or (arg.startswith(".") and "/" in pw):
        a = _norm_path(arg, cwd, repo)
        p = _norm_path(pw, cwd, repo) if not pw.startswith("/") and not is_glob else pw
        if is_glob:
            from fnmatch import fnmatchcase
            return fnmatchcase(a, pw) or fnmatchcase(a, p)
        return a == p
    return False


def _ordered(pat: Pattern, args, cwd: str, repo: str, open_tail: bool = False) -> bool:
    k = 0
    need = len(pat.words)
    if not need:
        return True
    for a in args:
        if _word_matches(pat.words[k], pat.globs[k], a, cwd, repo):
            k += 1
            if k == need:
                return True
    # arguments xargs appends are unknown: they may complete a pattern already begun
    return open_tail and k >= 1


def views(name: str, args, extra: dict | None = None, *, through: str = "runners") -> list:
    """(name, args) pairs under which a command is matched: as written, then the program that
    the wrapper table says it runs (innermost last). ``through="runners"`` (the default, for
    commands the bash reader yields: it yields what wrappers run by itself) follows only
    environment runners, which run the same program (``python -m MOD``, ``uv run CMD``, ``npx
    CMD``); ``through="all"`` follows every wrapper (``timeout 60 CMD``, ``strace -f CMD``:
    for a raw argv, such as an exec-time check sees)."""
    from swarmgate.hooks.bash_wrappers import inner_argv

    out = [(name, args)]
    cur = (basename(name), list(args))
    for _ in range(8):
        nxt = inner_argv(cur[0], cur[1], extra, runners_only=through != "all")
        if nxt is None:
            break
        cur = (basename(nxt[0]), nxt[1])
        out.append(cur)
    return out


def matches_words(name: str, args, pattern, *, cwd: str = "", repo: str = "",
                  open_tail: bool = False, through: str = "runners") -> bool:
    """Does the argv ``name args`` match? ``through="all"`` also looks through every wrapper
    (for a raw argv that nothing has unwrapped, such as an exec-time check sees)."""
    pat = compile_pattern(pattern)
    for vname, vargs in views(basename(name), args, through=through):
        vname = basename(vname)
        if vname == pat.name or (pat.name_glob and _name_glob(vname, pat.name)):
            if _ordered(pat, vargs, cwd, repo, open_tail):
                return True
    return False


def _name_glob(name: str, glob: str) -> bool:
    from fnmatch import fnmatchcase
    return fnmatchcase(name, glob)


class Argv:
    """An argv in the shape the matcher reads (a simple command's words/name/args), for a command no
    reader produced: an exec-time argv, a canonical spelling, a script body's words."""
    __slots__ = ("words", "name", "args", "wrappers", "via", "text")

    def __init__(self, words: list[str]) -> None:
        self.words = list(words)
        self.name = basename(words[0]) if words else ""
        self.args = list(words[1:])
        self.wrappers = ()
        self.via = ()
        self.text = " ".join(words)


def matches(cmd, pattern, *, cwd: str = "", repo: str = "") -> bool:
    """Does the simple command ``cmd`` (bash_tree.SimpleCommand-like: words, name, args) match?"""
    words = cmd.words
    if not words:
        return False
    name = getattr(cmd, "name", None) or basename(words[0])
    args = getattr(cmd, "args", None)
    if args is None:
        args = words[1:]
    open_tail = "xargs" in (getattr(cmd, "wrappers", ()) or ())
    if matches_words(name, args, pattern, cwd=cwd, repo=repo, open_tail=open_tail):
        return True
    # a script run by path (`./x.sh`, `.claude/gate.d/x.sh`) or sourced runs as `bash x.sh` would
    first = words[0].lstrip("\\")
    if "/" in first and (not first.startswith("/") or name.endswith((".sh", ".bash"))):
        return matches_words("bash", [first, *args], pattern, cwd=cwd, repo=repo)
    if name in ("source", ".") and args:
        return matches_words("bash", list(args), pattern, cwd=cwd, repo=repo)
    return False


def first_match(cmd, patterns, *, cwd: str = "", repo: str = ""):
    """The first pattern (text) that ``cmd`` matches, or None."""
    return pattern_set(patterns).first(cmd, cwd=cwd, repo=repo)


class PatternSet:
    """Patterns indexed by command name, so a command whose name no pattern names costs a set
    lookup. ``first(cmd)`` is ``first_match`` with the same answers."""
    __slots__ = ("patterns", "names", "globbed", "wants_bash", "_glob_hits")

    def __init__(self, patterns) -> None:
        self.patterns = compile_all(patterns)
        self.names = frozenset(p.name for p in self.patterns if not p.name_glob)
        self.globbed = tuple(p.name for p in self.patterns if p.name_glob)
        self.wants_bash = "bash" in self.names or bool(self.globbed)
        self._glob_hits: dict = {}

    def _names_of(self, cmd) -> set:
        from swarmgate.hooks.bash_wrappers import TABLE, is_python

        name = cmd.name
        names = {name}
        if is_python(name) or (name in TABLE and TABLE[name].env_runner):
            names.update(basename(v) for v, _ in views(name, list(cmd.args))[1:])
        if self.wants_bash and (name in ("source", ".") or "/" in cmd.words[0]):
            names.add("bash")
        return names

    def _glob_ok(self, name: str, glob: str) -> bool:
        key = (name, glob)
        hit = self._glob_hits.get(key)
        if hit is None:
            if len(self._glob_hits) > 4096:
                self._glob_hits.clear()
            hit = self._glob_hits[key] = _name_glob(name, glob)
        return hit

    def first(self, cmd, *, cwd: str = "", repo: str = ""):
        if not cmd.words:
            return None
        names = self._names_of(cmd)
        if not (names & self.names) and not any(self._glob_ok(n, g) for n in names for g in self.globbed):
            return None
        for p in self.patterns:
            if p.name_glob:
                if not any(self._glob_ok(n, p.name) for n in names):
                    continue
            elif p.name not in names:
                continue
            if matches(cmd, p, cwd=cwd, repo=repo):
                return p.text
        return None


def pattern_set(patterns) -> PatternSet:
    key = ("set", tuple(patterns))
    ps = _cache.get(key)
    if ps is None:
        ps = _cache[key] = PatternSet(patterns)
    return ps


# options that take a value in the programs heavy patterns name (cargo, pytest, make, npm ...): an
# unknown word right after one is read as its value, not as a word that completes a pattern
_VALUE_OPTIONS = frozenset((
    "--features", "-F", "--target", "--target-dir", "--package", "-p", "--manifest-path", "--jobs", "-j",
    "--profile", "--config", "--exclude", "--color", "--message-format", "--bin", "--test", "--example",
    "--bench", "--file", "-f", "--directory", "-C", "--output", "-o", "--log-level", "--timeout", "--name",
    "--env", "-e", "--tag", "--format", "--filter", "--cfg", "--edition", "--workdir", "--prefix",
    "--python", "--rootdir", "--basetemp", "--tb", "--maxfail", "--junitxml", "-k", "-m", "-Z", "-l",
    "--load-average", "-W", "-o", "-I", "--include-dir", "--workspace-root", "--registry", "--index",
    "--cap-lints", "-t", "-n", "--durations", "--junit-xml", "-x"))


def could_match(cmd, pattern, *, cwd: str = "", repo: str = "") -> bool:
    """Could ``cmd`` match ``pattern`` once its unknown words are known? An argument the
    reader could not resolve (``$(cat flags)``, ``$X``) may stand for any words, so it may
    complete the pattern; one with a literal start (``-j$(nproc)``) only stands for a word
    with that start. ``matches`` already said no."""
    dyn = getattr(cmd, "dynamic", None)
    if not dyn or not any(dyn[1:]):
        return False
    pat = compile_pattern(pattern)
    for vname, vargs in views(basename(cmd.name), list(cmd.args)):
        if basename(vname) != pat.name and not (pat.name_glob and _name_glob(basename(vname), pat.name)):
            continue
        # the dynamic flags of the view's arguments: the tail of the command's own
        flags = list(dyn[1:])[len(cmd.args) - len(vargs):] if len(vargs) <= len(cmd.args) else \
            [False] * len(vargs)
        k = 0
        need = len(pat.words)
        prev = ""
        for a, d in zip(vargs, flags):
            if k >= need:
                return True
            after_value_option = prev in _VALUE_OPTIONS
            prev = a
            if a == "--" and d is False:
                break   # what follows `--` goes to the program it runs (a test filter), not to it
            if d and after_value_option:
                continue   # `--features $F`, `-p $CRATE`: taken as that option's value
            if d:
                cut = min([j for j in (a.find("$"), a.find("`"), a.find("*"), a.find("?"), a.find("["))
                           if j >= 0] or [len(a)])
                prefix = a[:cut]
                if not prefix:
                    return True   # may be any words: the rest of the pattern too
                if pat.words[k].startswith(prefix) or pat.globs[k]:
                    k += 1
                continue
            if _word_matches(pat.words[k], pat.globs[k], a, cwd, repo):
                k += 1
        if k >= need:
            return True
    return False


def open_matches(analysis, patterns, *, cwd: str = "", repo: str = "") -> list:
    """(command, pattern) for each command of ``analysis`` that does not match ``patterns`` as
    read but could once its unknown arguments are known."""
    ps = pattern_set(patterns)
    out = []
    for c in getattr(analysis, "commands", ()):
        if not c.words or not any(getattr(c, "dynamic", ())[1:]):
            continue
        names = ps._names_of(c)
        if not (names & ps.names) and not any(ps._glob_ok(n, g) for n in names for g in ps.globbed):
            continue
        if ps.first(c, cwd=cwd, repo=repo):
            continue
        for p in ps.patterns:
            if could_match(c, p, cwd=cwd, repo=repo):
                out.append((c, p.text))
                break
    return out
