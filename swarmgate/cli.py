"""`swarmgate VERB ...`: the umbrella command.

`swarmgate hook EVENT` is the hot path (runs before every tool call): it is
dispatched before argparse or anything else is imported.
"""
from __future__ import annotations

import sys

# verb -> "module:function"; each function takes argv (list[str]) and returns an exit code.
VERBS = {
    "install": ("swarmgate.install:main", "wire swarmgate into a repository (.claude/)"),
    "selftest": ("swarmgate.selftest:main", "prove every guard and tool can turn red"),
    "status": ("swarmgate.hosts.status:main", "the runner's ledger, slice use and history peaks"),
    "log": ("swarmgate.log_view:main", "the decision log as a table, with filters"),
    "report": ("swarmgate.log_view:report_main",
               "counts and latencies per guard; --html/--json: the session flow (lanes, graph, runs, tokens)"),
    "preflight": ("swarmgate.gate.preflight:main", "check a script's admission and run conditions, then run it"),
    "doctor": ("swarmgate.doctor:main", "check that this machine and repository are wired correctly"),
    "docs": ("swarmgate.docs:main", "write docs/guards.md from the guard registry"),
    "sop": ("swarmgate.agents.sop:main", "the upstream rules copy: check the stamp, sync"),
    "records": ("swarmgate.agents.records:main", "scheduling records: create, update, validate, verify"),
    "replay": ("swarmgate.replay:main", "re-judge recorded sessions with the current guards; --junit FILE"),
    "explain": ("swarmgate.explain:main",
                "what the hook would decide for a command, and why: every command reached, each guard's verdict"),
    # the console scripts, also reachable as verbs
    "run-with-memory-cap": ("swarmgate.hosts.runner_cli:main", "run a command in its own memory-capped cgroup"),
    "host-resources": ("swarmgate.hosts.host_resources:main", "free memory, cores and GPUs per host"),
    "host-dispatch": ("swarmgate.hosts.host_dispatch:main", "place a command on the host where it fits"),
    "multi-host-run": ("swarmgate.hosts.multi_host_run:main",
                       "run one job on the second machine and bring results back"),
    "detached-run": ("swarmgate.hosts.detached_run:main", "long jobs that outlive the session"),
    "gpu-quiesce-run": ("swarmgate.hosts.gpu_quiesce_run:main", "stop whitelisted GPU services, then run"),
    "core-usage": ("swarmgate.hosts.core_usage:main", "cores in use and threads computing at once"),
    "gate-staged": ("swarmgate.gate.gate_staged:main", "check exactly HEAD + the index before a commit"),
    "dispatch-prompt": ("swarmgate.agents.dispatch_prompt:main", "print the dispatch skeleton of an agent type"),
    "agent-handover": ("swarmgate.agents.handover:main", "hand-over file from a subagent's transcript"),
    "swarm-watch": ("swarmgate.agents.swarm_watch:main", "the per-session watchdog"),
    "workspace-lock": ("swarmgate.agents.workspace_lock:main", "the merge lock: acquire, release, status"),
    "work-dir-owner": ("swarmgate.agents.work_dir_owner:main", "ownership files of work directories"),
}


def _usage() -> str:
    lines = ["usage: swarmgate VERB [ARGS...]", "", "verbs:",
             "  hook EVENT            answer one Claude Code hook call (JSON on stdin)"]
    for verb, (_, doc) in VERBS.items():
        lines.append(f"  {verb:<21} {doc}")
    return "\n".join(lines)


def _hook_unjudged(event: str, msg: str) -> int:
    """Answer a hook call that cannot be judged, fail closed (hook_protocol.unjudged)."""
    import json

    print(msg, file=sys.stderr)
    try:
        from swarmgate.hook_protocol import unjudged
        out = unjudged(event, msg)
    except BaseException:  # noqa: BLE001 - the protocol module itself is broken: its shape, by hand
        out = ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": msg}}
               if event == "PreToolUse" else {"systemMessage": msg})
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


def _hook_unavailable(event: str, why: str) -> int:
    """The hook engine itself cannot be imported (a broken checkout): still answer, fail closed."""
    return _hook_unjudged(event, f"swarmgate hook: the hook engine cannot be loaded ({why}); refusing to be "
                                 "safe. Run `swarmgate doctor` in the repository, or ./install.sh in the "
                                 "swarmgate checkout.")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:
        if len(args) != 2:
            msg = ("swarmgate hook: expected exactly one EVENT (e.g. `swarmgate hook PreToolUse`), got "
                   + (" ".join(args[1:]) or "none") + "; fix the hook entry in .claude/settings.json "
                   "(`swarmgate install PATH` rewrites it)")
            # still a definite answer for Claude Code: a tool call is refused (fail closed)
            return _hook_unjudged(args[1] if len(args) > 1 else "", msg)
        # The hook runs before every tool call, often with PYTHONDONTWRITEBYTECODE set in the
        # agent's environment: then every call would recompile every module whose .pyc is
        # missing or stale (after a pull). Write bytecode here regardless (gitignored
        # __pycache__; silently skipped where the tree is read-only).
        sys.dont_write_bytecode = False
        try:
            from swarmgate.hook_engine import main as hook_main
        except BaseException as e:  # noqa: BLE001 - a broken install must not let tool calls through
            return _hook_unavailable(args[1], f"{type(e).__name__}: {e}")
        return hook_main(args[1])
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("--version", "version"):
        from swarmgate import __version__
        print(f"swarmgate {__version__}")
        return 0
    verb = args[0]
    if verb not in VERBS:
        print(f"swarmgate: unknown verb {verb!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    target = VERBS[verb][0]
    mod, func = target.split(":")
    import importlib
    try:
        module = importlib.import_module(mod)
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("swarmgate"):
            print(f"swarmgate {verb}: not available in this build ({e.name} is missing)", file=sys.stderr)
            return 2
        raise
    return int(getattr(module, func)(args[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
