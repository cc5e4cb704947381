"""Which commands of a shell call are heavy (the `[heavy] patterns`, `[bash] make_targets`),
whether they run under a memory-capped runner, and the rewrite that puts them there; which
use a GPU (`[gpu] patterns`).

Shared by B01, B02 (hooks/heavy_guards.py) and R01 (hooks/resource_report.py, through the
"host_resources" fact of hooks/derivations.py).
"""
from __future__ import annotations

from swarmgate.hooks.shell_event import analysis_of, launchers, runnable
from swarmgate.hooks.test_runs import not_a_run

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis, SimpleCommand


def heavy_match(cmd: SimpleCommand, config: Config, cwd: str | None, repo: str | None) -> str | None:
    from swarmgate.hooks.command_patterns import first_match

    if not_a_run(cmd):
        return None
    hit = first_match(cmd, config["heavy"]["patterns"], cwd=cwd, repo=repo)
    if hit:
        return hit
    targets = config["bash"]["make_targets"]
    if targets and cmd.words and cmd.name in ("make", "gmake"):
        skip = False
        for a in cmd.args:
            if skip:
                skip = False
                continue
            if a in ("-C", "-f", "-j", "-l", "-o", "-W", "--directory", "--file", "--makefile"):
                skip = True
                continue
            if a in targets:
                return f"make {a}"
    return equivalent_match(cmd, config, cwd, repo)


def equivalent_match(cmd: SimpleCommand, config: Config, cwd: str | None, repo: str | None) -> str | None:
    """The heavy pattern ``cmd`` is a workload of by `[heavy] equivalents` (hooks/heavy_equivalents.py),
    named with the entry that made it so, or None."""
    from swarmgate.hooks.command_patterns import Argv, first_match, views
    from swarmgate.hooks.equivalents_table import BODIES, COLLECTIONS, PYTEST_NAMES, in_force
    from swarmgate.hooks.heavy_equivalents import alias_views, body_patterns, collection_hit, pytest_patterns

    if not cmd.words:
        return None
    eq = in_force(config)
    patterns = config["heavy"]["patterns"]
    here = getattr(cmd, "cwd", None) or cwd
    seen = views(cmd.name, list(cmd.args))
    canon: list = []
    if eq.aliases:
        for n, a in seen:
            for cn, ca in alias_views(n, a, eq):
                hit = first_match(Argv([cn, *ca]), patterns, cwd=here or "", repo=repo or "")
                if hit:
                    return f"{hit} (read as {' '.join([cn, *ca])}, by [heavy] equivalents)"
                canon.append((cn, ca))
    bodies = body_patterns(config, repo) if eq.bodies else []
    if bodies:
        for n, a in [*seen, *canon]:
            hit = first_match(Argv([n, *a]), bodies, cwd=here or "", repo=repo or "")
            if hit:
                return f"{hit} (the body of a heavy script: [heavy] equivalents, {BODIES})"
    tests = [a for n, a in [*seen, *canon] if n in PYTEST_NAMES]
    pats = pytest_patterns([*patterns, *bodies]) if eq.collections and tests else []
    env = dict(getattr(cmd, "assignments", None) or {}) if pats else {}
    for a in tests if pats else ():
        hit = collection_hit(a, here or repo or ".", repo or "", pats, env)
        if hit:
            return f"{hit} (its collection includes that directory: [heavy] equivalents, {COLLECTIONS})"
    return None


def via_argvs(cmd) -> list[tuple[tuple, list[str]]]:
    """(the via labels up to it, the argv) of each run ``cmd`` was reached as: a recipe line is run
    *as* `make TARGET` (via "make:TARGET"), a package script's body as `npm run NAME`."""
    out = []
    via = tuple(getattr(cmd, "via", ()) or ())
    for k, v in enumerate(via):
        if v.startswith("make:"):
            out.append((via[:k + 1], ["make", v[len("make:"):]]))
        elif v.startswith("npm script:"):
            out.append((via[:k + 1], ["npm", "run", v[len("npm script:"):]]))
    return out


def via_match(cmd: SimpleCommand, config: Config, cwd: str | None, repo: str | None) -> tuple | None:
    """(the via labels, the pattern) when a run ``cmd`` was reached through is heavy, else None."""
    runs = via_argvs(cmd)
    if not runs or not_a_run(cmd):
        return None
    from swarmgate.hooks.command_patterns import Argv

    for labels, argv in runs:
        hit = heavy_match(Argv(argv), config, getattr(cmd, "cwd", None) or cwd, repo)
        if hit:
            return labels, hit
    return None


def heavy_commands(event: HookEvent, config: Config) -> list[tuple[int, SimpleCommand, str]]:
    """[(index, cmd, pattern)] heavy commands of the event's shell command (cached per event)."""
    analysis = analysis_of(event, config)
    if analysis is None:
        return []

    def build() -> list[tuple[int, SimpleCommand, str]]:
        cwd = event.cwd or event.repo
        out = []
        seen = set()
        through: set = set()
        for i, c in runnable(analysis.commands):
            hit = heavy_match(c, config, cwd, event.root)
            if not hit:
                # a recipe line or script body is run as `make TARGET` / `npm run NAME`: that run is
                # judged too (a makefile fed on stdin names check-full as a prerequisite: make -f - x)
                found = via_match(c, config, cwd, event.root)
                if found and found[0] not in through:
                    through.add(found[0])
                    hit = found[1]
            if hit:
                seen.add(id(c))
                # one started by another heavy command (a heavy gate script's lines) is judged through it
                if not any(id(p) in seen for p in launchers(analysis.commands, i)):
                    out.append((i, c, hit))
        return out
    return event.derived("bash.heavy", build)


def runner_of(cmd: SimpleCommand, runners: list[str]) -> str | None:
    names = set(runners)
    for w in tuple(getattr(cmd, "wrappers", ()) or ()) + tuple(getattr(cmd, "via", ()) or ()):
        base = w.split()[0].rsplit("/", 1)[-1] if w else ""
        if base in names or w in names:
            return base
    return None


def _after_dashes(words: list) -> list:
    return list(words[words.index("--") + 1:]) if "--" in words else []


def granted_argvs(event: HookEvent, config: Config) -> list[tuple[list, str]]:
    """(argv, pattern) for each run of the main agent's call that may start heavy programs: the
    command after `--` of each runner (run-with-memory-cap, host-dispatch; not a peer's
    multi-host-run) that leads to a heavy command with the approved prefix, and `sh -c STAGE` for
    each heavy stage of the commit gate when the prefixed call commits or runs gate-staged.
    The act of B01 records them as single-use grants (swarmgate/heavy_grants.py); the runner
    consumes the one equal to its command."""
    from swarmgate.hooks.shell_event import command_env

    analysis = analysis_of(event, config)
    if analysis is None or event.is_subagent:
        return []
    var, values = config["heavy"]["prefix_var"], config["heavy"]["prefix_values"]
    runners = {r for r in config["heavy"]["runners"] if r != "multi-host-run"}
    out: list[tuple[list, str]] = []
    for i, _cmd, pat in heavy_commands(event, config):
        if command_env(analysis, i).get(var) not in values:
            continue
        for p in launchers(analysis.commands, i):
            if p.name in runners:
                argv = _after_dashes(list(p.words))
                if argv and (argv, pat) not in out:
                    out.append((argv, pat))
                break
    stages = [st for st in config["gate"]["stages"] if st.get("heavy")]
    if stages:
        for i, cmd in runnable(analysis.commands):
            gate = cmd.name == "gate-staged" or (cmd.name == "git" and "commit" in cmd.args
                                                 and "--no-verify" not in cmd.args and "-n" not in cmd.args)
            if gate and command_env(analysis, i).get(var) == "commit":
                out += [(["sh", "-c", st["command"] or "true"], f"gate stage {st['name']}") for st in stages]
                break
    return out


DATA_COMMANDS = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "cat", "head", "tail", "less",
                           "sed", "awk", "git", "man", "which", "type", "command"})


def gpu_words(analysis: Analysis, patterns: list[str]) -> str | None:
    """The first GPU pattern found in an executed command's name, arguments or assignments."""
    pats = [p.lower() for p in patterns]
    for c in analysis.commands:
        if c.name in DATA_COMMANDS:
            continue
        words = list(c.words) + [f"{k}={v}" for k, v in (c.assignments or {}).items()]
        for w in words:
            lw = w.lower()
            for p in pats:
                if p in lw:
                    return p
    return None
