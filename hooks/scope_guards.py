"""B10 run scope: every verification run says what it runs and why (SPEC §4.3).

Decisions (also in docs/bash-guards.md):
- B10 kind=full on a narrowed command passes (declaring more than is run
  harms nothing); kind=items/light/target on a whole-suite command is refused.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import guard_gates
from swarmgate.hooks.shell_event import (analysis_of, broken, cmd_text, command_env, launchers,
                                         main_call, pattern_problem, runnable, subagent_call, via_text)
from swarmgate.hooks.test_runs import (SCOPE_FIELDS, SCOPE_KINDS, TEMPLATE_WORDS, not_a_run, parse_scope,
                                       unfilled_fields, whole_suite)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent



_EXAMPLE = {"target": "the parser tests", "range": "tests/test_parser.py",
            "reason": "changed only the parser, its tests cover it"}


def check_b10(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.hooks.command_patterns import first_match
    from swarmgate.hooks.heavy_commands import heavy_match
    from swarmgate.hooks.way_outs import rerun

    if not guard_gates.verification(event, config):   # the gate the engine asks before loading this module
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    bad = pattern_problem(event, config, "B10")
    if bad:
        return bad
    sc = config["scope"]
    var = sc["prefix_var"]
    min_reason = int(sc["min_reason"])
    cwd = event.cwd or event.repo
    findings = []
    b01_refuses = event.is_subagent and config.guard_mode("B01") == "on"
    for i, cmd in runnable(analysis.commands):
        pat = first_match(cmd, sc["verify_patterns"], cwd=cwd, repo=event.root)
        if not pat or not_a_run(cmd):
            continue
        chain = launchers(analysis.commands, i)
        if any(first_match(p, sc["verify_patterns"], cwd=cwd, repo=event.root) for p in chain):
            continue   # started by a verification run (a gate script running pytest): that one is judged
        if b01_refuses and any(heavy_match(c, config, cwd, event.root) for c in (cmd, *chain)):
            continue   # a subagent's heavy run: B01 refuses it and says what to run instead
        env = command_env(analysis, i)
        raw = env.get(var)
        if raw is None:
            if broken(event, "b10-allow-missing-scope"):
                continue
            findings.append(G.Finding(
                "B10",
                f"verification run `{cmd_text(cmd)}`{via_text(cmd)} (pattern `{pat}`) has no run scope: "
                f"say what you run and why before you run it.",
                f"run `{rerun(event, config, analysis, i)}`, with every <...> replaced by your own words "
                f"(kind: full | items | light | target; reason at least {min_reason} characters)."))
            continue
        scope = parse_scope(raw)
        missing = [f for f in SCOPE_FIELDS if not scope.get(f)]
        if missing and not broken(event, "b10-allow-missing-scope"):
            findings.append(G.Finding(
                "B10",
                f"run scope of `{cmd_text(cmd)}` lacks {', '.join(missing)}: all four fields "
                f"(kind, target, range, reason) are required.",
                f"run `{rerun(event, config, analysis, i)}`, with every <...> replaced by your own words."))
            continue
        if missing:
            continue
        blank = unfilled_fields(scope)
        if blank and not broken(event, "b10-allow-placeholders"):
            findings.append(G.Finding(
                "B10",
                f"run scope of `{cmd_text(cmd)}` is not filled in: "
                + ", ".join(f"{f}={scope[f]!r}" for f in blank)
                + " still hold the template's placeholder.",
                f"replace each with your own words, e.g. `target={_EXAMPLE['target']}; "
                f"range={_EXAMPLE['range']}; reason={_EXAMPLE['reason']}` (the template's "
                f"{', '.join('<' + w + '>' for w in TEMPLATE_WORDS.values())}, `...` are refused)."))
            continue
        kind = scope["kind"].lower()
        if kind not in SCOPE_KINDS:
            findings.append(G.Finding(
                "B10", f"run scope kind={scope['kind']!r} is not one of {', '.join(SCOPE_KINDS)}.",
                "use kind=full (the whole suite), items (named items), light or target (one target)."))
            continue
        if len(scope["reason"]) < min_reason and not broken(event, "b10-allow-short-reason"):
            findings.append(G.Finding(
                "B10",
                f"run scope reason {scope['reason']!r} has {len(scope['reason'])} character(s); at least "
                f"{min_reason} are required: say why this run, now.",
                "write a reason that says what changed and why this run covers it, e.g. "
                "`reason=changed only the parser; its unit tests cover it`."))
        if kind == "full" and event.is_subagent and not broken(event, "b10-allow-subagent-full"):
            findings.append(G.Finding(
                "B10",
                f"subagent `{event.actor}` may not start a kind=full run (`{cmd_text(cmd)}`): whole-suite "
                f"runs belong to the main agent.",
                "narrow the run to the items your change touches and declare kind=items (or target), "
                "e.g. one package or one test file."))
            continue
        if kind != "full" and not broken(event, "b10-allow-kind-mismatch"):
            full_pat = first_match(cmd, sc["full_patterns"], cwd=cwd, repo=event.root)
            why = f"it matches the whole-suite pattern `{full_pat}`" if full_pat else whole_suite(cmd)
            if why:
                findings.append(G.Finding(
                    "B10",
                    f"run scope says kind={kind} but `{cmd_text(cmd)}` runs the whole suite ({why}).",
                    "narrow the command to what the scope names (a path, a test id, `-k`, `-p CRATE`), "
                    "or, as the main agent, declare kind=full with its reason."))
    return findings


_SCOPE_FULL = "SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; reason=commit gate for this batch'"
_SCOPE_ITEMS = ("SWARMGATE_RUN_SCOPE='kind=items; target=parser tests; range=one file; "
                "reason=changed only the parser module'")

GUARDS = (
    G.Guard(
        code="B10",
        summary="every verification run declares SWARMGATE_RUN_SCOPE='kind=...; target=...; range=...; reason=...'",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b10, needs=("bash",),
        doc=G.GuardDoc(
            why="One day three verification drivers each re-ran the whole suite, and every post-merge check "
                "ran all 212 test binaries although the batch touched two crates. Making the agent say, "
                "before it runs, what it runs and why works better than telling it afterwards that it ran "
                "too much.",
            example="`cargo test -p core` with no scope; `SWARMGATE_RUN_SCOPE='kind=items; ...' pytest` "
                    "(items declared, whole suite run); a reason of 'tests'",
            instead=f"`{_SCOPE_ITEMS} pytest tests/test_parser.py`",
            exceptions="kind=full on a narrowed command passes (declaring more than is run harms nothing). "
                       "Field names 種類/対象/範囲/理由 are accepted as kind/target/range/reason.",
        ),
        breaks={"b10-allow-missing-scope": "verification runs without a (complete) scope pass",
                "b10-allow-kind-mismatch": "kind=items/light/target on a whole-suite run passes",
                "b10-allow-short-reason": "reasons shorter than min_reason pass",
                "b10-allow-subagent-full": "subagents may declare kind=full",
                "b10-allow-placeholders": "a scope whose fields still hold the template's placeholders "
                                          "(<...>, ...) passes"},
        cases=lambda: (
            G.Case("subagent-no-scope", "PreToolUse", subagent_call("cargo test -p core"),
                   fires=True, breaks=("b10-allow-missing-scope",)),
            G.Case("main-missing-field", "PreToolUse",
                   main_call("SWARMGATE_RUN_SCOPE='kind=items; target=parser; reason=changed only the parser' "
                         "pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-missing-scope",)),
            G.Case("main-items-but-whole-suite", "PreToolUse",
                   main_call(_SCOPE_ITEMS + " pytest -q"),
                   fires=True, breaks=("b10-allow-kind-mismatch",)),
            G.Case("subagent-short-reason", "PreToolUse",
                   subagent_call("SWARMGATE_RUN_SCOPE='kind=items; target=parser; range=one file; reason=tests' "
                        "pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-short-reason",)),
            G.Case("subagent-full", "PreToolUse",
                   subagent_call("SWARMGATE_RUN_SCOPE='kind=full; target=all; range=everything; "
                        "reason=want to see everything green' pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-subagent-full",)),
            G.Case("main-template-unfilled", "PreToolUse",
                   main_call("SWARMGATE_RUN_SCOPE='kind=items; target=<what you run>; range=<how much of it>; "
                             "reason=<why this run, now>' pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-placeholders",)),
            G.Case("subagent-dots-unfilled", "PreToolUse",
                   subagent_call("SWARMGATE_RUN_SCOPE='kind=items; target=...; range=…; "
                                 "reason=changed only the parser' pytest tests/test_parser.py"),
                   fires=True, breaks=("b10-allow-placeholders",)),
            G.Case("subagent-whole-suite-no-scope", "PreToolUse", subagent_call("pytest -q"),
                   fires=True, breaks=("b10-allow-missing-scope",)),
            G.Case("subagent-items-narrow", "PreToolUse", subagent_call(_SCOPE_ITEMS + " pytest tests/test_parser.py"),
                   fires=False),
            G.Case("main-full-capped", "PreToolUse",
                   main_call("SWARMGATE_HEAVY=commit " + _SCOPE_FULL
                         + " run-with-memory-cap 16G -- cargo test --workspace"),
                   fires=False),
            G.Case("main-grep-is-data", "PreToolUse", main_call("grep -rn 'cargo test' docs/"), fires=False),
            G.Case("subagent-build-only", "PreToolUse", subagent_call("cargo build -p core"), fires=False),
        ),
    ),
)
