"""B01 heavy test and B02 heavy needs the cap (SPEC §4.3).

Decisions (also in docs/bash-guards.md):
- Unverifiable findings of the tree (text fed to a shell that cannot be read
  statically, `eval $VAR`, interpreter one-liners naming a heavy pattern,
  parse failures, scripts too large or binary) are reported under **B01**, as
  deny or ask per `[bash] unverifiable`, for every agent: B01 is the guard the
  bypasses were aimed at.
- B02 judges only heavy commands B01 lets through (the main agent with the
  prefix, or any agent when B01 is off): the others already carry B01's way out.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks.heavy_commands import heavy_commands, runner_of
from swarmgate.hooks.shell_event import (analysis_of, broken, cmd_text, command_env, main_call, pattern_problem,
                                         short, subagent_call, via_text)
from swarmgate.hooks.test_runs import HEAVY_RUN_EXAMPLE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent



def _typed(event: HookEvent, config: Config, analysis, i: int) -> str:
    """The way-out command in backquotes, with what the model must fill in said (hooks/way_outs.py)."""
    from swarmgate.hooks.way_outs import rerun

    line = rerun(event, config, analysis, i)
    return f"`{line}`" + (", with every <...> replaced by your own words" if "<" in line else "")


def check_b01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    bad = pattern_problem(event, config, "B01")
    if bad:
        return bad
    findings = []
    var = config["heavy"]["prefix_var"]
    values = config["heavy"]["prefix_values"]
    mode = config["bash"]["unverifiable"]
    deferred = None
    if mode == "exec" and getattr(analysis, "unverifiable", None):
        from swarmgate.hooks.exec_deferral import DEFERRED, deferral
        deferred = deferral(event, config, analysis)
    if deferred:
        trace, found = deferred
        u = found[0]
        findings.append(G.Finding(
            "B01", f"{DEFERRED} {trace}: {short(getattr(u, 'reason', ''), 160)}. A heavy program it starts is "
                   f"refused there (exit 249).", decision=G.CONTEXT))
    elif not broken(event, "b01-allow-unverifiable"):
        decision = G.ASK if mode == "ask" else G.DENY
        for u in getattr(analysis, "unverifiable", ()) or ():
            reason = getattr(u, "reason", str(u))
            text = getattr(u, "text", "")
            shown = short(text, 100)
            what = reason if not shown or shown in reason else f"{reason}: `{shown}`"
            findings.append(G.Finding(
                "B01",
                f"this command cannot be read statically ({what}), so swarmgate "
                f"cannot tell whether it starts a heavy test.",
                "write the commands into a script file and run it by path (`bash ./script.sh`), or run "
                "them directly, so every command can be read before it runs.",
                decision))
            break
    if broken(event, "b01-allow-heavy"):
        return findings
    for i, cmd, pat in heavy_commands(event, config):
        where = via_text(cmd)
        if event.is_subagent:
            findings.append(G.Finding(
                "B01",
                f"heavy test refused: `{cmd_text(cmd)}`{where} matches the heavy pattern `{pat}`, and "
                f"heavy tests belong to the main agent (subagent `{event.actor}` may not run them: "
                f"several copies at full load take the machine for hours).",
                "do not run it. Run the narrow tests of your change instead (one package, one test "
                "file, one test id) and write in your report that the heavy run is still due; the "
                "main agent runs it at commit time."))
            continue
        env = command_env(analysis, i)
        if env.get(var) in values:
            continue
        got = f" ({var}={env[var]!r} is not one of {', '.join(values)})" if var in env else ""
        findings.append(G.Finding(
            "B01",
            f"heavy test refused: `{cmd_text(cmd)}`{where} matches the heavy pattern `{pat}` and is not "
            f"prefixed with {var}=commit or {var}=user-request{got}.",
            f"run it only when committing or when the user asked for it, as {_typed(event, config, analysis, i)} "
            f"(or {var}=user-request)."))
    return findings


def check_b02(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if broken(event, "b02-allow-uncapped"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    bad = pattern_problem(event, config, "B02")
    if bad:
        return bad
    b01_on = config.guard_mode("B01") == "on"
    runners = config["heavy"]["runners"]
    var = config["heavy"]["prefix_var"]
    findings = []
    for i, cmd, pat in heavy_commands(event, config):
        env = command_env(analysis, i)
        approved = env.get(var) in config["heavy"]["prefix_values"]
        if b01_on and (event.is_subagent or not approved):
            continue   # B01 refuses it and says how
        if runner_of(cmd, runners):
            continue
        findings.append(G.Finding(
            "B02",
            f"heavy command `{cmd_text(cmd)}` (pattern `{pat}`) does not run through "
            f"{' / '.join(runners)}: uncapped, one run can take the whole machine's memory and every "
            f"agent's work with it.",
            f"run {_typed(event, config, analysis, i)} "
            f"(or, to let swarmgate pick the host and the cap, the same line with host-dispatch in place of "
            f"run-with-memory-cap and its cap)."))
    return findings


GUARDS = (
    G.Guard(
        code="B01",
        summary="heavy tests: never from a subagent; from the main agent only with SWARMGATE_HEAVY=commit|user-request",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b01, needs=("bash",),
        doc=G.GuardDoc(
            why="In one day several implementers each ran `cargo test --all` in their own copy, four to five "
                "hours at full load each. Heavy tests belong to the main agent, at commit time or when the "
                "user asks. The guard was bypassed by a script written to /tmp and run, so scripts at "
                "command position are read (each once per judgement, with a depth and time bound), and "
                "what cannot be read statically is refused or asked about, never silently allowed.",
            example="a subagent runs `cargo test --workspace`, or `bash /tmp/verify.sh` whose line 3 is "
                    "`cargo test --all`; the main agent runs `make check-full` with no prefix",
            instead="Subagents: run the narrow tests of the change and report that the heavy run is due. "
                    f"Main agent: `{HEAVY_RUN_EXAMPLE}`, with every <...> replaced by your own words (the "
                    "refusal itself prints the command with the cap computed for this machine).",
            exceptions="Text that is only data (echo, grep, git commit -m, heredocs to non-shells) is not a "
                       "command. Unverifiable commands (base64 -d | bash, curl | sh, eval $VAR, python -c "
                       "naming a heavy pattern) are reported under B01 as deny or ask per [bash] unverifiable; "
                       "with `exec` (the default), what the session's exec-time shims judge where it starts (a "
                       "command name from the environment, an unread argument of cargo, make in an unknown "
                       "directory) passes with a context line and a decision-log trace (docs/exec-shims.md).",
        ),
        breaks={"b01-allow-heavy": "heavy commands pass for every agent",
                "b01-allow-unverifiable": "commands that cannot be read statically pass",
                "no-script-once-guard": "the bash reader reads a script again each time it is run or sourced "
                                        "within one judgement (scripts sourcing each other recurse to the depth "
                                        "bound and the command becomes unverifiable)"},
        cases=lambda: (
            G.Case("subagent-workspace-test", "PreToolUse", subagent_call("cargo test --workspace"),
                   fires=True, breaks=("b01-allow-heavy",)),
            G.Case("subagent-script-runs-heavy", "PreToolUse", subagent_call("bash scripts/verify.sh"),
                   fires=True, breaks=("b01-allow-heavy",),
                   files={"scripts/verify.sh": "#!/bin/bash\nset -e\ncargo build\ncargo test --all\n"}),
            G.Case("main-without-prefix", "PreToolUse", main_call("cargo --locked test --release --workspace"),
                   fires=True, breaks=("b01-allow-heavy",)),
            G.Case("main-prefix-value-wrong", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=yes run-with-memory-cap 8G -- make check-full"),
                   fires=True, breaks=("b01-allow-heavy",)),
            G.Case("subagent-base64-to-bash", "PreToolUse", subagent_call("echo Y2FyZ28gdGVzdAo= | base64 -d | bash"),
                   fires=True, breaks=("b01-allow-unverifiable",)),
            G.Case("main-scripts-sourcing-each-other-read-once", "PreToolUse", main_call("bash tools/a.sh"),
                   fires=False, breaks=("no-script-once-guard",),
                   files={"tools/a.sh": "#!/bin/bash\n. tools/b.sh\necho a\n",
                          "tools/b.sh": "#!/bin/bash\n. tools/a.sh\necho b\n"}),
            G.Case("main-commit-prefix", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace"),
                   fires=False),
            G.Case("main-user-request-export", "PreToolUse",
                   main_call("export SWARMGATE_HEAVY=user-request; run-with-memory-cap 8G -- make check-full"),
                   fires=False),
            G.Case("subagent-echo-is-data", "PreToolUse", subagent_call('echo "cargo test --workspace"'),
                   fires=False),
            G.Case("subagent-narrow-test", "PreToolUse", subagent_call("cargo test -p core parser"),
                   fires=False),
            G.Case("main-commit-message", "PreToolUse", main_call('git commit -m "run cargo test --workspace"'),
                   fires=False),
        ),
    ),
    G.Guard(
        code="B02",
        summary="an allowed heavy command runs through run-with-memory-cap, host-dispatch or multi-host-run",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b02, needs=("bash",),
        doc=G.GuardDoc(
            why="Several agents starting scripts freely can OOM the machine at any moment and wipe hours of "
                "work. A heavy run inside its own memory cap, under one shared total, can only kill itself.",
            example="`SWARMGATE_HEAVY=commit cargo test --workspace` (prefixed, but uncapped)",
            instead=f"`{HEAVY_RUN_EXAMPLE}`, with every <...> replaced by your own words, or the same with "
                    "`host-dispatch --` in place of `run-with-memory-cap auto --` to let swarmgate choose the host "
                    "and the cap.",
            exceptions="Heavy commands B01 refuses are not reported again here.",
        ),
        breaks={"b02-allow-uncapped": "allowed heavy commands may run uncapped"},
        cases=lambda: (
            G.Case("main-prefixed-uncapped", "PreToolUse", main_call("SWARMGATE_HEAVY=commit cargo test --workspace"),
                   fires=True, breaks=("b02-allow-uncapped",)),
            G.Case("main-env-prefixed-uncapped", "PreToolUse",
                   main_call("env SWARMGATE_HEAVY=user-request make check-full"),
                   fires=True, breaks=("b02-allow-uncapped",)),
            G.Case("main-capped", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=commit run-with-memory-cap 16G -- cargo test --workspace"),
                   fires=False),
            G.Case("main-dispatched", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=commit host-dispatch --mem 16G -- cargo test --all"),
                   fires=False),
            G.Case("subagent-light", "PreToolUse", subagent_call("cargo build --release"), fires=False),
            G.Case("subagent-heavy-left-to-b01", "PreToolUse", subagent_call("cargo test --workspace"), fires=False),
            G.Case("subagent-uncapped-when-b01-off", "PreToolUse", subagent_call("timeout 3600 make check-full"),
                   fires=True, breaks=("b02-allow-uncapped",), config='[guards]\nB01 = "off"\n'),
            G.Case("subagent-capped-when-b01-off", "PreToolUse",
                   subagent_call("run-with-memory-cap 8G -- make check-full"), fires=False,
                   config='[guards]\nB01 = "off"\n'),
        ),
    ),
)
