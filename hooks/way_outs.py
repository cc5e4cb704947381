"""The command a shell guard hands out instead of the one it refused, built in one place so that
following one way-out never walks into another refusal (issue 22):

- a heavy run of the main agent gets the heavy prefix (`SWARMGATE_HEAVY=commit`, or the approved
  value it already has) and the runner with the cap this machine and the command's history give
  (`run-with-memory-cap 8G -- ...`, swarmgate/host_defaults.py);
- a verification run (anything the typed command runs that matches `[scope] verify_patterns`:
  `make check-full` whose recipe runs `cargo test` too) gets the run scope: the one it has when it
  is complete and filled in, else the template whose `<...>` fields the model must fill in (B10
  refuses them unfilled), of kind full for the main agent's whole suite or heavy run (as main-agent.md
  writes it); a subagent's whole-suite run also gets `<the tests of your change>` to name (kind=full
  is the main agent's);
- the rest of the typed command (its other assignments, its wrappers) is kept, but for swarmgate's
  own variables (`SWARMGATE_BREAK=...`, which G01 refuses typed).

Used by B01, B02, B10 (hooks/heavy_guards.py, hooks/scope_guards.py) and X01's exec-time way-out
(hooks/exec_check.py). Light at import; loaded only when a guard refuses.
"""
from __future__ import annotations

from swarmgate.hooks.shell_event import _quote, assignments_of, command_env, core_text, launchers
from swarmgate.hooks.test_runs import (NARROW_WORDS, not_a_run, parse_scope, scope_problems, scope_template,
                                       whole_suite)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmgate.config import Config
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Analysis

RUNNER = "run-with-memory-cap"
_RUNNERS = ("run-with-memory-cap", "host-dispatch", "multi-host-run")


def _family(cmds: list, top_idx: int) -> list[int]:
    """``top_idx`` and every command it starts (a runner's command, a script's lines, make's recipes)."""
    top = cmds[top_idx]
    return [j for j in range(top_idx, len(cmds))
            if cmds[j].words and (j == top_idx or any(p is top for p in launchers(cmds, j)))]


def _kept_scope(raw: str | None, config: Config, full: bool, subagent: bool) -> str | None:
    """The scope value to keep as it was typed: complete, filled in, and of a kind that fits."""
    if not raw:
        return None
    from swarmgate.hooks.test_runs import SCOPE_KINDS

    scope = parse_scope(raw)
    if scope_problems(scope, int(config["scope"]["min_reason"])):
        return None
    kind = scope["kind"].lower()
    if kind not in SCOPE_KINDS or (kind != "full" and full) or (kind == "full" and subagent):
        return None
    return raw


def _scope_word(config: Config, raw: str | None, full: bool, subagent: bool, heavy: bool = False) -> str:
    """The run scope of the way-out: the typed one when it is complete and fits, else the template, of
    kind full for the main agent's whole suite and for its heavy run (main-agent.md: heavy tests are
    run with kind=full; `pytest tests/integration` configured heavy got kind=items, which the rules
    give only to "every other verification run")."""
    var = config["scope"]["prefix_var"]
    kept = _kept_scope(raw, config, full, subagent)
    if kept is not None:
        return f"{var}={_quote(kept)}"
    return scope_template(var, "full" if (full or heavy) and not subagent else "items")


def heavy_prefix(config: Config, env: dict) -> str:
    var, values = config["heavy"]["prefix_var"], config["heavy"]["prefix_values"]
    value = env.get(var) if env.get(var) in values else values[0] if values else "commit"
    return f"{var}={value}"


def rerun(event: HookEvent, config: Config, analysis: Analysis, idx: int) -> str:
    """What to type instead of the typed command that holds command ``idx``."""
    from swarmgate.hooks.command_patterns import first_match
    from swarmgate.hooks.heavy_commands import heavy_match

    cmds = analysis.commands
    chain = launchers(cmds, idx)
    top = chain[-1] if chain else cmds[idx]
    top_idx = next(j for j, c in enumerate(cmds) if c is top)
    cwd, root = event.cwd or event.repo, event.root
    family = _family(cmds, top_idx)
    sc = config["scope"]
    # a subagent's heavy run is B01's to refuse ("do not run it"); with B01 off it goes under the runner
    heavy = (not event.is_subagent or config.guard_mode("B01") != "on") and any(
        heavy_match(cmds[j], config, cwd, root) for j in family)
    verify = [cmds[j] for j in family
              if first_match(cmds[j], sc["verify_patterns"], cwd=cwd, repo=root) and not not_a_run(cmds[j])]
    env = command_env(analysis, idx)
    parts = []
    narrow = False
    if heavy and not event.is_subagent:   # G01 refuses the prefix from a subagent
        parts.append(heavy_prefix(config, env))
    if verify:
        full = any(first_match(c, sc["full_patterns"], cwd=cwd, repo=root) or whole_suite(c) for c in verify)
        parts.append(_scope_word(config, env.get(sc["prefix_var"]), full, event.is_subagent, heavy))
        # a subagent may not run the whole suite (B10: kind=full is the main agent's): it names its tests
        tw = list(top.words)
        narrow = full and event.is_subagent and not heavy and any(
            tw[len(tw) - len(c.words):] == list(c.words) for c in verify)   # the run is what was typed (wrappers aside)
    # the command's own variables stay; swarmgate's (SWARMGATE_BREAK, SWARMGATE_STATE_DIR: G01 refuses
    # them typed) go, and the two this line sets are set once
    skip = {config["heavy"]["prefix_var"], sc["prefix_var"]}
    parts += [f"{k}={_quote(v)}" for k, v in assignments_of(top).items()
              if k not in skip and not k.startswith("SWARMGATE_")]
    if heavy:
        inner = _inner_of_runner(cmds, family, top) if top.name in _RUNNERS else top
        from swarmgate.host_defaults import heavy_cap_text

        parts.append(f"{RUNNER} {heavy_cap_text(config, list(inner.words))} -- {core_text(inner)}")
    else:
        parts.append(core_text(top) + (f" <{NARROW_WORDS}>" if narrow else ""))
    return " ".join(parts)


def _inner_of_runner(cmds: list, family: list[int], top):
    """The command a runner starts directly (the first of its family whose nearest launcher is it)."""
    for j in family[1:]:
        ch = launchers(cmds, j)
        if ch and ch[0] is top:
            return cmds[j]
    return top


def rerun_words(config: Config, words: list[str], cwd: str, repo: str | None, session: str = "") -> str:
    """The main agent's way-out for a heavy program seen where it starts (X01): its argv, read as the
    Bash tool would read it typed (so `make check-full` whose recipe runs `cargo test` gets the scope)."""
    from shlex import join

    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.shell_event import analysis_of, runnable

    payload = {"session_id": session, "transcript_path": "", "cwd": cwd or repo or ".", "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": join(words), "description": "way-out"}}
    event = HookEvent("PreToolUse", payload, repo or cwd)
    analysis = analysis_of(event, config)
    first = runnable(analysis.commands) if analysis is not None else []
    if first:
        return rerun(event, config, analysis, first[0][0])
    from swarmgate.host_defaults import heavy_cap_text
    return f"{heavy_prefix(config, {})} {RUNNER} {heavy_cap_text(config, words)} -- {join(words)}"
