"""gate-staged: check exactly HEAD + the index before a commit (SPEC §10).

    gate-staged [--stage NAME...] [--list] [--no-cache] [--repo PATH] [--selftest]

Builds the tree under test (``swarmgate.gate.tree``: the effective index,
exported with read-only plumbing into a temporary directory), runs the stages
in order (``swarmgate.gate.stages``: the rules stamp, the common stages, the
project's ``[[gate.stages]]``) in that directory with every GIT_* variable
stripped, reuses the verdict of any stage whose key did not change
(``swarmgate.gate.cache``), and prints a summary table. Exit 0 when every stage
is green, 1 when any is red, 251 when the gate itself could not run (not a
repository, a bad config, an unreadable object); nothing in the user's
worktree, index or stash is ever written.

The tree is exported only when a stage has to run: a run where every verdict
is cached reads the index and nothing else.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from swarmgate import break_switch, procinfo
from swarmgate.config import Config, ConfigError, load_config, parse_toml_text, validate
from swarmgate.digest import sha1_hex
from swarmgate.exit_codes import Exit, describe
from swarmgate.front_door import entry
from swarmgate.gate import cache as vcache
from swarmgate.gate.stages import Stage, build, extra_key
from swarmgate.gate.tree import (
    Index,
    Tree,
    TreeError,
    clear_stale,
    effective_index_file,
    locate,
    read_blobs,
    read_index,
    stage_env,
    toplevel,
)
from swarmgate.state_paths import state_dir
from swarmgate.statefile import StateError
from swarmgate.tool_parser import ToolParser

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: an all-cached run imports no typing
    from collections.abc import Sequence
    from typing import Any, TextIO

# What only a stage that runs needs is imported where it is used (preflight, with dataclasses and
# inspect; ctypes; shlex; shutil; importlib.util): an all-cached run, the common one, reads the
# index, the config and the cache, and pays for nothing else (bench/gate_cache.py).

RED_EXIT = 1
CONFIG_REL = ".claude/swarmgate.toml"
NOT_CACHED = {int(Exit.PREFLIGHT), int(Exit.SIGNALLED), int(Exit.OWN_CAP), int(Exit.USAGE), int(Exit.NO_TURN),
              int(Exit.TIMEOUT), int(Exit.PUSHED_OUT), int(Exit.GPU_OOM)}
RUNNER_MODULE = "swarmgate.hosts.runner_cli"


class GateError(Exception):
    """The gate could not run at all (exit 251)."""


class Outcome:
    """What one stage came to: verdict (pass | fail | not-run | error | skipped), how (ran | cached | skipped)."""

    def __init__(self, stage: str, source: str, verdict: str, how: str, seconds: float = 0.0,
                 rc: int | None = None, output: str = "", notes: list[str] | None = None) -> None:
        self.stage = stage
        self.source = source
        self.verdict = verdict
        self.how = how
        self.seconds = seconds
        self.rc = rc
        self.output = output
        self.notes = list(notes or [])

    @property
    def red(self) -> bool:
        return self.verdict in ("fail", "not-run", "error")

    def __repr__(self) -> str:
        return f"Outcome({self.stage!r}, {self.verdict!r}, {self.how!r}, rc={self.rc!r})"


class GateResult:
    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []
        self.notes: list[str] = []
        self.tree_path: str | None = None
        self.text = ""

    @property
    def red(self) -> bool:
        return any(o.red for o in self.outcomes)

    def __repr__(self) -> str:
        return f"GateResult({self.outcomes!r}, notes={self.notes!r})"


# --- config: the staged one when the index has it ---

def load_gate_config(repo: Path, index: Index, notes: list[str]) -> Any:
    staged = index.by_path().get(CONFIG_REL)
    worktree = repo / CONFIG_REL
    if staged is None:
        return load_config(str(repo))

    try:
        mine = worktree.read_bytes()
    except OSError:
        mine = None
    if mine is not None and sha1_hex(b"blob %d\0" % len(mine) + mine) == staged.oid:
        data = mine  # the worktree file is the staged blob: no need to ask git
    else:
        (_, data), = list(read_blobs(repo, [staged.oid], index.index_file))
    where = f"{repo / CONFIG_REL} (staged)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    raw = parse_toml_text(text, where)
    if mine != data:
        notes.append(f"{CONFIG_REL} has unstaged changes: the gate used the staged version "
                     f"(`git add {CONFIG_REL}` to use yours)")
    return Config(validate(raw, where), where, str(repo), raw)


# --- running one stage ---

def _pdeathsig():
    """For the stage's child: a function that makes it die with the gate (a SIGKILLed gate leaves
    no stage running). libc is loaded here, in the gate, before the fork: the child only calls it."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # noqa: BLE001 - best effort; the next run also stops leftovers
        return None

    def set_pdeathsig() -> None:
        try:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001 - best effort, as above
            pass

    return set_pdeathsig


def _runner_argv(stage: Stage) -> list[str] | None:
    import importlib.util
    import shutil

    try:
        if importlib.util.find_spec(RUNNER_MODULE) is None:
            return None
    except (ImportError, ValueError):
        return None
    beside = Path(sys.executable).parent / "run-with-memory-cap"
    exe = str(beside) if beside.is_file() else shutil.which("run-with-memory-cap")
    if not exe:
        return None
    return [exe, str(stage.cap), "--label", f"gate:{stage.name}", "--timeout", str(stage.timeout),
            "--", "sh", "-c", stage.command or "true"]


def run_command(argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
                tree: Tree | None) -> tuple[int, str, bool]:
    """(exit code, output, timed out) of one stage process in its own process group."""
    proc = subprocess.Popen(argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_pdeathsig())
    if tree is not None:
        tree.set_stage({"pid": proc.pid, "start": procinfo.start_time(proc.pid)})
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    except BaseException:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        if tree is not None and tree.owner_dir is not None and tree.owner_dir.exists():
            tree.set_stage(None)
    # the group may hold background children the command left behind: stop them
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    rc = proc.returncode
    if rc is not None and rc < 0:
        rc = 128 - rc
    return rc, out.decode("utf-8", errors="replace"), timed_out


def stage_scripts(stage: Stage, root: Path) -> list[Path]:
    """Files of the tree the stage's command names (their preflight headers apply)."""
    if not stage.command:
        return []
    import shlex

    try:
        words = shlex.split(stage.command, comments=True)
    except ValueError:
        return []
    out = []
    for w in words:
        if w.startswith("-") or "=" in w.split("/")[0]:
            continue
        if "/" in w or w.endswith((".sh", ".py", ".bash")):
            p = (root / w)
            try:
                if p.is_file() and str(p.resolve()).startswith(str(root.resolve())):
                    out.append(p)
            except OSError:
                continue
    return out


def preflight_stage(stage: Stage, root: Path, env: dict[str, str]) -> list:
    """Unmet run conditions of the stage's scripts (admission is the verdict cache's job here)."""
    from swarmgate.gate import preflight

    unmet = []
    for script in stage_scripts(stage, root):
        header = preflight.read_header(script)
        if header.empty:
            continue
        found, _ = preflight.check(header, script, admission=False, lock=None, env=env)
        unmet.extend(found)
    return unmet


class Gate:
    def __init__(self, repo: Path, *, use_cache: bool = True, only: list[str] | None = None,
                 cache_root: Path | None = None, trees_root: Path | None = None,
                 out: TextIO | None = None, env: dict[str, str] | None = None) -> None:
        self.repo = Path(repo)
        self.use_cache = use_cache
        self.only = only
        self.cache_root = cache_root
        self.trees_root = trees_root
        self.out = out or sys.stdout
        self.base_env = dict(os.environ if env is None else env)
        self.tree: Tree | None = None
        self.result = GateResult()

    def progress(self, text: str) -> None:
        """A line on a terminal's stderr while a stage runs (nothing in pipes and logs)."""
        if _isatty(sys.stderr):
            print(f"gate-staged: {text}", file=sys.stderr, flush=True)

    def _tree(self, index: Index, links: list[str]) -> Tree:
        if self.tree is None:
            t = Tree(index, self.trees_root, links)
            t.__enter__()
            self.tree = t
            self.result.tree_path = str(t.root)
            self.result.notes.extend(t.notes)
        return self.tree

    def run(self) -> GateResult:
        index_file = effective_index_file(env=self.base_env)
        top, head = locate(self.repo)
        for removed in clear_stale(self.trees_root):
            self.result.notes.append(f"removed the tree {removed.name} left by a gate that was killed")
        index = read_index(top, index_file, head)
        config = load_gate_config(top, index, self.result.notes)
        stages = build(config)
        if self.only:
            names = [s.name for s in stages]
            unknown = [n for n in self.only if n not in names]
            if unknown:
                raise GateError(f"no stage named {', '.join(map(repr, unknown))} (stages: {', '.join(names)}; "
                                f"see `gate-staged --list`)")
            stages = [s for s in stages if s.name in self.only]
        env = stage_env(self.base_env)
        keys = vcache.KeyBuilder(index, self.cache_root)
        heavy_var = config["heavy"]["prefix_var"]
        heavy_on = self.base_env.get(heavy_var) == "commit"
        try:
            for stage in stages:
                self.result.outcomes.append(self._one(stage, index, keys, config, env, heavy_var, heavy_on))
        finally:
            keys.save()
            if self.tree is not None and not break_switch.broken("no-tree-cleanup"):
                self.tree.remove()
        return self.result

    def _key(self, keys: vcache.KeyBuilder, stage: Stage, index: Index, config: Any,
             env: dict[str, str]) -> str:
        program = vcache.command_program(stage.command) if stage.command else None
        definition = {**stage.definition(), **extra_key(stage, index)}
        key, _ = keys.key(definition, stage.inputs, [*config["gate"]["env"], *stage.env], env, program,
                          stage.python_inputs)
        return key

    def _one(self, stage: Stage, index: Index, keys: vcache.KeyBuilder, config: Any, env: dict[str, str],
             heavy_var: str, heavy_on: bool) -> Outcome:
        key = self._key(keys, stage, index, config, env)
        if self.use_cache:
            rec = vcache.lookup(self.cache_root, stage.name, key)
            if rec is not None:
                o = Outcome(stage.name, stage.source, rec["verdict"], "cached", 0.0, rec.get("rc"),
                            rec.get("output", ""))
                o.notes.append(f"inputs unchanged since the {rec['verdict']} recorded "
                               f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(rec.get('at', 0)))}")
                return o
        if stage.heavy and not heavy_on:
            return Outcome(stage.name, stage.source, "skipped", "skipped",
                           notes=[(f"heavy stage: runs only with {heavy_var}=commit (prefix the commit: "
                                   f"`{heavy_var}=commit git commit ...`)")])
        self.progress(f"running {stage.name} ...")
        links = list(config["gate"]["link"])
        seeing_worktree = break_switch.broken("gate-sees-worktree")
        root = index.repo if seeing_worktree else self._tree(index, links).root
        t0 = time.monotonic()
        if stage.check is not None:
            ok, output = stage.check(root, index, config)
            o = Outcome(stage.name, stage.source, "pass" if ok else "fail", "ran", time.monotonic() - t0,
                        0 if ok else 1, output)
        else:
            unmet = preflight_stage(stage, root, env)
            if unmet:
                from swarmgate.gate.preflight import format_unmet

                return Outcome(stage.name, stage.source, "not-run", "ran", 0.0, int(Exit.PREFLIGHT),
                               format_unmet(stage.name, unmet))
            if stage.heavy:
                argv = _runner_argv(stage)
                if argv is None:
                    return Outcome(stage.name, stage.source, "error", "ran", 0.0, None,
                                   f"heavy stage needs run-with-memory-cap ({RUNNER_MODULE}), which is not "
                                   f"installed in this build: install it, or mark the stage heavy = false")
                timeout = stage.timeout + 120  # the runner enforces the stage timeout itself
            else:
                argv = ["sh", "-c", stage.command or "true"]
                timeout = stage.timeout
            rc, output, timed_out = run_command(argv, root, env, timeout,
                                                None if seeing_worktree else self.tree)
            seconds = time.monotonic() - t0
            if timed_out:
                return Outcome(stage.name, stage.source, "error", "ran", seconds, int(Exit.TIMEOUT),
                               output + f"\nstopped after {stage.timeout}s ({describe(Exit.TIMEOUT)}); "
                                        f"raise the stage's timeout or make it faster")
            verdict = "pass" if rc == 0 else ("not-run" if rc == Exit.PREFLIGHT else
                                              "error" if rc in NOT_CACHED else "fail")
            o = Outcome(stage.name, stage.source, verdict, "ran", seconds, rc, output)
            if rc in NOT_CACHED:
                o.notes.append(describe(rc))
        if o.verdict in ("pass", "fail") and not seeing_worktree:
            self._record(stage, o, key, config, env, keys)
        return o

    def _record(self, stage: Stage, o: Outcome, key: str, config: Any, env: dict[str, str],
                keys: vcache.KeyBuilder) -> None:
        """Record the verdict if the inputs did not change while the stage ran."""
        try:
            fresh_index = read_index(keys.index.repo, keys.index.index_file)
        except TreeError as e:
            o.notes.append(f"verdict not recorded: could not re-read the index ({e})")
            return
        fresh = vcache.KeyBuilder(fresh_index, keys.cache_root, fingerprints=keys.fingerprints, tools=keys.tools)
        if self._key(fresh, stage, fresh_index, config, env) != key:
            o.notes.append("the index changed while the stage ran: verdict not recorded")
            return
        try:
            vcache.record(self.cache_root, stage.name, key, o.verdict, o.rc or 0, o.output, o.seconds,
                          str(self.repo))
        except (OSError, Exception) as e:  # noqa: BLE001 - a cache we cannot write is not a red gate
            # said under the table whatever the verdict (a passing stage's own notes are not printed)
            self.result.notes.append(f"{stage.name}: verdict not recorded: {e}")


# --- output ---

def render(result: GateResult, out: TextIO, *, verbose_pass: bool = False) -> None:
    for o in result.outcomes:
        if o.red or (verbose_pass and o.output):
            label = f"{o.stage} ({o.verdict}{', cached' if o.how == 'cached' else ''})"
            print(f"--- {label} ---", file=out)
            if o.output.strip():
                print(o.output.rstrip(), file=out)
            for n in o.notes:
                print(f"note: {n}", file=out)
    if _isatty(out):
        _rich_table(result, out)
    else:  # a pipe or a log: plain columns, and no rich import to pay for
        print(f"{'stage':<24} {'verdict':<8} {'cached/ran':<10} {'time':>7}", file=out)
        for o in result.outcomes:
            t = "-" if o.how != "ran" else f"{o.seconds:.2f}s"
            print(f"{o.stage:<24} {o.verdict:<8} {o.how:<10} {t:>7}", file=out)
    for n in result.notes:
        print(f"note: {n}", file=out)
    for o in result.outcomes:
        if o.how == "skipped":
            for n in o.notes:
                print(f"note: {o.stage}: {n}", file=out)
    reds = [o.stage for o in result.outcomes if o.red]
    if reds:
        print(f"gate-staged: RED: {', '.join(reds)}: fix what is staged (the output is above) and commit again",
              file=out)
    else:
        cached = sum(1 for o in result.outcomes if o.how == "cached")
        print(f"gate-staged: green ({len(result.outcomes)} stages, {cached} cached)", file=out)


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def _rich_table(result: GateResult, out: TextIO) -> None:
    # rich costs ~35 ms of import: only a terminal pays it, never the all-cached run of a script or hook
    from rich.console import Console
    from rich.table import Table

    table = Table(title="gate-staged: HEAD + index", title_justify="left")
    table.add_column("stage")
    table.add_column("verdict")
    table.add_column("cached/ran")
    table.add_column("time", justify="right")
    colour = {"pass": "green", "fail": "red", "not-run": "red", "error": "red", "skipped": "yellow"}
    for o in result.outcomes:
        table.add_row(o.stage, f"[{colour[o.verdict]}]{o.verdict}[/]", o.how,
                      "-" if o.how != "ran" else f"{o.seconds:.2f}s")
    Console(file=out, highlight=False).print(table)


def list_stages(repo: Path, cache_root: Path | None, out: TextIO) -> None:
    top = toplevel(repo)
    index = read_index(top, effective_index_file())
    notes: list[str] = []
    config = load_gate_config(top, index, notes)
    keys = vcache.KeyBuilder(index, cache_root)
    env = stage_env()
    g = Gate(top, cache_root=cache_root)
    for s in build(config):
        rec = vcache.lookup(cache_root, s.name, g._key(keys, s, index, config, env))
        state = f"cached {rec['verdict']}" if rec else "would run"
        flags = " heavy" if s.heavy else ""
        print(f"{s.name:<24} {s.source:<8}{flags:<6} {state:<12} {s.describe()}  inputs: {' '.join(s.inputs)}",
              file=out)
    keys.save()
    for n in notes:
        print(f"note: {n}", file=out)


@entry("gate-staged")
def main(argv: Sequence[str] | None = None) -> int:
    p = ToolParser(
        prog="gate-staged",
        description="Check exactly HEAD + the staged changes in a temporary tree (the worktree and index are "
                    "never touched), reusing verdicts whose inputs did not change.")
    p.add_argument("--stage", action="extend", nargs="+", metavar="NAME",
                   help="run only these stages (`--stage a b` or `--stage a --stage b`)")
    p.add_argument("--list", action="store_true", help="list the stages and whether a cached verdict applies")
    p.add_argument("--no-cache", action="store_true", help="run every stage even when a verdict is cached")
    p.add_argument("--repo", default=".", help="the repository (default: the current directory)")
    p.add_argument("-v", "--verbose", action="store_true", help="print the output of passing stages too")
    args = p.parse_args(argv)

    def stop(signum: int, frame: Any) -> None:  # SIGTERM/SIGHUP: unwind, so the tree and stage go now
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        if args.list:
            list_stages(Path(args.repo), None, sys.stdout)
            return Exit.OK
        gate = Gate(Path(args.repo), use_cache=not args.no_cache, only=args.stage)
        result = gate.run()
    except (TreeError, GateError, ConfigError) as e:
        print(f"gate-staged: {e}", file=sys.stderr)
        return Exit.USAGE
    except (StateError, OSError) as e:
        print(f"gate-staged: cannot use the state directory ({e}); check SWARMGATE_STATE_DIR "
              f"(currently {state_dir()}) is a writable directory", file=sys.stderr)
        return Exit.USAGE
    except KeyboardInterrupt:
        print("gate-staged: interrupted; the temporary tree was removed, nothing else was touched", file=sys.stderr)
        return 130
    render(result, sys.stdout, verbose_pass=args.verbose)
    return RED_EXIT if result.red else Exit.OK
