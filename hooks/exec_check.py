"""X01: a heavy program refused where it starts (issue 10, docs/exec-shims.md).

The exec-time shims (hooks/exec_shims.py) send every call that could be heavy here:
``python -I -m swarmgate.hooks.exec_check SHIM_DIR NAME REAL ARGS...``. It

1. expands the program's own aliases (``cargo t`` is ``cargo test``; ``.cargo/config.toml``
   ``[alias]``, ``CARGO_ALIAS_*``, ``--config alias.x=...``; npm's ``t``/``run-script``/...);
2. matches each argv with B01's matcher (``heavy_commands.heavy_match``: the `[heavy]
   patterns`, `[bash] make_targets`, dry runs excepted), also from any argument that names
   a pattern's program (``rustup run stable cargo test --workspace``);
3. when it is heavy, looks for the authorization: this process's cgroup is a run that
   `run-with-memory-cap` marked after consuming the hook's grant (swarmgate/heavy_grants.py);
4. runs the real program (exec, same pid), or refuses: one stderr line naming the pattern and
   the way out, exit 249, a decision-log entry under X01 (event "Exec"), an alert.

X01 is registered like a guard (doc, cases, break switch) on the pseudo-event "Exec": its
``check`` is the pure judge of an exec payload ({"argv", "cwd", "authorized", agent fields});
the self-test runs the same judge the shim runs. Its SessionStart side (advisory) writes the
shim directory and the PATH line of ``$CLAUDE_ENV_FILE`` in the act phase.

What this layer cannot see (docs/threat-model.md): a program started by absolute path, or
from a directory put before the shims inside the command (a venv's bin after `activate`), or
``pytest.main()`` inside a Python process; containment and the after-the-fact checks (X02, X03)
stand behind it.
"""
from __future__ import annotations

import os
import sys

from swarmgate import guard as G

EXEC_EVENT = G.EXEC_EVENT


class Argv:
    """An argv in the shape the pattern matcher reads (a simple command's words/name/args)."""
    __slots__ = ("words", "name", "args", "wrappers", "via", "text")

    def __init__(self, words: list[str]) -> None:
        from swarmgate.hooks.command_patterns import basename

        self.words = list(words)
        self.name = basename(words[0]) if words else ""
        self.args = list(words[1:])
        self.wrappers = ()
        self.via = ()
        self.text = " ".join(words)


# --- what the argv runs ------------------------------------------------------------------------

# environment variables through which a program's own configuration says what it runs: handed to the
# reader as assignments in front of the argv, so it resolves them as it would in a typed command
_PROGRAM_ENV_PREFIXES = ("CARGO_ALIAS_", "MAKEFILES", "MAKEFLAGS", "GIT_", "npm_config_", "PYTEST_ADDOPTS")
_PYTEST = ("pytest", "py.test")


def _pytest_ini(cwd: str) -> tuple[list, list]:
    """(addopts words, testpaths) of the pytest config pytest would find from ``cwd``."""
    import configparser
    import shlex
    import tomllib

    d = os.path.abspath(cwd or ".")
    while True:
        for name, section in (("pytest.ini", "pytest"), ("pyproject.toml", None), ("tox.ini", "pytest"),
                              ("setup.cfg", "tool:pytest")):
            path = os.path.join(d, name)
            if not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as f:
                    raw = f.read(256 * 1024)
                if section is None:
                    opts = (tomllib.loads(raw.decode("utf-8", "replace")).get("tool") or {}).get("pytest", {})
                    opts = opts.get("ini_options") if isinstance(opts, dict) else None
                    if not isinstance(opts, dict):
                        continue
                    add, paths = opts.get("addopts", ""), opts.get("testpaths", [])
                    add = add if isinstance(add, list) else shlex.split(str(add))
                    paths = paths if isinstance(paths, list) else str(paths).split()
                else:
                    cp = configparser.ConfigParser(interpolation=None)
                    cp.read_string(raw.decode("utf-8", "replace"))
                    if not cp.has_section(section):
                        continue
                    add = shlex.split(cp.get(section, "addopts", fallback=""))
                    paths = cp.get(section, "testpaths", fallback="").split()
            except (OSError, ValueError, configparser.Error):
                continue
            return [str(x) for x in add], [str(x) for x in paths]
        parent = os.path.dirname(d)
        if parent == d:
            return [], []
        d = parent


def pytest_argv(args: list[str], cwd: str, env) -> list[str]:
    """What pytest really collects from: PYTEST_ADDOPTS and the ini file's addopts are arguments too,
    and without a path the ini file's testpaths are the paths."""
    import shlex

    try:
        extra = shlex.split(env.get("PYTEST_ADDOPTS", "") or "")
    except ValueError:
        extra = []
    add, paths = _pytest_ini(cwd)
    words = [*add, *extra, *args]
    if paths and not any(not w.startswith("-") for w in words):
        words += paths
    return ["pytest", *words]


def _reader_commands(argv: list[str], config, cwd: str, env) -> list:
    """The commands the bash reader says ``argv`` runs (the argv itself, then what its aliases,
    package scripts, recipes and task files run), each with its via labels."""
    import shlex

    from swarmgate.hooks.bash_tree import analyze

    pre = [f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())
           if k.startswith(_PROGRAM_ENV_PREFIXES) and k.replace("_", "a").isalnum()]
    b = config["bash"]
    analysis = analyze(" ".join([*pre, shlex.join(argv)]), cwd=cwd, max_depth=int(b["max_depth"]),
                       budget_s=b["budget_ms"] / 1000.0, max_script_bytes=int(b["max_script_bytes"]),
                       parser="lexical")
    return list(analysis.commands)


def _via_argvs(cmd) -> list[list[str]]:
    """A recipe line or a package script is run *as* `make TARGET` / `npm run NAME`: those argvs too."""
    out = []
    for v in getattr(cmd, "via", ()) or ():
        if v.startswith("make:"):
            out.append(["make", v[len("make:"):]])
        elif v.startswith("npm script:"):
            out.append(["npm", "run", v[len("npm script:"):]])
    return out


# --- the judge -------------------------------------------------------------------------------

def heavy_argv(argv: list[str], config, cwd: str, repo: str, env=None) -> tuple[str, list] | None:
    """(pattern, the argv that matched) when ``argv`` runs a heavy command, else None. Reads the
    files the program reads (aliases, scripts, recipes, ini files) but changes nothing."""
    from swarmgate.hooks.command_patterns import basename, split_words
    from swarmgate.hooks.heavy_commands import heavy_match

    if not argv:
        return None
    env = os.environ if env is None else env
    names = set()
    for p in config["heavy"]["patterns"]:
        try:
            w = split_words(p)
        except ValueError:
            continue
        if w:
            names.add(basename(w[0]))
    if config["bash"]["make_targets"]:
        names |= {"make", "gmake"}

    def judge(words: list[str]):
        hit = heavy_match(Argv(words), config, cwd, repo)
        if hit:
            return hit, words
        for i in range(1, len(words)):   # a launcher's operand: `rustup run stable cargo test ...`
            if basename(words[i]) in names:
                hit = heavy_match(Argv(words[i:]), config, cwd, repo)
                if hit:
                    return hit, words[i:]
        return None

    first = basename(argv[0])
    tries = [list(argv)]
    if first in _PYTEST:
        tries.append(pytest_argv(list(argv[1:]), cwd, env))
    for words in tries:
        found = judge(words)
        if found:
            return found
    for cmd in _reader_commands(list(argv), config, cwd, env):
        words = list(cmd.words)
        if not words:
            continue
        found = judge(words)
        if found is None and basename(words[0]) in _PYTEST:
            found = judge(pytest_argv(words[1:], cwd, env))
        for via in _via_argvs(cmd):
            found = found or judge(via)
        if found:
            return found
    return None


def way_out(config, pattern: str, words: list, subagent: bool) -> str:
    from shlex import join

    from swarmgate.hooks.heavy_commands import cap_hint

    if subagent:
        return ("heavy runs belong to the main agent: run the narrow tests of your change (one package, "
                "one test file) and say in your report that the heavy run is due.")
    var = config["heavy"]["prefix_var"]
    return (f"type it in the Bash tool as `{var}=commit run-with-memory-cap {cap_hint(config)} -- {join(words)}` "
            f"(the hook authorizes exactly that command, once); a heavy program started any other way is "
            f"refused where it starts.")


def check_x01(event, config):
    """The judge of one exec: payload {"argv", "cwd", "authorized" (the live mark or null)}."""
    from swarmgate.break_switch import broken

    p = event.payload
    argv = p.get("argv")
    if not isinstance(argv, list) or not argv or broken("x01-allow-heavy-exec"):
        return None
    cwd = str(p.get("cwd") or event.repo or ".")
    found = heavy_argv([str(a) for a in argv], config, cwd, event.repo, p.get("env") if isinstance(p.get("env"), dict) else None)
    if found is None:
        return None
    pattern, words = found
    if p.get("authorized"):
        return None
    from shlex import join

    who = f"subagent {event.actor}" if event.is_subagent else "a command outside any authorized run"
    return G.Finding(
        "X01", f"heavy program refused where it starts (exit 249): `{join([str(a) for a in argv])[:200]}` matches "
               f"the heavy pattern `{pattern}`, and {who} has no authorization for it.",
        way_out(config, pattern, words, event.is_subagent))


# --- the shim's slow path (I/O) -----------------------------------------------------------------

def _current_cgroup(config) -> str | None:
    from swarmgate.hosts import cgroups

    try:
        return cgroups.get(config["memory"]["backend"]).current()
    except cgroups.CgroupError:
        return None


def _agent_of(config, cgroup_path: str | None) -> tuple[str | None, str | None]:
    """(agent id, agent type) when this process sits in a subagent's containment cgroup."""
    from swarmgate.hosts import cgroups

    if not cgroup_path:
        return None, None
    slice_name = config["memory"]["slice"]
    parts = cgroup_path.rstrip("/").split("/")
    for i, part in enumerate(parts[:-1]):
        if part == slice_name or part == slice_name + ".slice":
            owner = cgroups.agent_owner(parts[i + 1])
            if owner is None:
                return None, None
            atype = None
            try:
                from swarmgate.hosts import ledger
                b = ledger.load(report=lambda _m: None)["bookings"].get("agent:" + parts[i + 1]) or {}
                atype = b.get("agent_type")
            except Exception:  # noqa: BLE001 - the type is only for the message
                pass
            return owner[2], atype or "subagent"
    return None, None


def refuse(msg: str, *, meta: dict, name: str, argv: list, agent: tuple, codes=("X01",),
           pattern: str = "") -> int:
    import time

    from swarmgate.exit_codes import Exit

    try:
        os.write(2, ("swarmgate: " + " ".join(msg.split()) + "\n").encode("utf-8", "replace"))
    except OSError:
        pass
    from shlex import join
    try:
        from swarmgate import decision_log
        decision_log.record(str(meta.get("repo") or os.getcwd()), session=str(meta.get("session") or ""),
                            agent_id=agent[0], agent_type=agent[1], event=EXEC_EVENT, tool=name,
                            codes=list(codes), decision="deny", latency_ms=(time.monotonic() - _T0) * 1000,
                            input_text=join(argv), reason=msg, findings={c: "deny" for c in codes})
    except Exception:  # noqa: BLE001 - the refusal stands whatever the log does
        pass
    from swarmgate.alerts import write_alert
    write_alert("heavy-exec-refused", msg, source="X01", session=meta.get("session") or None,
                agent=agent[0], agent_type=agent[1], command=join(argv)[:300], pattern=pattern or None,
                cwd=os.getcwd(), pid=os.getpid())
    return int(Exit.HEAVY_REFUSED)


_T0 = 0.0


def main(argv: list[str] | None = None) -> int:
    """``SHIM_DIR NAME REAL ARGS...``: exec REAL or refuse. Returns only to refuse (or on bad use)."""
    import time

    global _T0
    _T0 = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        sys.stderr.write("usage: python -m swarmgate.hooks.exec_check SHIM_DIR NAME REAL [ARGS...] "
                         "(called by swarmgate's exec-time shims)\n")
        return 251
    shim_dir, name, real, rest = args[0], args[1], args[2], args[3:]
    words = [name, *rest]
    try:
        return _decide(shim_dir, name, real, rest, words)
    except BaseException as e:  # noqa: BLE001 - fail closed: this call may be heavy
        return refuse(f"the exec-time check of `{name}` failed ({type(e).__name__}: {e}), so the call was not "
                      f"run (fail closed). Report it; a person can run it outside the agent session.",
                      meta={}, name=name, argv=words, agent=(None, None))


def _decide(shim_dir: str, name: str, real: str, rest: list, words: list) -> int:
    from swarmgate.hooks.exec_shims import read_meta

    meta = read_meta(shim_dir)
    if meta is None:
        return refuse(f"the shim directory {shim_dir} has no readable {'shim.json'}, so `{name}` cannot be "
                      f"checked and does not run; start a new session (SessionStart rewrites it).",
                      meta={}, name=name, argv=words, agent=(None, None))
    saved = os.environ.get("SWARMGATE_STATE_DIR")
    os.environ["SWARMGATE_STATE_DIR"] = str(meta["state_dir"])  # the session's, never the caller's
    try:
        verdict, agent = _judge_here(meta, name, words, shim_dir)
    finally:
        if saved is None:
            os.environ.pop("SWARMGATE_STATE_DIR", None)
        else:
            os.environ["SWARMGATE_STATE_DIR"] = saved
    if verdict is not None:
        os.environ["SWARMGATE_STATE_DIR"] = str(meta["state_dir"])
        return refuse(verdict.render(), meta=meta, name=name, argv=words, agent=agent,
                      pattern=verdict.message.split("heavy pattern `", 1)[-1].split("`", 1)[0])
    os.execv(real, [real, *rest])
    return 127  # not reached


def _judge_here(meta: dict, name: str, words: list, shim_dir: str):
    from swarmgate.config import ConfigError, load_config
    from swarmgate.hook_protocol import HookEvent

    repo = str(meta["repo"])
    try:
        config = load_config(repo)
    except ConfigError as e:
        return G.Finding("X01", f"the config cannot be read ({e}), so `{name}` cannot be checked and does not "
                                f"run (fail closed).", "fix the config"), (None, None)
    _refresh_if_stale(shim_dir, meta, config)
    cg = _current_cgroup(config)
    agent = _agent_of(config, cg)
    from swarmgate import heavy_grants
    mark = heavy_grants.mark_of(cg)
    payload = {"argv": words, "cwd": os.getcwd(), "authorized": mark, "session_id": meta.get("session") or "",
               "agent_id": agent[0], "agent_type": agent[1]}
    event = HookEvent(EXEC_EVENT, payload, repo)
    finding = check_x01(event, config)
    return finding, agent


def _refresh_if_stale(shim_dir: str, meta: dict, config) -> None:
    """The config changed since the shims were written: write them again (new programs, new
    prefilters). Best effort: this call is judged with the new config either way."""
    from swarmgate.hooks import exec_shims

    try:
        if os.path.getmtime(str(meta["config"])) <= os.path.getmtime(os.path.join(shim_dir, exec_shims.MARKER)):
            return
    except OSError:
        if not os.path.exists(str(meta["config"])):
            return
    try:
        exec_shims.write_dir(shim_dir, config, repo=str(meta["repo"]), session=str(meta.get("session") or ""),
                             python=str(meta.get("python") or sys.executable))
    except Exception:  # noqa: BLE001
        pass


# --- registration --------------------------------------------------------------------------------

def _exec(argv: list, authorized: bool = False, subagent: bool = True, cwd: str = "") -> dict:
    p: dict = {"argv": argv, "authorized": {"grant": "selftest"} if authorized else None}
    if subagent:
        p.update({"agent_id": "a1", "agent_type": "implementer"})
    if cwd:
        p["cwd"] = cwd
    return p


_ALIASED = {".cargo/config.toml": "[alias]\nwhole = \"test --workspace\"\n"}

GUARDS = (
    G.Guard(
        code="X01", summary="a heavy program refused where it starts (exec-time shim): no authorization for it",
        events=(EXEC_EVENT,), tools=(), check=check_x01,
        doc=G.GuardDoc(
            why="Reading a command before it runs cannot follow every way a refused agent tries next: a "
                "Python one-liner that builds the argv, an npm script, a Makefile, a cargo alias, a wrapper "
                "nobody listed. The shims sit where the program starts (first on every agent command's PATH, "
                "put there through $CLAUDE_ENV_FILE at SessionStart), so the real argv is judged whatever "
                "produced it. A heavy run is allowed only inside a run of run-with-memory-cap that consumed "
                "the single-use authorization the PreToolUse hook records for the main agent's own "
                "prefixed, capped command.",
            example="a subagent runs `python3 -c 'import subprocess; subprocess.run([\"cargo\",\"test\","
                    "\"--workspace\"])'`: the cargo shim refuses it with exit 249.",
            instead="Main agent: type `SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo test --workspace` "
                    "in the Bash tool. Subagents: run the narrow tests and report the heavy run as due.",
            exceptions="Dry runs are not runs (`--no-run`, `make -n`, `--collect-only`), as for B01. A program "
                       "started by absolute path, from a directory the command itself puts before the shims "
                       "(a venv's bin), or `pytest.main()` inside Python are out of the shims' reach: "
                       "containment (X02) bounds them and X03 reports them (docs/threat-model.md)."),
        breaks={"x01-allow-heavy-exec": "the exec-time check lets every heavy program run"},
        cases=(
            G.Case("subagent-cargo-from-python", EXEC_EVENT, _exec(["cargo", "test", "--workspace"]), fires=True,
                   breaks=("x01-allow-heavy-exec",)),
            G.Case("builtin-alias", EXEC_EVENT, _exec(["cargo", "t", "--workspace"]), fires=True,
                   breaks=("x01-allow-heavy-exec",)),
            G.Case("config-alias", EXEC_EVENT, _exec(["cargo", "whole"]), fires=True, files=_ALIASED,
                   breaks=("x01-allow-heavy-exec",)),
            G.Case("launcher-operand", EXEC_EVENT, _exec(["rustup", "run", "stable", "cargo", "test", "--all"]),
                   fires=True, breaks=("x01-allow-heavy-exec",)),
            G.Case("main-unauthorized", EXEC_EVENT, _exec(["make", "check-full"], subagent=False), fires=True,
                   breaks=("x01-allow-heavy-exec",)),
            G.Case("main-authorized", EXEC_EVENT, _exec(["cargo", "test", "--workspace"], authorized=True,
                                                       subagent=False), fires=False),
            G.Case("narrow-test", EXEC_EVENT, _exec(["cargo", "test", "-p", "parser"]), fires=False),
            G.Case("dry-run", EXEC_EVENT, _exec(["cargo", "test", "--workspace", "--no-run"]), fires=False),
            G.Case("version", EXEC_EVENT, _exec(["cargo", "--version"]), fires=False),
        )),
)


if __name__ == "__main__":
    sys.exit(main())
