"""The hook engine: `swarmgate hook EVENT` (SPEC §3-4).

Reads the payload, loads the repository config, runs the guards registered
for the event and tool, each within its time budget, and prints one combined
answer: any deny wins, every reason names its guard code and the way out;
context additions are merged. It always answers: malformed input, an unknown
event, a bad config or a guard that raises each give a one-line message and a
definite decision (fail closed for refusing guards, pass with a note for
advisory ones) and exit 0 with JSON, never a traceback.

One call, three phases (the contract is in swarmgate/guard.py):
``derive`` builds the facts the guards need, ``judge`` runs the pure checks,
``combine`` makes one decision, and only when the call goes ahead ``act`` runs
the guards' side effects (which may refuse late). ``decide`` does all of it;
``evaluate`` is derive + judge (the self-test cells); ``judge_recorded``
judges a recorded tool call with the current guards (H02, `swarmgate replay`).
"""
from __future__ import annotations

from swarmgate import lean_os as os
import sys
import time

from swarmgate import guard as G
from swarmgate.hook_protocol import EVENTS, STOP_EVENTS, HookInputError, dumps, goes_ahead, stop_word

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time: the hook's hot path
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    from swarmgate.config import Config
    from swarmgate.guard import Check, Finding, Guard
    from swarmgate.hook_protocol import HookEvent

    T = TypeVar("T")


class GuardTimeout(BaseException):
    """Raised by the alarm inside a guard that overran its budget.

    A BaseException, so a guard's own `except Exception:` cannot swallow it and
    carry on (which would let the call through unchecked)."""


def _on_alarm(signum: int, frame: object) -> None:  # noqa: ARG001
    raise GuardTimeout()


def _timed(fn: Callable[[], T], budget_ms: int) -> T:
    """fn() within ``budget_ms`` (0: no limit); GuardTimeout when it overruns."""
    import _signal as signal  # the C module: `signal` itself imports enum (ms on every call)

    use_alarm = budget_ms > 0 and hasattr(signal, "setitimer")
    if use_alarm:
        old = signal.getsignal(signal.SIGALRM)
        if old is not _on_alarm:   # a hook process set it once (``main``): no two syscalls per guard
            signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, budget_ms / 1000.0)
    try:
        return fn()
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if old is not _on_alarm:
                signal.signal(signal.SIGALRM, old)


def _run_one(g: Guard, fn: Check, event: HookEvent, config: Config, budget_ms: int) -> tuple[list, str]:
    """(findings, "") of one guard's check or act; ([], what went wrong) when it crashed, overran
    its budget or returned something that is not a Finding."""
    try:
        result = _timed(lambda: fn(event, config), budget_ms)
    except GuardTimeout:
        return [], f"did not finish within its {budget_ms} ms budget"
    except BaseException as e:  # noqa: BLE001 - a guard bug (even sys.exit) must not let the call through
        return [], f"crashed ({type(e).__name__}: {e})"
    if result is None:
        return [], ""
    if isinstance(result, G.Finding):
        return [result], ""
    found: list = []
    try:
        found = [f for f in result if f is not None]
    except TypeError:
        found = [result]
    for f in found:
        if not isinstance(f, G.Finding):
            return [], f"returned {type(f).__name__} instead of a Finding"
    return found, ""


def _failure(g: Guard, what: str, refuses: bool | None = None) -> Finding:
    """The one answer of a guard that could not judge: refuse (fail closed), or for an advisory
    guard (and an act that may not refuse) pass with a note."""
    if refuses is None:
        refuses = not g.advisory
    if not refuses:
        return G.Finding(g.code, f"{g.summary}: could not do its work: it {what}. Nothing was refused.",
                         decision=G.CONTEXT)
    return G.Finding(
        g.code, f"the {g.code} guard {what}; refusing to be safe (fail closed).",
        f"if this blocks legitimate work, report it and set `[guards] {g.code} = \"warn\"` in "
        f".claude/swarmgate.toml until it is fixed.", G.DENY)


def hook_timeout_s(config: Config, event_name: str, tool: str | None) -> int:
    """The timeout Claude Code gives this hook call: what `swarmgate install` wrote for it
    ([hooks] report_timeout for the shell tools' PreToolUse group, else [hooks] timeout)."""
    if event_name == "PreSkillShellCommand":   # judged as a Bash call (hook_protocol.ALIASES)
        event_name, tool = "PreToolUse", "Bash"
    if event_name == "PreToolUse" and (tool in G.SHELL_TOOLS or (tool or "").startswith("mcp__")):
        return int(config["hooks"]["report_timeout"])   # an MCP runner ([mcp] tools) is judged as Bash
    return int(config["hooks"]["timeout"])


def total_budget_s(config: Config, event_name: str, tool: str | None) -> float:
    """Time all guards together may take: the hook's timeout less a margin for start-up and output.

    Past Claude Code's timeout the tool call proceeds unchecked, so the engine
    must answer before it, whatever the guards do."""
    timeout = hook_timeout_s(config, event_name, tool)
    return max(0.5, timeout - min(3.0, timeout * 0.2))


def _active(event: HookEvent, config: Config, guards: Iterable[Guard]) -> list:
    """[(guard, mode)] of the guards that apply to this call and are not switched off."""
    out = []
    for g in guards:
        if not g.applies(event.name, event.tool_name):
            continue
        mode = config.guard_mode(g.code)
        if mode != "off":
            out.append((g, mode))
    return out


def _default_deadline(event: HookEvent, config: Config) -> float:
    return time.monotonic() + total_budget_s(config, event.name, event.tool_name)


def _left_ms(deadline: float | None) -> int | None:
    return None if deadline is None else int((deadline - time.monotonic()) * 1000)


def derive(event: HookEvent, config: Config, active: list, deadline: float | None, *, timed: bool = True) -> None:
    """Phase 1: build every fact the given guards need (hooks/derivations.py) that is not built
    yet, within the largest budget of the guards needing it and what is left of the call's.
    ``judge`` calls it for each guard just before that guard judges, so a fact is built once
    per call, outside any guard's budget, and a fact only an advisory guard late in the order
    needs (R01's host report, which reads peers over ssh) never eats the time of the refusing
    guards before it."""
    default_budget = int(config["hooks"]["guard_budget_ms"])
    names: dict = {}   # name -> the largest budget of the guards that need it
    for g, _ in active:
        for n in g.needs:
            names[n] = max(names.get(n, 0), g.budget_ms or default_budget)
    if not names:
        return
    from swarmgate.hooks import derivations

    for name, budget in names.items():
        if name in event.memo:
            continue
        if not timed:
            budget = 0
        left = _left_ms(deadline)
        if left is not None and left <= 0:
            derivations.fail(event, name, "the hook's total time budget was used up before it was built")
            continue
        try:
            _timed(lambda: derivations.build(event, config, name),  # noqa: B023 - called at once
                   budget if left is None else min(budget, left))
        except GuardTimeout:
            derivations.fail(event, name, f"it did not finish within {budget} ms")


def _mode_applied(f: Finding, mode: str) -> Finding:
    if mode == "warn" and f.decision in (G.DENY, G.ASK):
        return G.Finding(f.code, "(warn only) " + f.message, f.way_out, G.WARN)
    return f


def judge(event: HookEvent, config: Config, active: list, deadline: float | None,
          failures: bool = True, *, timed: bool = True) -> list:
    """Phase 2: every active guard's pure check, in registry order, each right after the facts it
    needs are derived. A guard that crashes, overruns or gets no time left fails closed (advisory:
    a note); with ``failures=False`` it adds nothing (H02 re-judging an old call: a crash on old
    input is not evidence)."""
    default_budget = int(config["hooks"]["guard_budget_ms"])
    findings: list[Finding] = []
    for g, mode in active:
        found: list[Finding]
        if g.needs:
            derive(event, config, [(g, mode)], deadline, timed=timed)
        left = _left_ms(deadline)
        if left is not None and left <= 0:
            found, what = [], "was not run: the guards before it used up the hook's total time budget"
        else:
            budget = (g.budget_ms or default_budget) if timed else 0
            found, what = _run_one(g, g.check, event, config, budget if left is None else min(budget, left))
        if what:
            found = [_failure(g, what)] if failures else []
        findings.extend(_mode_applied(f, mode) for f in found)
    return findings


def evaluate(event: HookEvent, config: Config, guards: Iterable[Guard], deadline: float | None = None,
             *, timed: bool = True, failures: bool = True) -> list:
    """Derive and judge: the findings of every applicable guard, in registry order. Nothing is
    written, locked or started (the act phase is ``decide``'s).

    Each guard runs within its own budget and within what is left of the
    call's total budget (``deadline``, time.monotonic(); default: the hook's
    timeout less a margin). A refusing guard that gets no time left refuses
    (fail closed); an advisory one is skipped with a note. ``timed=False``
    sets no timers at all (a caller that is itself a timed guard: H02).
    """
    active = _active(event, config, guards)
    if not timed:
        deadline = None
    elif deadline is None:
        deadline = _default_deadline(event, config)
    return judge(event, config, active, deadline, failures, timed=timed)


def act(event: HookEvent, config: Config, active: list, findings: list, deadline: float | None) -> list:
    """Phase 3: run the acts of the active guards (the call goes ahead), each function once, those
    that may refuse first. Returns the findings with what the acts returned in place of the judged
    findings of the same codes; a late refusal (a DENY from an act that may refuse, PreToolUse only)
    stops the acts after it. See swarmgate/guard.py for the contract."""
    acts = [(g, mode) for g, mode in active if g.act is not None]
    if not acts:
        return findings
    acts.sort(key=lambda gm: not gm[0].act_refuses)   # stable: registry order within each kind
    default_budget = int(config["hooks"]["guard_budget_ms"])
    may_refuse_here = event.name == "PreToolUse"
    done: set = set()
    out = list(findings)
    for g, _mode in acts:
        if g.act in done:
            continue
        done.add(g.act)
        refuses = g.act_refuses and may_refuse_here
        found: list[Finding]
        left = _left_ms(deadline)
        if left is not None and left <= 0:
            found, what = [], "was not run: the hook's total time budget was used up"
        else:
            budget = g.budget_ms or default_budget
            found, what = _run_one(g, g.act, event, config, budget if left is None else min(budget, left))
        if what:
            found = [_failure(g, "could not record what this call does (its act " + what + ")", refuses)]
        kept = []
        for f in found:
            mode = config.guard_mode(f.code)
            if mode == "off":
                continue
            if f.decision in (G.DENY, G.ASK) and not refuses:
                f = G.Finding(f.code, f.message, f.way_out, G.WARN)
            kept.append(_mode_applied(f, mode))
        if kept:
            codes = {f.code for f in kept}
            at = next((i for i, f in enumerate(out) if f.code in codes), len(out))
            out = [f for f in out[:at] if f.code not in codes] + kept + [f for f in out[at:] if f.code not in codes]
        if refuses and any(f.decision == G.DENY for f in kept):
            break   # a late refusal: the call does not go ahead; nothing after it records anything
    return out


class Outcome:
    """What the engine decided for one call: the findings, the combined answer and, when a guard
    rewrote the call (G.REWRITE) and it goes ahead, the tool input to run instead."""
    __slots__ = ("findings", "decision", "reason", "context", "updated_input")

    def __init__(self, findings: list, decision: str, reason: str, context: str,
                 updated_input: dict | None = None) -> None:
        self.findings = findings
        self.decision = decision
        self.reason = reason
        self.context = context
        self.updated_input = updated_input


def rewritten_input(event_name: str, findings: list, decision: str) -> dict | None:
    """The tool input a REWRITE finding asks to run instead (PreToolUse, a call that goes ahead), or on
    PostToolUse the tool's output the model sees instead (``{"tool_response": ...}``: K03's redaction of
    an MCP tool's output)."""
    if event_name not in ("PreToolUse", "PostToolUse") or decision == "deny":
        return None
    for f in reversed(findings):
        if f.decision == G.REWRITE and isinstance(f.updated_input, dict):
            return f.updated_input
    return None


def decide(event: HookEvent, config: Config, guards: Iterable[Guard], deadline: float | None = None) -> Outcome:
    """The three phases for one hook call: derive, judge, combine; then, when the call goes ahead
    (hook_protocol.goes_ahead), act, and combine again (an act may refuse late)."""
    if deadline is None:
        deadline = _default_deadline(event, config)
    active = _active(event, config, guards)
    findings = judge(event, config, active, deadline)
    stop_active = bool(event.payload.get("stop_hook_active"))
    decision, reason, context = unattended(event, config, *combine(event.name, findings, stop_active))
    if goes_ahead(event.name, decision, stop_active):
        findings = act(event, config, active, findings, deadline)
        decision, reason, context = unattended(event, config, *combine(event.name, findings, stop_active))
    return Outcome(findings, decision, reason, context, rewritten_input(event.name, findings, decision))


def headless(event: HookEvent) -> bool:
    """Nobody can answer a question in this session: Claude Code says so to its hooks with
    CLAUDE_CODE_SESSION_ATTENDED=0 (a `claude -p` run, a background session). Unknown (other
    clients, older releases) counts as attended: their dialects turn an ask into a deny anyway."""
    return event.client == "claude" and os.environ.get("CLAUDE_CODE_SESSION_ATTENDED") == "0"


def unattended(event: HookEvent, config: Config, decision: str, reason: str, context: str) -> tuple[str, str, str]:
    """An `ask` where nobody can answer becomes what [hooks] ask_when_headless says: "deny" (said so),
    "defer" (Claude Code 2.1.332 stops the run with the call pending, `deferred_tool_use` in its
    result, for a person to decide and resume), or stays "ask"."""
    if decision != "ask" or not headless(event):
        return decision, reason, context
    mode = config["hooks"]["ask_when_headless"]
    if mode == "deny":
        return "deny", (reason + "\nNobody can answer in this session (headless: CLAUDE_CODE_SESSION_ATTENDED=0), "
                        "so this is refused ([hooks] ask_when_headless = \"deny\"). Way out: do it another way, "
                        "or leave it for a person and say so in your report."), context
    if mode == "defer":
        return "defer", (reason + "\nNobody can answer in this session (headless), so the call is deferred for a "
                         "person ([hooks] ask_when_headless = \"defer\")."), context
    return decision, reason, context


def judge_recorded(payload: dict, config: Config, repo: str, guards: Iterable[Guard] | None = None,
                   *, timed: bool = True, failures: bool = True) -> list:
    """The findings the current guards and config give a tool call that was recorded (a transcript's
    tool_use, a decision-log line): ``payload`` is the PreToolUse payload (tool_name, tool_input,
    cwd, session_id, agent_id, agent_type). Derive and judge only: nothing is recorded, locked or
    started. ``guards`` defaults to the registered refusing guards (advisory ones report, and
    R01's report reads the hosts now, not then). Used by H02 (hooks/stop_guards.py) and
    `swarmgate replay`."""
    from swarmgate.hook_protocol import HookEvent

    event = HookEvent("PreToolUse", payload, repo)
    if guards is None:
        from swarmgate.hooks import registry
        guards = registry.refusing_guards("PreToolUse", event.tool_name)
    return evaluate(event, config, guards, timed=timed, failures=failures)


def combine(event_name: str, findings: list, stop_hook_active: bool = False) -> tuple[str, str, str]:
    """(decision, reason, context) from findings: any deny wins, then ask."""
    denies = [f.render() for f in findings if f.decision == G.DENY]
    asks = [f.render() for f in findings if f.decision == G.ASK]
    contexts = [f.render() if f.decision == G.WARN else f.message for f in findings
                if f.decision in (G.CONTEXT, G.WARN)]
    context = "\n\n".join(contexts)
    if denies:
        # asks are named too, so one round trip tells the agent everything that is wrong
        also = ("\nand would ask about:\n" + "\n".join(asks)) if asks else ""
        return "deny", "swarmgate refused this:\n" + "\n".join(denies) + also, context
    if asks:
        return "ask", "swarmgate asks before this runs:\n" + "\n".join(asks), context
    return "allow", "", context


def answer(event_name: str, stdin_text: str, *, registry: list[Guard] | None = None,
           client: str = "claude") -> tuple[str, int]:
    """(stdout text, exit code) for one hook call of ``client`` (its own event name). Never raises.

    What the client must read on stderr (the reason of an exit-2 refusal) is written there."""
    t0 = time.monotonic()
    try:
        out, code, err = _answer(event_name, stdin_text, registry, t0, client)
    except BaseException as e:  # noqa: BLE001 - the last line of defence: always answer
        msg = f"swarmgate: internal error in the hook engine ({type(e).__name__}: {e})"
        out, code, err = _last_resort(client, event_name, msg + "; refusing to be safe (fail closed).")
        err = err or msg
    if err:
        print(err, file=sys.stderr)
    return out, code


def _dialect(client: str):
    """The module that reads and writes ``client``'s hook protocol (swarmgate.clients)."""
    if client == "claude":
        from swarmgate import hook_protocol
        return hook_protocol
    from swarmgate import clients
    return clients.dialect(client)


def _last_resort(client: str, event_name: str, msg: str) -> tuple[str, int, str]:
    """(stdout, exit code, stderr) refusing in the client's own shape when the engine cannot judge.
    Never raises: without even the dialect, exit 2 with the reason on stderr refuses in every client."""
    try:
        dialect = _dialect(client)
        return dialect.refusal(dialect.canonical_event(event_name) or event_name, msg)
    except BaseException:  # noqa: BLE001
        return "", 2, msg


def gated_guards(event: HookEvent, config: Config, deadline: float | None = None,
                 event_name: str | None = None) -> list:
    """The guards of this call, as the hook loads them: a gated module (registry.GATES) only when
    its gate (hooks/guard_gates.py) says it can fire, asked once the facts the other guards need
    are built (the derive phase, under its budgets); the gates read the same facts."""
    from swarmgate.hooks import registry

    def choose(gated: list, loaded: list) -> set:
        derive(event, config, _active(event, config, loaded), deadline)
        from swarmgate.hooks import guard_gates

        return {m for m in gated if getattr(guard_gates, registry.GATES[m])(event, config)}

    return registry.guards_for(event_name or event.name, event.tool_name, choose)


def _answer(event_name: str, stdin_text: str, registry: list[Guard] | None, t0: float,
            client: str) -> tuple[str, int, str]:
    from swarmgate import break_switch

    dialect = _dialect(client)
    canonical = dialect.canonical_event(event_name)
    if canonical is None:
        known = EVENTS if client == "claude" else tuple(dialect.EVENTS)
        msg = (f"swarmgate: unknown hook event {event_name!r}" + ("" if client == "claude" else f" for {client}")
               + f" (known: {', '.join(known)}); nothing was checked")
        return dumps({"systemMessage": msg}), 0, msg

    refusal = break_switch.refusal()
    if refusal:
        msg = "[G01] " + refusal
        try:
            event = dialect.parse_payload(canonical, stdin_text)
        except HookInputError:
            event = None
        _log_failure(canonical, event, ["G01"], msg, t0, client)
        return dialect.refusal(canonical, msg)

    try:
        event = dialect.parse_payload(canonical, stdin_text)
    except HookInputError as e:
        msg = f"swarmgate could not read the hook input: {e}"
        _log_failure(canonical, None, [], msg, t0, client)
        out, code, err = dialect.refusal(canonical, msg)
        return out, code, err or f"swarmgate: {e}"

    from swarmgate.config import ConfigError, load_config
    try:
        config = load_config(event.repo)
    except ConfigError as e:
        msg = f"swarmgate config error: {e}. Fix the file; until then refusing."
        _log_failure(canonical, event, [], msg, t0, client)
        out, code, err = dialect.refusal(canonical, msg)
        return out, code, err or f"swarmgate: {e}"

    if event.tool_name and event.tool_name.startswith("mcp__"):   # judged as what it does ([mcp] tools)
        from swarmgate.hooks.mcp_tools import apply
        why = apply(event, config)
        if why:
            _log_failure(canonical, event, [], why, t0, client)
            return dialect.refusal(canonical, why)
    if client == "claude" and not event.agent_type and canonical not in ("TaskCreated", "TaskCompleted",
                                                                        "TeammateIdle"):
        from swarmgate.hooks.teammates import teammate_of
        mate = teammate_of(event)
        if mate is not None:   # a teammate's session: judged as a subagent of [teams] agent_type
            event.agent_type = config["teams"]["agent_type"]
            event.agent_id = "teammate:" + mate["name"]
    deadline = t0 + total_budget_s(config, canonical, event.tool_name)
    if registry is None:
        registry = gated_guards(event, config, deadline, canonical)
    limits: list = []
    if client != "claude":  # what this client lets each guard see (swarmgate.clients)
        from swarmgate.clients import apply_coverage
        registry, limits = apply_coverage(client, [g for g in registry if g.applies(canonical, event.tool_name)])
    stop_active = bool(event.payload.get("stop_hook_active"))
    tools_note = ""
    if client == "claude" and canonical == "SessionStart" and os.environ.get("CLAUDE_ENV_FILE"):
        # swarmgate's tools on the agents' PATH, whatever the guards' modes (swarmgate/tools_dir.py): its
        # line goes first in the env file, so X01's shim line, appended by its act below, comes first on PATH
        from swarmgate import tools_dir
        tools_note = tools_dir.at_session_start(os.environ["CLAUDE_ENV_FILE"])
    outcome = decide(event, config, registry, deadline)
    findings, decision, reason, context = outcome.findings, outcome.decision, outcome.reason, outcome.context
    if tools_note:
        context = f"{context}\n\n{tools_note}" if context else tools_note
    skill = client == "claude" and event_name == "PreSkillShellCommand"   # judged as Bash, answered as a skill's
    if skill:
        event.client_tool = "PreSkillShellCommand"
    logged = decision
    if canonical in STOP_EVENTS and decision == "deny":
        logged = stop_word(stop_active)
    elif decision == "allow" and context:
        logged = "context"
    from swarmgate import decision_log
    unlogged = decision_log.record(
        event.repo, session=event.session_id, agent_id=event.agent_id, agent_type=event.agent_type,
        event=canonical, tool=event.tool_name, codes=sorted({f.code for f in findings}),
        decision=logged, latency_ms=(time.monotonic() - t0) * 1000.0,
        input_text=event.shell_command or " ".join(event.file_paths) or str(
            event.tool_input.get("subagent_type") or ""),
        reason=reason, findings=per_code(canonical, findings, stop_active), client=client,
        client_tool=event.client_tool, limits=limits,
        deferred=_deferred(findings))
    if unlogged:   # the answer stands; it says the log could not be written (issue 26)
        note = f"swarmgate could not write the decision log: {unlogged}"
        context = f"{context}\n\n{note}" if context else note
    if client != "claude" and (reason or context):
        # no env file puts swarmgate's tools on these agents' PATH: the commands it hands them name
        # a tool that does not resolve there by its absolute path (swarmgate/tools_dir.py)
        from swarmgate.tools_dir import for_agents
        reason, context = for_agents(reason), for_agents(context)
    if skill:
        from swarmgate.hook_protocol import skill_output
        out, code, err = skill_output(decision, reason, context)
    else:
        # a rewrite is of the judged input: not for an MCP call judged as the tool it stands for
        mapped = client == "claude" and bool(event.client_tool)
        out, code, err = dialect.output(canonical, decision, reason, context, stop_hook_active=stop_active,
                                        updated_input=None if mapped else outcome.updated_input)
    return out, code, err


def _deferred(findings: list) -> str:
    """B01's trace of what reading left to the exec-time layer (hooks/exec_deferral.py), for the log."""
    for f in findings:
        if f.code == "B01" and f.decision == G.CONTEXT:
            from swarmgate.hooks.exec_deferral import DEFERRED
            if f.message.startswith(DEFERRED):
                return f.message
    return ""


_STRENGTH = {G.DENY: 4, G.ASK: 3, G.WARN: 2, G.CONTEXT: 1, G.REWRITE: 1}


def per_code(event_name: str, findings: list, stop_hook_active: bool = False) -> dict:
    """{code: that code's own decision} (the strongest of its findings), in the log's words: on Stop
    and SubagentStop a refusal is "block" (or "allow" once a stop hook has continued the stop)."""
    out: dict = {}
    for f in findings:
        if _STRENGTH.get(f.decision, 0) > _STRENGTH.get(out.get(f.code, ""), 0):
            out[f.code] = f.decision
    if event_name in STOP_EVENTS:
        out = {c: (stop_word(stop_hook_active) if d == G.DENY else d) for c, d in out.items()}
    return out


def _log_failure(event_name: str, event: HookEvent | None, codes: list, msg: str, t0: float,
                 client: str = "claude") -> None:
    """Log an answer given without judging (bad input, bad config, a break switch): the refusals
    a person most needs to see in `swarmgate log`. Never raises."""
    try:
        from swarmgate import decision_log
        if event is None:
            from swarmgate.config import find_repo
            repo, session, aid, atype, tool, text = find_repo(), "", None, None, None, ""
        else:
            repo, session, aid, atype, tool = (event.repo, event.session_id, event.agent_id, event.agent_type,
                                               event.tool_name)
            text = event.shell_command or " ".join(event.file_paths)
        decision_log.record(repo, session=session, agent_id=aid, agent_type=atype, event=event_name, tool=tool,
                            codes=codes, decision="deny" if event_name == "PreToolUse" else "allow",
                            latency_ms=(time.monotonic() - t0) * 1000.0, input_text=text, reason=msg,
                            client=client, client_tool=None if event is None else event.client_tool)
    except Exception:  # noqa: BLE001 - logging must not change the answer
        pass


def main(event_name: str, client: str = "claude", data: str | None = None) -> int:
    """Read stdin, answer, write the answer; every step inside the protection.

    The whole answer is encoded before anything is written (UTF-8; a stray surrogate becomes its
    JSON escape), so a write is all or nothing from our side. If writing fails (stdout closed,
    EPIPE), a refusal goes to stderr with exit 2, the protocol's other way to refuse: the client
    runs a call whose hook printed a cut-short JSON answer and exited 0 (measured,
    tests/e2e/fail_closed_e2e_test.py). Under Codex and Gemini a refusal that needs no JSON at
    all is exit 2 with nothing on stdout (swarmgate.codex_protocol, gemini_protocol)."""
    try:
        import _signal
        if hasattr(_signal, "setitimer"):   # this process is the hook's: the budgets' alarm, set once
            _signal.signal(_signal.SIGALRM, _on_alarm)
        if data is None:   # the payload not read yet (swarmgate/hook_entry.py reads it for the plugin)
            try:
                data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
            except Exception:  # noqa: BLE001 - unreadable stdin is bad input: answered below
                data = ""
        out, code = answer(event_name, data, client=client)
        blob = (out + "\n").encode("utf-8", "backslashreplace") if out else b""
    except BaseException as e:  # noqa: BLE001 - even a MemoryError gets a definite answer
        out, code, err = _last_resort(client, event_name, f"swarmgate: internal error in the hook entry "
                                                          f"({type(e).__name__}); refusing to be safe (fail closed)")
        if err:
            try:
                os.write(2, (err + "\n").encode("ascii", "backslashreplace"))
            except BaseException:  # noqa: BLE001
                pass
        blob = (out + "\n").encode("utf-8", "backslashreplace") if out else b""
    try:
        _write_all(1, blob)
    except BaseException as e:  # noqa: BLE001
        try:
            os.write(2, f"swarmgate: could not write the hook answer ({type(e).__name__}: {e}); "
                        "refusing (exit 2)\n".encode("ascii", "backslashreplace"))
        except BaseException:  # noqa: BLE001
            pass
        return 2 if event_name in ("PreToolUse", "BeforeTool") else 1
    return code


def _write_all(fd: int, blob: bytes) -> None:
    view = memoryview(blob)
    while view:
        n = os.write(fd, view)
        view = view[n:]
