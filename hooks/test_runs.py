"""What a test run is, for the shell guards: a runner that only lists or dry-runs is not a
run (`--collect-only`, `make -n`), a command that runs the whole suite (`pytest` with no
path, `cargo test --workspace`), and the run scope a verification run declares
(SWARMGATE_RUN_SCOPE='kind=...; target=...; range=...; reason=...').

Light at import: command_patterns is imported when a check needs it.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import SimpleCommand


SCOPE_FIELDS = ("kind", "target", "range", "reason")
SCOPE_KINDS = ("full", "items", "light", "target")
# arguments with which a test runner only lists, builds or explains: not a verification run (B10)
NOT_A_RUN = frozenset(("--version", "-V", "--help", "-h", "--collect-only", "--co", "--fixtures",
                       "--markers", "--no-run", "--list"))
_MAKE_DRY = frozenset(("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p",
                       "--print-data-base"))
_SCOPE_ALIASES = {"種類": "kind", "対象": "target", "範囲": "range", "理由": "reason"}


def not_a_run(cmd: SimpleCommand) -> bool:
    """The runner only lists, builds, explains or dry-runs (`--no-run`, `--help`, `make -n`)."""
    args = cmd.args
    if any(a in NOT_A_RUN for a in args):
        return True
    if cmd.name in ("make", "gmake"):
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


def scope_template(var: str, kind: str = "items") -> str:
    return (f"{var}='kind={kind}; target=<what you run>; range=<how much of it>; "
            f"reason=<why this run, now>'")


def scope_prefix(event: HookEvent, config: Config, cmd: SimpleCommand, env: dict[str, str]) -> str:
    """`SWARMGATE_RUN_SCOPE='...' ` to put in a rewrite when the command is a verification run
    that has no scope yet (so following one way out does not walk into B10)."""
    from swarmgate.hooks.command_patterns import first_match

    sc = config["scope"]
    if sc["prefix_var"] in env or not first_match(cmd, sc["verify_patterns"], cwd=event.cwd or event.repo,
                                                  repo=event.repo):
        return ""
    full = first_match(cmd, sc["full_patterns"], cwd=event.cwd or event.repo, repo=event.repo) or whole_suite(cmd)
    return scope_template(sc["prefix_var"], "full" if full else "items") + " "


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
