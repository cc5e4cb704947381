"""The hook engine: `swarmgate hook EVENT` (SPEC §3-4).

Reads the payload, loads the repository config, runs the guards registered
for the event and tool, each within its time budget, and prints one combined
answer: any deny wins, every reason names its guard code and the way out;
context additions are merged. It always answers: malformed input, an unknown
event, a bad config or a guard that raises each give a one-line message and a
definite decision (fail closed for refusing guards, pass with a note for
advisory ones) and exit 0 with JSON, never a traceback.
"""
from __future__ import annotations

import os
import sys
import time

from swarmgate import guard as G
from swarmgate.hook_protocol import EVENTS, STOP_EVENTS, HookInputError, dumps, parse_payload, render


class GuardTimeout(BaseException):
    """Raised by the alarm inside a guard that overran its budget.

    A BaseException, so a guard's own `except Exception:` cannot swallow it and
    carry on (which would let the call through unchecked)."""


def _on_alarm(signum, frame):  # noqa: ARG001
    raise GuardTimeout()


def _run_one(g, event, config, budget_ms: int):
    """Findings of one guard; crashes and timeouts become findings too."""
    import _signal as signal  # the C module: `signal` itself imports enum (ms on every call)

    use_alarm = budget_ms > 0 and hasattr(signal, "setitimer")
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, budget_ms / 1000.0)
    try:
        result = g.check(event, config)
    except GuardTimeout:
        return [_failure(g, f"did not finish within its {budget_ms} ms budget")]
    except BaseException as e:  # noqa: BLE001 - a guard bug (even sys.exit) must not let the call through
        return [_failure(g, f"crashed ({type(e).__name__}: {e})")]
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if result is None:
        return []
    if isinstance(result, G.Finding):
        return [result]
    try:
        found = [f for f in result if f is not None]
    except TypeError:
        found = [result]
    for f in found:
        if not isinstance(f, G.Finding):
            return [_failure(g, f"returned {type(f).__name__} instead of a Finding")]
    return found


def _failure(g, what: str):
    if g.advisory:
        return G.Finding(g.code, f"{g.summary}: could not do its work: it {what}. Nothing was refused.",
                         decision=G.CONTEXT)
    return G.Finding(
        g.code, f"the {g.code} guard {what}; refusing to be safe (fail closed).",
        f"if this blocks legitimate work, report it and set `[guards] {g.code} = \"warn\"` in "
        f".claude/swarmgate.toml until it is fixed.", G.DENY)


def hook_timeout_s(config, event_name: str, tool: str | None) -> int:
    """The timeout Claude Code gives this hook call: what `swarmgate install` wrote for it
    ([hooks] report_timeout for the shell tools' PreToolUse group, else [hooks] timeout)."""
    if event_name == "PreToolUse" and tool in G.SHELL_TOOLS:
        return int(config["hooks"]["report_timeout"])
    return int(config["hooks"]["timeout"])


def total_budget_s(config, event_name: str, tool: str | None) -> float:
    """Time all guards together may take: the hook's timeout less a margin for start-up and output.

    Past Claude Code's timeout the tool call proceeds unchecked, so the engine
    must answer before it, whatever the guards do."""
    timeout = hook_timeout_s(config, event_name, tool)
    return max(0.5, timeout - min(3.0, timeout * 0.2))


def evaluate(event, config, guards, deadline: float | None = None) -> list:
    """Findings of every applicable guard, in registry order (pure apart from the guards).

    Each guard runs within its own budget and within what is left of the
    call's total budget (``deadline``, time.monotonic(); default: the hook's
    timeout less a margin). A refusing guard that gets no time left refuses
    (fail closed); an advisory one is skipped with a note.
    """
    default_budget = int(config["hooks"]["guard_budget_ms"])
    if deadline is None:
        deadline = time.monotonic() + total_budget_s(config, event.name, event.tool_name)
    findings = []
    for g in guards:
        if not g.applies(event.name, event.tool_name):
            continue
        mode = config.guard_mode(g.code)
        if mode == "off":
            continue
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            found = [_failure(g, "was not run: the guards before it used up the hook's total time budget")]
        else:
            found = _run_one(g, event, config, min(g.budget_ms or default_budget, left_ms))
        for f in found:
            if mode == "warn" and f.decision in (G.DENY, G.ASK):
                f = G.Finding(f.code, "(warn only) " + f.message, f.way_out, G.WARN)
            findings.append(f)
    return findings


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


def answer(event_name: str, stdin_text: str, *, registry=None) -> tuple[str, int]:
    """(stdout text, exit code) for one hook call. Never raises."""
    t0 = time.monotonic()
    try:
        return _answer(event_name, stdin_text, registry, t0)
    except BaseException as e:  # noqa: BLE001 - the last line of defence: always answer
        msg = f"swarmgate: internal error in the hook engine ({type(e).__name__}: {e})"
        print(msg, file=sys.stderr)
        if event_name == "PreToolUse":
            out = render("PreToolUse", "deny", msg + "; refusing to be safe (fail closed).", "")
        else:
            out = {"systemMessage": msg}
        return dumps(out), 0


def _answer(event_name: str, stdin_text: str, registry, t0: float) -> tuple[str, int]:
    from swarmgate import break_switch

    if event_name not in EVENTS:
        msg = f"swarmgate: unknown hook event {event_name!r} (known: {', '.join(EVENTS)}); nothing was checked"
        print(msg, file=sys.stderr)
        return dumps({"systemMessage": msg}), 0

    refusal = break_switch.refusal()
    if refusal:
        msg = "[G01] " + refusal
        try:
            event = parse_payload(event_name, stdin_text)
        except HookInputError:
            event = None
        _log_failure(event_name, event, ["G01"], msg, t0)
        return _fail(event_name, msg), 0

    try:
        event = parse_payload(event_name, stdin_text)
    except HookInputError as e:
        print(f"swarmgate: {e}", file=sys.stderr)
        msg = f"swarmgate could not read the hook input: {e}"
        _log_failure(event_name, None, [], msg, t0)
        return _fail(event_name, msg), 0

    from swarmgate.config import ConfigError, load_config
    try:
        config = load_config(event.repo)
    except ConfigError as e:
        print(f"swarmgate: {e}", file=sys.stderr)
        msg = f"swarmgate config error: {e}. Fix the file; until then refusing."
        _log_failure(event_name, event, [], msg, t0)
        return _fail(event_name, msg), 0

    if registry is None:
        from swarmgate.hooks import registry as registry_module
        registry = registry_module.guards_for(event_name, event.tool_name)
    stop_active = bool(event.payload.get("stop_hook_active"))
    deadline = t0 + total_budget_s(config, event_name, event.tool_name)
    findings = evaluate(event, config, registry, deadline)
    decision, reason, context = combine(event_name, findings, stop_active)
    out = render(event_name, decision, reason, context, stop_hook_active=stop_active)

    logged = decision
    if event_name in STOP_EVENTS and decision == "deny":
        logged = "allow" if stop_active else "block"
    elif decision == "allow" and context:
        logged = "context"
    from swarmgate import decision_log
    decision_log.record(
        event.repo, session=event.session_id, agent_id=event.agent_id, agent_type=event.agent_type,
        event=event_name, tool=event.tool_name, codes=sorted({f.code for f in findings}),
        decision=logged, latency_ms=(time.monotonic() - t0) * 1000.0,
        input_text=event.shell_command or " ".join(event.file_paths) or str(
            event.tool_input.get("subagent_type") or ""),
        reason=reason, findings=per_code(event_name, findings, stop_active))
    return dumps(out), 0


_STRENGTH = {G.DENY: 4, G.ASK: 3, G.WARN: 2, G.CONTEXT: 1}


def per_code(event_name: str, findings: list, stop_hook_active: bool = False) -> dict:
    """{code: that code's own decision} (the strongest of its findings), in the log's words: on Stop
    and SubagentStop a refusal is "block" (or "allow" once a stop hook has continued the stop)."""
    out: dict = {}
    for f in findings:
        if _STRENGTH.get(f.decision, 0) > _STRENGTH.get(out.get(f.code), 0):
            out[f.code] = f.decision
    if event_name in STOP_EVENTS:
        out = {c: (("allow" if stop_hook_active else "block") if d == G.DENY else d) for c, d in out.items()}
    return out


def _log_failure(event_name: str, event, codes: list, msg: str, t0: float) -> None:
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
                            latency_ms=(time.monotonic() - t0) * 1000.0, input_text=text, reason=msg)
    except Exception:  # noqa: BLE001 - logging must not change the answer
        pass


def _fail(event_name: str, msg: str) -> str:
    """Definite answer when the hook cannot judge: refuse tool calls, never block a stop forever."""
    if event_name == "PreToolUse":
        return dumps(render("PreToolUse", "deny", msg, ""))
    return dumps({"systemMessage": msg})


def main(event_name: str) -> int:
    """Read stdin, answer, write the answer; every step inside the protection.

    The whole answer is encoded before anything is written (UTF-8; a stray surrogate becomes its
    JSON escape), so a write is all or nothing from our side. If writing fails (stdout closed,
    EPIPE), a refusal goes to stderr with exit 2, the protocol's other way to refuse: the client
    runs a call whose hook printed a cut-short JSON answer and exited 0 (measured,
    tests/e2e/fail_closed_e2e_test.py)."""
    try:
        try:
            data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        except Exception:  # noqa: BLE001 - unreadable stdin is bad input: answered below
            data = ""
        out, code = answer(event_name, data)
        blob = (out + "\n").encode("utf-8", "backslashreplace")
    except BaseException as e:  # noqa: BLE001 - even a MemoryError gets a definite answer
        out = _fail(event_name, f"swarmgate: internal error in the hook entry ({type(e).__name__}); "
                                "refusing to be safe (fail closed)")
        blob, code = (out + "\n").encode("utf-8", "backslashreplace"), 0
    try:
        _write_all(1, blob)
    except BaseException as e:  # noqa: BLE001
        try:
            os.write(2, f"swarmgate: could not write the hook answer ({type(e).__name__}: {e}); "
                        "refusing (exit 2)\n".encode("ascii", "backslashreplace"))
        except BaseException:  # noqa: BLE001
            pass
        return 2 if event_name == "PreToolUse" else 1
    return code


def _write_all(fd: int, blob: bytes) -> None:
    view = memoryview(blob)
    while view:
        n = os.write(fd, view)
        view = view[n:]
