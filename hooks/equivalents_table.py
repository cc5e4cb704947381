"""The table of `[heavy] equivalents` (issue 24 item 3, docs/bash-guards.md "Equivalents of a heavy
run"): the built-in entries and their parsing. Parsing only (the config's validator reads it);
hooks/heavy_equivalents.py answers for one command with the parsed table.
"""
from __future__ import annotations

from swarmgate.hooks.command_patterns import PatternError, basename, split_words

PYTEST_NAMES = ("pytest", "py.test")  # pytest's programs, for every reader of its arguments
COLLECTIONS = "pytest collections"
BODIES = "script bodies"
HOLE = "{}"
DEFAULTS = (
    "py.test = pytest",
    "cargo nextest run = cargo test",
    "cargo-nextest nextest run = cargo test",
    "cargo llvm-cov nextest = cargo test",
    "cargo llvm-cov test = cargo test",
    "cargo llvm-cov = cargo test",
    "cargo tarpaulin = cargo test",
    "cargo mutants = cargo test",
    "cargo miri test = cargo test",
    "cargo careful test = cargo test",
    "cargo hack test = cargo test",
    "cargo insta test = cargo test",
    "cargo watch -x {} = cargo {}",
    "cargo watch --exec {} = cargo {}",
    "cargo-watch watch -x {} = cargo {}",
    COLLECTIONS,
    BODIES,
)
class Alias:
    __slots__ = ("text", "name", "words", "canon")

    def __init__(self, text: str, name: str, words: tuple, canon: tuple) -> None:
        self.text = text
        self.name = name
        self.words = words
        self.canon = canon


class Equivalents:
    __slots__ = ("aliases", "names", "collections", "bodies")

    def __init__(self, aliases: tuple, collections: bool, bodies: bool) -> None:
        self.aliases = aliases
        self.names = frozenset(a.name for a in aliases)
        self.collections = collections
        self.bodies = bodies


_cache: dict = {}


def entries(configured) -> list[str]:
    """The entries in force: the built-in table, less each `no ENTRY`, plus the configured ones (checked:
    a bad one raises PatternError naming it)."""
    drop = {" ".join(e[3:].split()) for e in configured if e.startswith("no ")}
    out = [e for e in DEFAULTS if " ".join(e.split()) not in drop]
    out += [e for e in configured if not e.startswith("no ") and e not in out]
    parse(out)
    return out


def in_force(config) -> Equivalents:
    """The parsed table of ``config`` (the built-in one when the config leaves the key unset)."""
    configured = config["heavy"]["equivalents"]
    return parse(DEFAULTS if configured is None else configured)


def parse(entries) -> Equivalents:
    """The entries of `[heavy] equivalents`; one that is neither `ALT = CANON` nor a named rule
    raises PatternError naming it."""
    key = tuple(entries)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    aliases = []
    collections = bodies = False
    for e in key:
        text = " ".join(str(e).split())
        if text == COLLECTIONS:
            collections = True
            continue
        if text == BODIES:
            bodies = True
            continue
        alt, eq, canon = str(e).partition(" = ")
        if not eq:
            raise PatternError(f"{e!r} is neither `ALT = CANON` nor {COLLECTIONS!r} or {BODIES!r}")
        aw, cw = split_words(alt), split_words(canon)
        if not aw or not cw:
            raise PatternError(f"{e!r} has an empty side")
        if aw.count(HOLE) > 1 or cw.count(HOLE) > (1 if HOLE in aw else 0):
            raise PatternError(f"{e!r}: {HOLE} stands once in ALT, and in CANON only when ALT has it")
        aliases.append(Alias(str(e), basename(aw[0]), tuple(aw[1:]), tuple(cw)))
    out = _cache[key] = Equivalents(tuple(aliases), collections, bodies)
    return out
