"""The self-test harness (SPEC §7): every protection proves it can turn red, for the reason it names.

A suite is a set of cells (each a check of one protection) and a map from break switch to the
cells it must turn red. A cell reports one of three states (swarmgate/cell_outcome.py): green
(the protection acted), red (what it protects against happened, as the switch allows) or broken
(anything else: a crash, a tool's 251, a timeout). The harness runs every cell clean (all must
be green), then, for each switch, writes a fresh self-test marker, sets SWARMGATE_BREAK=<switch>
and requires each named cell to go red. A switch that leaves its cells green means the
protection it names is untested; a broken cell means the cell proves nothing: either fails the
self-test.

``run_suite(suite, inert=True)`` runs the same with every switch made inert (the marker says so:
tools and hooks honour no switch, refuse none): the mutation test (tests/swarmgate/selftest_mutation_test.py)
requires every suite to fail that way, each switched cell staying green.

Suites: one per guard (built from the guard's cases) and one per host tool
(registered in TOOL_SUITES as "module:function" returning a Suite). ``report(names)`` runs them and
prints a line per cell; `swarmgate selftest` (swarmgate/selftest_cli.py) and every tool's
``--selftest`` (swarmgate/front_door.py) call it. The harness imports no front door: the front door
runs it.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import tempfile
import time

from swarmgate import tool_table


class Cell:
    __slots__ = ("name", "run")

    def __init__(self, name: str, run) -> None:
        self.name = name
        self.run = run  # () -> cell_outcome.Observed (a bool is read as green/red)


class Suite:
    def __init__(self, name: str, cells: list, switches: dict, setup=None, teardown=None) -> None:
        self.name = name
        self.cells = list(cells)
        self.switches = dict(switches)  # switch -> [cell names that must go red]
        self.setup = setup
        self.teardown = teardown


class Result:
    def __init__(self, suite: str) -> None:
        self.suite = suite
        self.rows: list[tuple[str, str, str, bool]] = []  # (switch or "", cell, observed, ok)
        self.states: list[str] = []  # the state of each row (green / red / broken / missing)

    @property
    def ok(self) -> bool:
        return all(r[3] for r in self.rows)

    def add(self, switch: str, cell: str, state: str, detail: str, ok: bool) -> None:
        shown = state if not detail else f"{state}: {detail}"
        self.rows.append((switch, cell, shown, ok))
        self.states.append(state)


# Tool suites: name -> "module:function"; the function returns a Suite. From the one tool list.
TOOL_SUITES: dict[str, str] = tool_table.suites()


@contextlib.contextmanager
def scoped_env(extra: dict):
    """``extra`` set in this process's environment while the block runs, the old values back after."""
    old = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def observe(cell: Cell):
    """The cell's Observed; an exception is BROKEN (named), never red."""
    from swarmgate.cell_outcome import broken, of
    try:
        return of(cell.run())
    except Exception as e:  # noqa: BLE001 - a crashing cell proves nothing
        return broken(f"the cell raised {type(e).__name__}: {e}")


def run_suite(suite: Suite, inert: bool = False) -> Result:
    """Every cell clean (want green), then every switch's cells (want red). ``inert``: every switch
    set, but made to do nothing (the mutation test).

    The suite runs with a state directory of its own (SWARMGATE_STATE_DIR), removed after it: what
    its cells book, record, remind or alert never reaches the machine's state, where a reminder a
    cell set would wake a real session and a capped run would join the run history (issue 22)."""
    state = tempfile.mkdtemp(prefix="swarmgate-selftest-state-")
    try:
        with scoped_env({"SWARMGATE_STATE_DIR": state}):
            return _run_suite(suite, inert)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def _run_suite(suite: Suite, inert: bool) -> Result:
    from swarmgate.break_switch import BREAK_ENV, selftest_marker
    from swarmgate.cell_outcome import GREEN, RED

    res = Result(suite.name)
    if suite.setup:
        suite.setup()
    try:
        with scoped_env({BREAK_ENV: ""}):
            os.environ.pop(BREAK_ENV, None)
            for cell in suite.cells:
                o = observe(cell)
                res.add("", cell.name, o.state, o.detail, o.state == GREEN)
        by_name = {c.name: c for c in suite.cells}
        for switch, names in suite.switches.items():
            with selftest_marker(inert=inert) as marker_env, scoped_env({**marker_env, BREAK_ENV: switch}):
                for name in names:
                    cell = by_name.get(name)
                    if cell is None:
                        res.add(switch, name, "missing", "no such cell", False)
                        continue
                    o = observe(cell)
                    res.add(switch, name, o.state, o.detail, o.state == RED)
    finally:
        if suite.teardown:
            suite.teardown()
    return res


# --- guard suites, built from each guard's cases ---

# Each guard case runs with its own state directory inside its temp repository, so a
# case never reads or writes the machine's state (SWARMGATE_STATE_DIR). A case seeds
# state through `files` under this directory, e.g.
# ".selftest-state/sessions/selftest-session/state.json". (Break switches keep working: the
# marker lives in a fixed place no variable moves, see break_switch.)
CASE_STATE_DIR = ".selftest-state"
# the user's Claude Code directory of a case (user-level agents, plugins): inside its repository,
# so a case never reads the person's ~/.claude (CLAUDE_CONFIG_DIR, as Claude Code reads it)
CASE_CLAUDE_DIR = ".selftest-claude"


@contextlib.contextmanager
def _case_state_dir(path: str):
    os.makedirs(path, exist_ok=True)
    with scoped_env({"SWARMGATE_STATE_DIR": path}):
        yield


def guard_case_outcome(g, case):
    """Run one guard on one case in a fresh temp repository, as the hook would: derive, check, and
    (when it found something) its act. GREEN when it did what the case says (fired or stayed
    quiet), RED when it did not, BROKEN when the check or the act crashed or overran its budget
    (the engine would then fail closed or pass with a note: neither is the guard's judgement)."""
    from swarmgate.cell_outcome import broken, green, red

    found, what = case_findings(g, case)
    if what:
        return broken(what)
    if bool(found) == case.fires:
        return green("fired" if found else "quiet")
    return red(f"{g.code} " + ("did not fire" if case.fires else f"fired: {found[0].message[:120]}"))


def case_findings(g, case, act: bool = True) -> tuple[list, str]:
    """(the findings of guard ``g`` on ``case``, '' or what broke) in a fresh temp repository, as the
    hook would: derive, check, and (``act``, when it found something) its act. The way-outs an agent
    is given on a case are these findings' (tests/e2e/agent_commands.py pastes them)."""
    from swarmgate import hook_engine as E
    from swarmgate.config import Config, parse_toml, validate
    from swarmgate.hook_protocol import HookEvent

    repo = tempfile.mkdtemp(prefix="swarmgate-selftest-")
    case_slice = ""
    try:
        for rel, content in case.files.items():
            path = os.path.join(repo, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)
        cfg_path = None
        raw: dict = {}
        if case.config:
            cfg_path = os.path.join(repo, ".claude", "swarmgate.toml")
            os.makedirs(os.path.dirname(cfg_path), exist_ok=True)
            with open(cfg_path, "w") as f:
                f.write(case.config)
            raw = parse_toml(cfg_path)
        config = Config(validate(raw, cfg_path), cfg_path, repo, raw)
        if "slice" not in (raw.get("memory") or {}):   # a case's cgroups (X02's act) never go under the machine's slice
            case_slice = f"swarmgate-selftest-case-{os.getpid()}"
            config["memory"]["slice"] = case_slice
        payload = {"session_id": "selftest-session", "transcript_path": "", "cwd": repo,
                   "hook_event_name": case.event}
        payload.update(case.payload)
        payload["cwd"] = os.path.join(repo, payload["cwd"])   # a case's cwd is relative to its repository
        event = HookEvent(case.event, payload, repo)
        budget = g.budget_ms or int(config["hooks"]["guard_budget_ms"])
        with _case_state_dir(os.path.join(repo, CASE_STATE_DIR)), \
                scoped_env({"SWARMGATE_SELFTEST_CASE": "1", "CLAUDE_CONFIG_DIR": os.path.join(repo, CASE_CLAUDE_DIR)}):
            active = E._active(event, config, [g])
            found: list = []
            if active:
                E.derive(event, config, active, None)
                found, what = E._run_one(g, g.check, event, config, budget)
                if what:
                    return [], f"the {g.code} check {what}"
                found = [f for f in found if f.code == g.code]
                if act and found and g.act is not None:
                    _, what = E._run_one(g, g.act, event, config, budget)
                    if what:
                        return [], f"the {g.code} act {what}"
        return found, ""
    finally:
        if case_slice:
            _remove_slice(case_slice)
        shutil.rmtree(repo, ignore_errors=True)


def _remove_slice(name: str) -> None:
    """Remove a case's slice and what its act made in it (an agent cgroup), where there is one."""
    from swarmgate.hosts import cgroups
    try:
        backend = cgroups.get("auto")
        if os.path.isdir(backend.slice_path(name)):
            backend.remove_slice(name)
    except (cgroups.CgroupError, OSError):
        pass


def guard_suite(g) -> Suite:
    cells = []
    switches: dict[str, list[str]] = {s: [] for s in g.breaks}
    for case in g.cases:
        cells.append(Cell(case.name, (lambda c=case: guard_case_outcome(g, c))))
        for s in case.breaks:
            switches.setdefault(s, []).append(case.name)
    return Suite(g.code, cells, switches)


def all_suites(names: list[str] | None = None) -> list[Suite]:
    from swarmgate.hooks import registry

    suites = [guard_suite(g) for g in registry.guards()]
    for name, target in TOOL_SUITES.items():
        if names and name not in names:
            continue
        mod, func = target.split(":")
        suites.append(getattr(importlib.import_module(mod), func)())
    if names:
        wanted = set(names)
        if "guards" in wanted:
            wanted |= {g.code for g in registry.guards()}
        suites = [s for s in suites if s.name in wanted]
    return suites


def known_names() -> list[str]:
    from swarmgate.hooks import registry
    # a code may have several guards (G01's file side and shell side): name it once
    return list(dict.fromkeys(["guards", *[g.code for g in registry.guards()], *TOOL_SUITES]))


def report(names: list[str] | None = None, quiet: bool = False) -> int:
    """Run the suites ``names`` (all when empty), print a line per cell (``quiet``: failures only)
    and the summary; 0 when every cell did what it must, else 1."""
    t0 = time.monotonic()
    failed = 0
    total = 0
    for suite in all_suites(names or None):
        res = run_suite(suite)
        for switch, cell, observed, ok in res.rows:
            total += 1
            if not ok:
                failed += 1
            if not ok or not quiet:
                where = f"{switch} -> {cell}" if switch else cell
                want = "red" if switch else "green"
                print(f"{'ok  ' if ok else 'FAIL'} {suite.name:<24} {where:<56} {observed} (want {want})")
    dt = time.monotonic() - t0
    print(f"selftest: {total - failed} cells ok, {failed} failed ({dt:.1f}s)")
    return 0 if failed == 0 else 1
