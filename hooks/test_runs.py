"""What a test run is, for the shell guards: a runner that only lists or dry-runs is not a
run (`--collect-only`, `make -n`), a command that runs the whole suite (`pytest` with no
path, `cargo test --workspace`), and the run scope a verification run declares
(SWARMGATE_RUN_SCOPE='kind=...; target=...; range=...; reason=...').

Light at import: command_patterns is imported when a check needs it.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.hooks.bash_results import SimpleCommand


SCOPE_FIELDS = ("kind", "target", "range", "reason")
SCOPE_KINDS = ("full", "items", "light", "target")
# per program, the arguments with which it only lists, builds, explains or dry-runs: not a run
# (B01, B10). Only where the program itself means that: `npm run test:e2e --list` runs the
# script (npm swallows --list), `bash gate.sh --help` runs whatever gate.sh does.
_HELP = ("--help", "-h", "--version", "-V")
DRY_RUN = {
    "pytest": _HELP + ("--collect-only", "--co", "--fixtures", "--fixtures-per-test", "--markers",
                       "--setup-plan"),
    "cargo": _HELP + ("--no-run", "--list"),
    "just": _HELP + ("--list", "-l", "-n", "--dry-run", "--summary", "--show", "-s", "--evaluate",
                     "--dump", "--variables"),
    "task": _HELP + ("--list", "-l", "--list-all", "-a", "--dry", "-n", "--summary"),
    "tox": _HELP + ("-l", "--listenvs", "-a", "--listenvs-all", "--showconfig"),
    "nox": _HELP + ("-l", "--list", "--list-sessions"),
    "go": _HELP + ("-list", "-n"),
    "jest": _HELP + ("--listTests", "--showConfig"),
    "vitest": _HELP + ("list",),
    "playwright": _HELP + ("--list",),
    "ctest": _HELP + ("-N", "--show-only"),
    "ninja": _HELP + ("-n", "--dry-run"),
    "npm": ("--help", "-h", "--usage"), "yarn": ("--help", "-h"), "pnpm": ("--help", "-h"),
    "bun": ("--help", "-h"),
    "qemu-system-*": _HELP, "herd7": ("-help", "-version"),
}
DRY_RUN["py.test"] = DRY_RUN["pytest"]
# kept for callers that list them
NOT_A_RUN = frozenset(a for v in DRY_RUN.values() for a in v)
_MAKE_DRY = frozenset(("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p",
                       "--print-data-base"))
_SCOPE_ALIASES = {"種類": "kind", "対象": "target", "範囲": "range", "理由": "reason"}


def not_a_run(cmd: SimpleCommand) -> bool:
    """The runner only lists, builds, explains or dry-runs (`pytest --collect-only`, `cargo test
    --no-run`, `make -n`), by the words that mean that for this program (``DRY_RUN``)."""
    from swarmgate.hooks.command_patterns import views

    name = cmd.name
    args = list(cmd.args)
    for vname, vargs in views(name, args):   # `python -m pytest --help` is pytest's --help
        words = DRY_RUN.get(vname)
        if words is None and vname.startswith("qemu-system-"):
            words = DRY_RUN["qemu-system-*"]
        if not words:
            continue
        # before `--` (after it, the words belong to the program it runs), except cargo's test
        # harness: `cargo test -- --list` lists
        head = vargs[:vargs.index("--")] if "--" in vargs else vargs
        if any(a in words for a in head):
            return True
        if vname == "cargo" and "--" in vargs and "--list" in vargs[vargs.index("--"):]:
            return True
    if name in ("make", "gmake"):
        return any(a in _MAKE_DRY or (a.startswith("-") and not a.startswith("--")
                                      and ("n" in _letters(a[1:]) or "q" in _letters(a[1:])))
                   for a in args)
    return False


def _letters(cluster: str) -> str:
    """The option letters of a short cluster before any value (`-nj4` -> "nj")."""
    out = []
    for c in cluster:
        if not c.isalpha():
            break
        out.append(c)
        if c in "jlCfIoW":   # make options whose value may follow in the same word
            break
    return "".join(out)


def parse_scope(value: str) -> dict:
    """`kind=items; target=...; range=...; reason=...` as a dict (keys lower-cased; 種類/対象/範囲/理由 accepted)."""
    out = {}
    text = value.replace("；", ";").replace("＝", "=")
    for part in text.split(";"):
        k, eq, v = part.partition("=")
        if not eq:
            continue
        k = k.strip()
        k = _SCOPE_ALIASES.get(k, k.lower())
        out[k] = v.strip()
    return out


# the words scope_template writes for the model to replace (B10 refuses them as they are)
TEMPLATE_WORDS = {"target": "what you run", "range": "how much of it", "reason": "why this run, now"}
# what a subagent's whole-suite run gets appended in a way-out: the tests it may run instead
NARROW_WORDS = "the tests of your change"
_PLACEHOLDER_TEXTS = frozenset([*TEMPLATE_WORDS.values(), "full|items|light|target", "full | items | light | target",
                                "fill in", "tbd", "todo", "xxx"])


def scope_template(var: str, kind: str = "items") -> str:
    return (f"{var}='kind={kind}; target=<{TEMPLATE_WORDS['target']}>; range=<{TEMPLATE_WORDS['range']}>; "
            f"reason=<{TEMPLATE_WORDS['reason']}>'")


# the main agent's heavy run as the docs and rule texts show it: the prefix, the scope to fill in,
# the runner with `auto` (the cap this machine and the command's history give, host_defaults)
HEAVY_RUN_EXAMPLE = ("SWARMGATE_HEAVY=commit " + scope_template("SWARMGATE_RUN_SCOPE", "full")
                     + " run-with-memory-cap auto -- cargo test --workspace")


def unfilled(value: str) -> bool:
    """A scope field still as a template shows it: `<...>`, `...`, or the template's own words."""
    v = value.strip()
    if not v:
        return False
    if "<" in v and ">" in v[v.index("<"):]:
        return True
    if not v.strip(".…· "):
        return True
    low = " ".join(v.strip("<>\"' ").lower().split())
    return low in _PLACEHOLDER_TEXTS or "fill in" in low


def unfilled_fields(scope: dict) -> list[str]:
    """The fields of a parsed scope that still hold a placeholder."""
    return [f for f in SCOPE_FIELDS if scope.get(f) and unfilled(scope[f])]


def scope_problems(scope: dict, min_reason: int) -> list[str]:
    """Why a parsed scope would be refused by B10 whatever the command: missing or unfilled fields,
    an unknown kind, a short reason ([] when none)."""
    out = [f"lacks {f}" for f in SCOPE_FIELDS if not scope.get(f)]
    out += [f"{f} is not filled in" for f in unfilled_fields(scope)]
    if scope.get("kind") and scope["kind"].lower() not in SCOPE_KINDS:
        out.append(f"kind {scope['kind']!r} is unknown")
    if scope.get("reason") and len(scope["reason"]) < min_reason:
        out.append("reason too short")
    return out


_PYTEST_VALUE_OPTS = frozenset(("-p", "-c", "-o", "-W", "-n", "--tb", "--maxfail", "--junitxml",
                                "--junit-xml", "--rootdir", "--basetemp", "--durations", "--cov",
                                "--cov-report", "--ignore", "--ignore-glob", "--deselect", "--confcutdir",
                                "--log-level", "--timeout", "-r", "--import-mode", "--capture",
                                "--dist", "--color", "--override-ini", "--cov-config"))
_PYTEST_NARROW_OPTS = frozenset(("-k", "-m", "--lf", "--last-failed", "--sw", "--stepwise"))
_CARGO_NARROW = frozenset(("-p", "--package", "--lib", "--bin", "--bins", "--test", "--tests",
                           "--bench", "--benches", "--example", "--examples", "--doc"))
_CARGO_VALUE_OPTS = frozenset(("-j", "--jobs", "--features", "-F", "--target", "--target-dir",
                               "--profile", "--manifest-path", "--color", "--message-format",
                               "-Z", "--config", "--exclude"))


def whole_suite(cmd: SimpleCommand) -> str | None:
    """Why this verification command runs the whole suite (pytest/cargo test shapes), or None."""
    from swarmgate.hooks.command_patterns import basename, views

    for name, args in views(basename(cmd.name), list(cmd.args)):
        name = basename(name)
        if name in ("pytest", "py.test"):
            skip = False
            narrowed = False
            for a in args:
                if skip:
                    skip = False
                    continue
                opt = a.split("=", 1)[0]
                if opt in _PYTEST_NARROW_OPTS:
                    narrowed = True
                    break
                if opt in _PYTEST_VALUE_OPTS and "=" not in a:
                    skip = True
                    continue
                if a.startswith("-"):
                    continue
                if a not in (".", "./"):
                    narrowed = True
                    break
            if not narrowed:
                return "`pytest` with no path, test id, -k or -m runs the whole suite"
        if name == "cargo" and "test" in args:
            rest = args[args.index("test") + 1:]
            if "--workspace" in rest or "--all" in rest:
                return "`cargo test --workspace` runs every crate's tests"
            skip = False
            for a in rest:
                if a == "--":
                    break
                if skip:
                    skip = False
                    continue
                opt = a.split("=", 1)[0]
                if opt in _CARGO_NARROW:
                    return None
                if opt in _CARGO_VALUE_OPTS and "=" not in a:
                    skip = True
                    continue
                if a.startswith("-"):
                    continue
                return None  # a test-name filter
            return "`cargo test` with no package, target or test filter runs the whole suite"
    return None
