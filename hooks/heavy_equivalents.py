"""`[heavy] equivalents`: workloads that are a heavy pattern though spelled otherwise (issue 24 item 3,
docs/bash-guards.md "Equivalents of a heavy run").

A heavy pattern names a workload, not only a spelling. Each entry of `[heavy] equivalents` is data:

- ``ALT = CANON``: a command spelled ALT is read as CANON with its other arguments. ALT's first word is
  the program (by basename, like a pattern's); its plain words are the program's next non-option words
  (its subcommands: `cargo +nightly --locked nextest run` holds `nextest run`); an option word
  (`-x`) may stand anywhere after them. ``{}`` stands for one argument that is itself a command line
  of CANON's program, and CANON's ``{}`` takes its words: `cargo watch -x {} = cargo {}` reads
  `cargo watch -x check -x 'test --workspace'` as `cargo check` and `cargo test --workspace`. Without
  ``{}`` the arguments ALT did not name follow CANON: `cargo nextest run --workspace` is `cargo test
  --workspace`, so it matches `cargo test --workspace` and not `cargo test --all`.
- ``pytest collections``: a pytest run whose collection includes the directory of a heavy pattern
  `pytest DIR` is that pattern (hooks/pytest_collection.py): `pytest`, `pytest tests`, `cd tests &&
  pytest integration`, ini testpaths, every file of DIR named one by one, `@FILE` arguments.
- ``script bodies``: the commands a heavy script, recipe or task runs (a heavy pattern the bash reader
  expands: `npm run e2e`, `make check-full`, `just ci`, `task test`), run directly, are heavy too:
  `npx playwright test` when `e2e` is `playwright test`. What the body does besides (cd, echo, file
  utilities, other scripts by name) is left out; a body word the reader cannot resolve drops out of
  the pattern it gives. The bodies are read from the repository root once per change of its package
  and task files (cached in the state directory).

Parsing apart from judging: ``parse`` reads the entries (a bad one raises PatternError naming it),
``alias_views``/``collection_hit``/``body_patterns`` answer for one command; hooks/heavy_commands.py
judges with them. The table itself and its parsing: hooks/equivalents_table.py.
"""
from __future__ import annotations

from swarmgate.hooks.command_patterns import PatternError, basename, split_words
from swarmgate.hooks.equivalents_table import HOLE, PYTEST_NAMES, Alias, Equivalents, in_force

_cache: dict = {}  # the bodies per repository, stamp and patterns, in this process
_VERSION = 2  # of the way bodies are read: a change here makes every cached entry stale
# shell words after which the next one is an option's value, not a subcommand (cargo's and make's own)
_VALUE_OPTIONS = frozenset(("-Z", "--config", "-C", "--manifest-path", "--color", "-j", "--jobs", "--target-dir",
                            "--profile", "-p", "--package", "-f", "--file", "--directory"))
# what a script body does besides running its workload: never a pattern of its own
_NOT_WORKLOADS = frozenset((
    "cd", "pushd", "popd", "echo", "printf", "export", "set", "unset", "true", "false", ":", "test", "[", "[[",
    "exit", "return", "shift", "sleep", "wait", "rm", "mkdir", "rmdir", "cp", "mv", "ln", "touch", "cat", "chmod",
    "chown", "env", "cross-env", "source", ".", "trap", "read", "date", "tee", "grep", "sed", "awk", "head",
    "tail", "sort", "wc", "ls", "pwd", "which", "command", "type", "exec", "eval", "node_modules/.bin/run-s",
    "npm", "npx", "yarn", "pnpm", "bun", "make", "gmake", "just", "task", "tox", "nox", "run-s", "run-p",
    "npm-run-all", "concurrently", "git", "tar", "gzip", "find", "xargs", "curl", "wget", "install"))
# test runners: a body command that is one of these (or a `[scope] verify_patterns` run) is its workload; a
# body with none of them gives its one remaining command, and a body with several others gives none
RUNNERS = ("pytest", "py.test", "cargo test", "cargo nextest", "cargo llvm-cov", "cargo tarpaulin", "cargo mutants",
           "playwright test", "jest", "vitest", "mocha", "ava", "tap", "karma", "cypress run", "go test", "ctest",
           "bats", "rspec", "phpunit", "gradle test", "gradlew test", "mvn test", "mvn verify", "dotnet test",
           "deno test", "bun test", "tox", "nox", "qemu-system-*", "hyperfine", "k6 run", "locust")
_SCRIPT_FILES = ("package.json", "Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", ".justfile",
                 "Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "tox.ini", "noxfile.py", ".cargo/config.toml",
                 ".cargo/config")


def _match(alias: Alias, args: list) -> tuple[list, list] | None:
    """(the arguments ALT did not name, the values its {} took) when ``args`` hold ALT, else None."""
    used: set = set()
    caps: list = []
    i = 0
    words = alias.words
    k = 0
    while k < len(words):
        w = words[k]
        if w.startswith("-") and w != HOLE:
            takes = k + 1 < len(words) and words[k + 1] == HOLE
            found = False
            j = i
            while j < len(args):
                a = args[j]
                if a == "--":
                    break
                if a == w:
                    found = True
                    used.add(j)
                    if takes and j + 1 < len(args):
                        caps.append(args[j + 1])
                        used.add(j + 1)
                        j += 1
                elif takes and w.startswith("--") and a.startswith(w + "="):
                    found = True
                    used.add(j)
                    caps.append(a[len(w) + 1:])
                elif takes and len(w) == 2 and a.startswith(w) and len(a) > 2 and not a.startswith("--"):
                    found = True
                    used.add(j)
                    caps.append(a[2:])
                if found and not takes:
                    break
                j += 1
            if not found or (takes and not caps):
                return None
            k += 2 if takes else 1
            continue
        j = i
        while j < len(args):   # the next non-option word: cargo's `+toolchain`, `--locked`, `-Z x` are skipped
            a = args[j]
            if a == "--":
                return None
            if a.startswith("+") or (a.startswith("-") and a != "-"):
                j += 2 if a in _VALUE_OPTIONS else 1
                continue
            break
        if j >= len(args):
            return None
        if w == HOLE:
            caps.append(args[j])
        elif args[j] != w:
            return None
        used.add(j)
        i = j + 1
        k += 1
    return [a for j, a in enumerate(args) if j not in used], caps


def alias_views(name: str, args: list, eq: Equivalents) -> list[tuple[str, list]]:
    """(name, args) of each CANON that ``name args`` is read as (two rounds: `cargo-nextest nextest run`)."""
    out: list[tuple[str, list]] = []
    todo = [(basename(name), list(args))]
    for _ in range(2):
        nxt = []
        for n, a in todo:
            if n not in eq.names:
                continue
            for al in eq.aliases:
                if al.name != n:
                    continue
                m = _match(al, a)
                if m is None:
                    continue
                rest, caps = m
                if HOLE in al.canon:
                    for c in caps:
                        try:
                            inner = split_words(c)
                        except PatternError:
                            continue
                        i = al.canon.index(HOLE)
                        words = [*al.canon[:i], *inner, *al.canon[i + 1:]]
                        nxt.append((basename(words[0]), words[1:]))
                else:
                    nxt.append((basename(al.canon[0]), [*al.canon[1:], *rest]))
                break   # the first entry that holds it: `cargo llvm-cov test` before `cargo llvm-cov`
        out += nxt
        todo = nxt
    return out


def pytest_patterns(patterns) -> list[tuple[str, list, list]]:
    """(pattern text, option words, path words) of each heavy pattern `pytest ...` that names a path
    (a glob among them: any directory it names)."""
    out = []
    for p in patterns:
        try:
            w = split_words(p)
        except PatternError:
            continue
        if not w or basename(w[0]) not in PYTEST_NAMES:
            continue
        opts = [x for x in w[1:] if x.startswith("-")]
        paths = [x for x in w[1:] if not x.startswith("-")]
        if paths:
            out.append((p, opts, paths))
    return out


def collection_hit(args: list, cwd: str, repo: str, pats: list, env=None) -> str | None:
    """The heavy pattern `pytest DIR` whose DIR the collection of `pytest ARGS` in ``cwd`` includes."""
    import glob as globmod

    from swarmgate import lean_path as posixpath
    from swarmgate.hooks.pytest_collection import includes, roots

    if not pats:
        return None
    collected, ignored, norecurse = roots(list(args), cwd, env)
    base = repo or cwd

    def named(p: str) -> bool:
        full = p if p.startswith("/") else posixpath.join(base, p)
        if any(c in p for c in "*?["):
            return any(includes(collected, ignored, d, norecurse) for d in globmod.glob(full.rstrip("/")))
        return includes(collected, ignored, full, norecurse)

    for text, opts, paths in pats:
        if opts and not all(o in args for o in opts):
            continue
        if all(named(p) for p in paths):
            return text
    return None


def _stamp(repo: str) -> str:
    from swarmgate import lean_os as os
    from swarmgate import lean_path

    out = []
    for name in _SCRIPT_FILES:
        try:
            st = os.stat(lean_path.join(repo, name), follow_symlinks=False)
        except OSError:
            continue
        out.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return " ".join(out)


def _quote(word: str) -> str:
    if word and all(c.isalnum() or c in "@%+=:,./-_" for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _bodies(patterns, config, repo: str) -> list[str]:
    """The workload patterns of the heavy patterns' script bodies, read by the bash reader from ``repo``."""
    from swarmgate.hooks.bash_tree import analyze
    from swarmgate.hooks.command_patterns import Argv, first_match, views
    from swarmgate.hooks.test_runs import not_a_run

    b = config["bash"]
    verify = list(config["scope"]["verify_patterns"])
    out: list[str] = []
    for p in patterns:
        if any(c in p for c in "*?["):
            continue
        try:
            analysis = analyze(p, cwd=repo, max_depth=int(b["max_depth"]), budget_s=b["budget_ms"] / 1000.0,
                               max_script_bytes=int(b["max_script_bytes"]), parser="lexical")
        except Exception:  # noqa: BLE001 - a body nobody can read gives no pattern; the pattern itself stands
            continue
        found: list[list[str]] = []
        for c in analysis.commands:
            if not c.via or not c.words or getattr(c, "is_data", False) or not_a_run(c):
                continue
            dyn = list(getattr(c, "dynamic", None) or [])
            dyn += [False] * (len(c.words) - len(dyn))
            if dyn[0]:
                continue
            # the workload's words: an option's value (`--workers=2`) and short flags (`-x`) are how it
            # runs, not what; a word the reader could not resolve drops out
            words = [w for w, d in zip(c.words, dyn) if not d and not (w.startswith("-") and
                                                                       (not w.startswith("--") or "=" in w))]
            name, args = views(basename(words[0]), words[1:])[-1]
            name = basename(name)
            if name in _NOT_WORKLOADS or (c.name in _NOT_WORKLOADS and name == c.name):
                continue
            found.append([name, *args])
        runs = [w for w in found if first_match(Argv(w), [*RUNNERS, *verify])]
        for w in runs or (found if len(found) == 1 else []):
            text = " ".join(_quote(x) for x in w)
            if text not in out and text not in patterns:
                out.append(text)
    return out


def body_patterns(config, repo: str | None, save: bool = False) -> list[str]:
    """The heavy script bodies' patterns for ``repo``, cached in the state directory under the stamp of
    its package and task files. The guards only read that cache (a check changes nothing); SessionStart
    (writing the exec-time shims) saves it, so the guards read the files again only after they changed
    within a session."""
    from swarmgate import lean_path

    patterns = list(config["heavy"]["patterns"])
    if not repo or not patterns:
        return []
    stamp = _stamp(repo)
    if not stamp:
        return []
    key = "\0".join([str(_VERSION), lean_path.realpath(repo), *patterns, "|", *config["scope"]["verify_patterns"],
                     "|", stamp])
    hit = _cache.get(("bodies", key))
    if hit is not None:
        return hit
    path = _cache_path()
    saved = _read(path) if path else {}
    got = saved.get(key)
    if isinstance(got, list) and all(isinstance(x, str) for x in got):
        _cache[("bodies", key)] = got
        return got
    got = _bodies(patterns, config, repo)
    _cache[("bodies", key)] = got
    if path and save:
        saved = dict(list(saved.items())[-31:])
        saved[key] = got
        _write(path, saved)
    return got


def _cache_path():
    from swarmgate.state_paths import heavy_bodies_cache_path

    try:
        return heavy_bodies_cache_path()
    except Exception:  # noqa: BLE001 - no state directory: no cache, the bodies are read each time
        return None


def _read(path) -> dict:
    from swarmgate.statefile import read_json

    try:
        return read_json(path, {}, report=lambda _msg: None)
    except OSError:
        return {}


def _write(path, data: dict) -> None:
    from swarmgate.statefile import write_json_atomic

    try:
        write_json_atomic(path, data, durable=False)
    except OSError:
        pass   # a cache that cannot be written costs a re-read next time, nothing else


def workload_patterns(config, repo: str | None = None) -> list[str]:
    """The heavy patterns, the spellings `[heavy] equivalents` reads as them (ALT without its {}), and
    with ``repo`` the patterns of its heavy script bodies: every program the shims must cover
    (hooks/exec_shims.plan's ``patterns``)."""
    out = list(config["heavy"]["patterns"])
    try:
        eq = in_force(config)
    except PatternError:
        return out
    out += [" ".join([a.name, *(w for w in a.words if w != HOLE)]) for a in eq.aliases]
    if eq.bodies and repo:
        out += body_patterns(config, repo, save=True)
    return out
