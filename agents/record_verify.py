"""`swarmgate records verify TASK`: run a task's verify command and keep what happened (seed 001).

A task's verify (the record's ``## Verify`` table: command, expected exit code,
retries, optional cap) is how the orchestrator judges it, not by reading the
agent's report. Each run:

1. finds the task (the current round's record, or ``ROUND/ID``);
2. decides whether the command is heavy: a simple command anywhere in it
   matches ``[heavy] patterns`` (the bash reader's tree and the one pattern
   matcher), or the reader cannot read it. A heavy verify runs only with
   ``SWARMGATE_HEAVY=commit|user-request`` in the environment (the main
   agent's prefix; G01 keeps a subagent from setting it), and always through
   ``run-with-memory-cap`` (cap: the verify's ``cap``, else the cap this machine and the
   label's history give, swarmgate/host_defaults.py: never more than the runner's total);
3. runs ``bash -c COMMAND`` in the repository with ``SWARMGATE_RUN_SCOPE``
   set (kind=full when the command matches ``[scope] full_patterns``, else
   kind=target; the target is the task), bounded by ``--timeout``;
4. classifies the attempt (``exit_class``) and appends it to the results
   log in the state dir (``results_path``), beside the record's snapshot,
   where no agent's write scope reaches; a failure (or a run pushed out by the
   total cap, not its fault) is run again up to ``max retries`` times.

Exit classes and this command's exit code (SPEC §9 meanings):
``pass`` 0, ``fail`` 1, ``timeout`` 253, ``oom`` 250 (hit its own cap),
``pushed-out`` 254 (the total was full: rerun), ``refused`` 78 (did not run:
a heavy verify without the prefix, or the runner gave no turn/could not set
the cap up).
"""
from __future__ import annotations

import os
import sys
import time

CLASSES = ("pass", "fail", "timeout", "oom", "pushed-out", "refused")
EXIT_OF = {"pass": 0, "fail": 1, "timeout": 253, "oom": 250, "pushed-out": 254, "refused": 78}
RETRIED = ("fail", "pushed-out")
NOT_RUN = (78, 241, 249, 251, 252)  # the runner's "did not run" codes
GRACE_S = 10.0


def say(msg: str) -> None:
    print(f"records verify: {msg}", file=sys.stderr, flush=True)


# --- pure parts ---------------------------------------------------------------------------

def exit_class(rc: int | None, expect: int, *, timed_out: bool = False, capped: bool = False) -> str:
    """The class of one attempt. ``capped``: it ran through run-with-memory-cap, whose 250/253/254
    and did-not-run codes mean what SPEC §9 says (an uncapped command exiting 250 just failed)."""
    if timed_out:
        return "timeout"
    if rc is None:
        return "fail"
    if rc == expect:
        return "pass"
    if capped:
        if rc == 250:
            return "oom"
        if rc == 254:
            return "pushed-out"
        if rc == 253:
            return "timeout"
        if rc in NOT_RUN:
            return "refused"
    return "fail"


def scope_value(task: dict, round_name: str, command: str, full: bool, min_reason: int) -> str:
    """The SWARMGATE_RUN_SCOPE of a verify run (all four fields, B10's format)."""
    reason = f"verify of task {task['id']} in round {round_name}: {task.get('description') or ''}".strip()
    if len(reason) < min_reason:
        reason = reason.ljust(min_reason, ".")
    clean = " ".join(command.replace(";", ",").split())
    return (f"kind={'full' if full else 'target'}; target=task {task['id']} of round {round_name}; "
            f"range={clean[:200]}; reason={reason.replace(';', ',')}")


def heavy_reason(command: str, config, repo: str) -> str | None:
    """Why ``command`` is heavy (the pattern it matches, or that it cannot be read), else None.

    The same reading as B01's: the command is read as the main agent's Bash call would be.
    """
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.heavy_commands import heavy_commands
    from swarmgate.hooks.shell_event import analysis_of

    event = HookEvent("PreToolUse", {"session_id": "", "cwd": repo, "tool_name": "Bash",
                                     "tool_input": {"command": command}}, repo)
    try:
        hits = heavy_commands(event, config)
        analysis = analysis_of(event, config)
    except Exception as e:  # noqa: BLE001 - what cannot be read is treated as heavy (capped)
        return f"the shell reader could not read it ({type(e).__name__}: {e})"
    if hits:
        return f"`{hits[0][2]}` is in [heavy] patterns"
    unread = list(getattr(analysis, "unverifiable", None) or [])
    if unread:
        return f"the shell reader cannot read all of it ({getattr(unread[0], 'reason', unread[0])})"
    return None


def full_suite(command: str, config) -> bool:
    from swarmgate.hooks.command_patterns import split_words
    words = split_words(command)
    return any(all(w in words for w in split_words(p)) for p in config["scope"]["full_patterns"])


# --- the results log ----------------------------------------------------------------------

def results_path(record_path) -> str:
    from swarmgate.state_paths import record_snapshot_path
    return record_snapshot_path(record_path)[:-len(".json")] + ".verify.jsonl"


def read_results(record_path) -> list[dict]:
    """Every attempt recorded for this record, oldest first (a torn line is skipped)."""
    from swarmgate.statefile import read_jsonl
    return [r for r in read_jsonl(results_path(record_path)) if isinstance(r, dict) and r.get("task")]


def latest_results(record_path) -> dict:
    """{task id: its latest attempt}."""
    out: dict = {}
    for r in read_results(record_path):
        out[str(r["task"])] = r
    return out


# --- running ------------------------------------------------------------------------------

def _cap_for(spec: dict, config, label: str) -> int:
    if spec.get("cap"):
        return int(spec["cap"])
    from swarmgate.host_defaults import heavy_cap   # the cap the way-outs name: it fits this machine

    return heavy_cap(config, label=label)


def _attempt(argv: list[str], env: dict, repo: str, timeout: float) -> tuple[int | None, bool, float]:
    """(exit code, timed out, seconds) of one attempt; the whole process group is stopped on a timeout."""
    import signal
    import subprocess

    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=repo, env=env, start_new_session=True)
    timed_out = False
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, 30.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        rc = proc.returncode
    finally:
        if proc.returncode is None:  # interrupted: never leave the verify running behind us
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    return rc, timed_out, time.monotonic() - t0


def verify_task(repo: str, config, path: str, rec: dict, task: dict, spec: dict, *, timeout: float = 3600.0,
                session: str = "") -> int:
    """Run ``spec``, the verify of ``task`` of the record ``rec`` at ``path`` (records._verify_target
    finds them), with its retries; returns EXIT_OF[class]."""
    import shlex

    from swarmgate.statefile import append_jsonl

    command = spec["command"]
    heavy = heavy_reason(command, config, repo)
    label = " ".join(command.split())[:300]
    env = dict(os.environ)
    env[config["scope"]["prefix_var"]] = scope_value(task, rec["round"], command, full_suite(command, config),
                                                     int(config["scope"]["min_reason"]))
    base = {"task": task["id"], "round": rec["round"], "command": command, "expect_exit": spec["expect_exit"],
            "session": session or None, "heavy": heavy}
    if heavy and os.environ.get(config["heavy"]["prefix_var"]) not in config["heavy"]["prefix_values"]:
        now = time.time()
        append_jsonl(results_path(path), {**base, "attempt": 1, "attempts": 1, "exit": 78, "class": "refused",
                                          "duration_s": 0.0, "started": now, "ended": now,
                                          "why": "heavy verify without the heavy prefix"})
        var, values = config["heavy"]["prefix_var"], "|".join(config["heavy"]["prefix_values"])
        say(f"refused (78), nothing ran: the verify of {task['id']} is heavy ({heavy}); heavy runs belong to the "
            f"main agent: `{var}={values.split('|')[0]} swarmgate records verify {task['id']}` (values: {values}). "
            f"A subagent reports back instead.")
        return EXIT_OF["refused"]
    argv = ["bash", "-c", command]
    cap = None
    if heavy:
        cap = _cap_for(spec, config, label)
        from swarmgate.sizes import human
        argv = [sys.executable, "-m", "swarmgate", "run-with-memory-cap", human(cap).replace(".0", ""),
                "--label", label, "--timeout", f"{timeout:g}", "--", *argv]
    tries = 1 + int(spec["max_retries"])
    cls = "fail"
    for attempt in range(1, tries + 1):
        say(f"{task['id']} attempt {attempt}/{tries}: {shlex.join(argv) if heavy else command}")
        started = time.time()
        rc, timed_out, took = _attempt(argv, env, repo, timeout + (GRACE_S + 30 if heavy else 0))
        cls = exit_class(rc, int(spec["expect_exit"]), timed_out=timed_out, capped=bool(heavy))
        append_jsonl(results_path(path), {**base, "attempt": attempt, "attempts": attempt, "exit": rc,
                                          "class": cls, "duration_s": round(took, 3), "started": round(started, 3),
                                          "ended": round(time.time(), 3), "cap": cap})
        say(f"{task['id']} attempt {attempt}: {cls} (exit {rc}, expected {spec['expect_exit']}) in {took:.1f}s")
        if cls not in RETRIED:
            break
    if cls != "pass":
        way = {"oom": "it hit its own memory cap: raise the verify's cap (`--cap`) or make it smaller",
               "pushed-out": "the machine's total for capped runs was full: not its fault, run it again",
               "timeout": "it ran past --timeout: raise it or speed the verify up",
               "refused": "it did not run: read the runner's line above",
               "fail": "the task is not done: dispatch a fix, or close it with a reason"}[cls]
        say(f"{task['id']}: {cls}; {way}")
    return EXIT_OF[cls]
