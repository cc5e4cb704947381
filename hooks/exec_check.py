"""X01: a heavy program refused where it starts (issue 10, docs/exec-shims.md).

The exec-time shims (hooks/exec_shims.py) send every call that could be heavy here (through the
shim directory's boot script, ``python -I -S .swarmgate-exec-boot.py SHIM_DIR NAME REAL ARGS...``).

1. ``hooks/exec_argv.heavy_argv`` says whether the argv runs a heavy command: B01's matcher over
   the argv, a launcher's operand, pytest's own arguments and whatever the bash reader says the
   program runs (aliases, package scripts, recipes, task files);
2. when it is heavy, the authorization is looked for: this process's cgroup is a run that
   `run-with-memory-cap` marked after consuming the hook's grant (swarmgate/heavy_grants.py);
3. the real program runs (exec, same pid), or the call is refused: one stderr line naming the
   pattern and the way out, exit 249, a decision-log entry under X01 (event "Exec"), an alert.

X01 is registered like a guard (doc, cases, break switch) on the pseudo-event "Exec": its
``check`` is the pure judge of an exec payload ({"argv", "cwd", "authorized", agent fields}); the
self-test runs the same judge the shim runs. Its SessionStart side (advisory,
hooks/containment_lifecycle.py) writes the shim directory and the PATH line of ``$CLAUDE_ENV_FILE``.

What this layer cannot see (docs/threat-model.md): a program started by absolute path, or from a
directory put before the shims inside the command (a venv's bin after `activate`); pytest inside
Python is judged by hooks/inprocess_pytest.py, which calls ``main`` with REAL ``-`` (judge only).
Containment and the sightings (X02, X03) stand behind both.
"""
from __future__ import annotations

import os
import sys
import time

from swarmgate import guard as G

EXEC_EVENT = G.EXEC_EVENT


def way_out(config, pattern: str, words: list, subagent: bool, cwd: str = "", repo: str | None = None) -> str:
    from swarmgate.hooks.way_outs import rerun_words

    if subagent:
        return ("heavy runs belong to the main agent: run the narrow tests of your change (one package, "
                "one test file) and say in your report that the heavy run is due.")
    return (f"type it in the Bash tool as `{rerun_words(config, [str(w) for w in words], cwd, repo)}`, with every "
            f"<...> replaced by your own words (the hook authorizes exactly that command, once); a heavy "
            f"program started any other way is refused where it starts.")


def check_x01(event, config):
    """The judge of one exec: payload {"argv", "cwd", "authorized" (the live mark or null)}."""
    from swarmgate.break_switch import broken

    p = event.payload
    argv = p.get("argv")
    if not isinstance(argv, list) or not argv or broken("x01-allow-heavy-exec"):
        return None
    cwd = str(p.get("cwd") or event.repo or ".")
    from swarmgate.hooks.exec_argv import heavy_argv

    found = heavy_argv([str(a) for a in argv], config, cwd, event.repo,
                       p.get("env") if isinstance(p.get("env"), dict) else None)
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
        way_out(config, pattern, words, event.is_subagent, cwd, event.repo))


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
    """``SHIM_DIR NAME REAL ARGS...``: exec REAL or refuse. Returns only to refuse (or on bad use), or
    with REAL ``-`` (the in-process check's call): 0 when the call may run."""
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
    if real == JUDGE_ONLY:
        return 0
    pytest_args = _pytest_args(name, rest)
    if pytest_args is not None:  # the in-process check (hooks/inprocess_pytest.py) need not judge it again
        from swarmgate.hooks.inprocess_pytest import JUDGED_ENV, digest
        os.environ[JUDGED_ENV] = f"{os.getpid()}:{digest(pytest_args)}"
    os.execv(real, [real, *rest])
    return 127  # not reached


JUDGE_ONLY = "-"   # REAL of the in-process check: judge, exit 0 when the call may run


def _pytest_args(name: str, rest: list) -> list | None:
    """The arguments pytest's main will see in the program about to start: the `pytest` script's, or
    those after `python -m pytest` (no other interpreter option before -m); None for anything else."""
    from swarmgate.hooks.exec_shims import PYTHONS

    if name in ("pytest", "py.test"):
        return list(rest)
    if name in PYTHONS and len(rest) >= 2 and rest[0] == "-m" and rest[1] == "pytest":
        return list(rest[2:])
    return None


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
    mode = config.guard_mode("X01")
    if mode == "off":
        return None, (None, None)
    cg = _current_cgroup(config)
    agent = _agent_of(config, cg)
    from swarmgate import heavy_grants
    mark = heavy_grants.mark_of(cg)
    payload = {"argv": words, "cwd": os.getcwd(), "authorized": mark, "session_id": meta.get("session") or "",
               "agent_id": agent[0], "agent_type": agent[1]}
    event = HookEvent(EXEC_EVENT, payload, repo)
    finding = check_x01(event, config)
    if finding is not None and mode == "warn":
        _warn_only(finding, meta, name, words, agent)
        return None, agent
    return finding, agent


def _warn_only(finding, meta: dict, name: str, words: list, agent: tuple) -> None:
    """`[guards] X01 = "warn"`: the heavy program runs; one stderr line and the log say it would not."""
    from shlex import join

    from swarmgate import decision_log

    text = "(warn only) " + finding.render()
    try:
        os.write(2, ("swarmgate: " + " ".join(text.split()) + "\n").encode("utf-8", "replace"))
    except OSError:
        pass
    decision_log.record(str(meta.get("repo") or os.getcwd()), session=str(meta.get("session") or ""),
                        agent_id=agent[0], agent_type=agent[1], event=EXEC_EVENT, tool=name, codes=["X01"],
                        decision="warn", latency_ms=(time.monotonic() - _T0) * 1000, input_text=join(words),
                        reason=text, findings={"X01": "warn"})


def _refresh_if_stale(shim_dir: str, meta: dict, config) -> None:
    """The config changed since the shims were written: write them again (new programs, new
    prefilters). Best effort: this call is judged with the new config either way."""
    from swarmgate.hooks import exec_shims
    from swarmgate.hooks.heavy_equivalents import workload_patterns

    try:
        if os.path.getmtime(str(meta["config"])) <= os.path.getmtime(os.path.join(shim_dir, exec_shims.MARKER)):
            return
    except OSError:
        if not os.path.exists(str(meta["config"])):
            return
    try:
        exec_shims.write_dir(shim_dir, config, repo=str(meta["repo"]), session=str(meta.get("session") or ""),
                             python=str(meta.get("python") or sys.executable),
                             patterns=workload_patterns(config, str(meta["repo"])))
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
            instead="Main agent: type `SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; target=<what you run>; "
                    "range=<how much of it>; reason=<why this run, now>' run-with-memory-cap auto -- cargo test "
                    "--workspace` in the Bash tool, with every <...> replaced by your own words. Subagents: run "
                    "the narrow tests and report the heavy run as due.",
            exceptions="Dry runs are not runs (`--no-run`, `make -n`, `--collect-only`), as for B01. pytest run "
                       "inside Python (`pytest.main()`, runpy, the venv's script by path) is judged the same way "
                       "by the session's sitecustomize (docs/exec-shims.md \"Inside Python\"). A program "
                       "started by absolute path or from a directory the command itself puts before the shims "
                       "(a venv's bin) is out of the shims' reach: containment (X02) bounds it and X03 reports "
                       "it (docs/threat-model.md)."),
        breaks={"x01-allow-heavy-exec": "the exec-time check lets every heavy program run"},
        cases=lambda: (
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
