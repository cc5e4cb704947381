"""What a shell call leaves running (SPEC §4.3): B30 unbounded wait loops, B31 nested
background jobs.

Decisions (also in docs/bash-guards.md):
- B30 counts a loop as bounded by a `timeout` around it, a `read` condition
  (ends at end of input), or a numeric comparison in its condition or guarding
  a `break` whose operand moves: a variable the loop changes (`n=$((n+1))`,
  `((i++))`) or the clock (`$SECONDS`, `$(date +%s)`). A comparison of
  constants (`[ 1 -eq 1 ]`), `true`, `:`, or a variable nothing changes bound
  nothing; neither does a `break` on any other condition (`until curl -s ...`):
  the service may never come.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import guard_gates
from swarmgate.hooks.shell_event import analysis_of, broken, main_call, short, subagent_call

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent
    from swarmgate.hooks.bash_results import Loop, SimpleCommand


def _cmds_of(loop: Loop, attr: str) -> list[SimpleCommand]:
    return [c for c in (getattr(loop, attr, ()) or ()) if getattr(c, "words", None)]


def _split_loop_text(loop: Loop) -> tuple:
    """(condition text, body text) of a while/until loop, from its source text."""
    import re

    text = getattr(loop, "text", "") or ""
    m = re.match(r"\s*(?:while|until)\b(.*?)(?:;|\n|\s)\s*do\b(.*)", text, re.S)
    if not m:
        return "", text
    return m.group(1), m.group(2)


_TEXT_NUMERIC = None
_CLOCKS = ("SECONDS", "EPOCHSECONDS", "EPOCHREALTIME", "$(date", "`date", "$(($(date")


def _comparisons(text: str) -> list:
    """Operands of the numeric comparisons in [ ] / [[ ]] / (( )) text: [(left, right)]."""
    global _TEXT_NUMERIC
    if _TEXT_NUMERIC is None:
        import re
        _TEXT_NUMERIC = re.compile(
            r"(\S+)\s+-(?:lt|le|gt|ge|eq|ne)\s+(\S+)|\(\(([^()]*?)(<=|>=|==|!=|<|>)([^()]*?)\)\)")
    out = []
    for m in _TEXT_NUMERIC.finditer(text):
        if m.group(1) is not None:
            out.append((m.group(1), m.group(2)))
        else:
            out.append((m.group(3), m.group(5)))
    return out


def _modified(name: str, loop_text: str) -> bool:
    """Does the loop's text change variable ``name`` (an assignment, ++/--, let, read)?"""
    t = loop_text
    return any(s in t for s in (f"{name}=", f"{name}+=", f"{name}-=", f"{name}++", f"++{name}",
                                f"{name}--", f"--{name}", f"let {name}", f"let \"{name}", f"read {name}",
                                f"(({name} ", f"(( {name} "))


def _operand_counts(op: str, loop_text: str) -> bool:
    """An operand that moves while the loop runs: the clock, or a variable the loop changes.
    Constants (`[ 1 -eq 1 ]`) and unchanged variables do not bound a loop."""
    if any(c in op for c in _CLOCKS):
        return True
    k, n = 0, len(op)
    while k < n:
        c = op[k]
        if c.isalpha() or c == "_":
            j = k
            while j < n and (op[j].isalnum() or op[j] == "_"):
                j += 1
            if _modified(op[k:j], loop_text):
                return True
            k = j
            continue
        k += 1
    return False


def _text_has_counter(text: str, loop_text: str = "") -> bool:
    """A numeric comparison in [[ ]] / (( )) / [ ] text with an operand that moves (a counter
    the loop changes, or the $SECONDS / date clock)."""
    return any(_operand_counts(a, loop_text) or _operand_counts(b, loop_text) for a, b in _comparisons(text))


def loop_bound(loop: Loop) -> str | None:
    """What bounds a while/until loop, or None. The parsed condition is judged: a comparison
    of constants (`[ 1 -eq 1 ]`), `true` or `:` bound nothing."""
    cond = _cmds_of(loop, "condition_commands")
    body = _cmds_of(loop, "body_commands")
    every = cond + body
    if every and all(any((w.split()[0] if w else "") == "timeout"
                         for w in tuple(getattr(x, "wrappers", ()) or ()) + tuple(getattr(x, "via", ()) or ()))
                     for x in every):
        # a timeout around the loop shows on every command of it; one on a single
        # command inside only bounds that command
        return "a timeout around it"
    if any(c.name in ("read", "mapfile", "readarray", "getopts", "shift") for c in cond):
        return "its condition reads input (ends at end of input)"
    cond_text, body_text = _split_loop_text(loop)
    loop_text = getattr(loop, "text", "") or ""
    if _text_has_counter(cond_text, loop_text):
        return "a counter compared in its condition"
    if getattr(loop, "has_break", False) and _text_has_counter(body_text, loop_text):
        return "a counter guarding a break"
    return None


def _always_true(loop: Loop) -> bool:
    cond = _cmds_of(loop, "condition_commands")
    kind = getattr(loop, "kind", "")
    if not cond:
        ct = " ".join(_split_loop_text(loop)[0].split())
        if kind == "while":
            return ct in ("true", ":", "[ 1 ]", "(( 1 ))", "((1))")
        return ct == "false"
    if kind == "while":
        return all(c.name in ("true", ":") or (c.name in ("[", "test") and list(c.args) in (["1", "]"], ["1"]))
                   for c in cond)
    return all(c.name == "false" for c in cond)


def check_b30(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not guard_gates.shell_jobs(event, config):   # the gate the engine asks before loading this module
        return None
    if broken(event, "b30-allow-unbounded-loops"):
        return None
    if event.tool_name == "Monitor":
        return None   # the Monitor tool kills its command at timeout_ms (30 min at most): bounded
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    findings = []
    for loop in getattr(analysis, "loops", ()) or ():
        kind = getattr(loop, "kind", "")
        if kind not in ("while", "until"):
            continue
        cmds = _cmds_of(loop, "condition_commands") + _cmds_of(loop, "body_commands")
        sleeps = any(c.name == "sleep" for c in cmds)
        if not sleeps and not (_always_true(loop) and not getattr(loop, "has_break", False)):
            continue
        if loop_bound(loop):
            continue
        text = short(getattr(loop, "text", "") or "", 100)
        findings.append(G.Finding(
            "B30",
            f"wait loop with no bound: `{text}` polls with no timeout and no counter; if what it waits "
            f"for never comes it runs forever and holds the session.",
            "bound it: `timeout 600 bash -c '<the loop>'`, or count tries "
            "(`n=0; until <check> || [ $n -ge 60 ]; do sleep 5; n=$((n+1)); done`)."))
    return findings


def check_b31(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    if not guard_gates.shell_jobs(event, config):
        return None
    if broken(event, "b31-allow-nested-background"):
        return None
    analysis = analysis_of(event, config)
    if analysis is None:
        return None
    nested = list(getattr(analysis, "nested_background", ()) or ())
    if (event.tool_input.get("run_in_background") is True or event.tool_name == "Monitor") and not nested:
        for c in analysis.commands:
            if getattr(c, "background", 0):
                nested.append(getattr(c, "text", "") or " ".join(c.words))
                break
    if not nested:
        return None
    return G.Finding(
        "B31",
        f"nested background: `{short(nested[0], 100)}` is sent to the background inside something "
        f"already in the background; nobody waits for it, its exit code is lost and it outlives the "
        f"session (orphan jobs are how machines fill up unseen).",
        "background once: run the command in the foreground inside the background job, or use "
        "Bash's run_in_background (without `&`), or `detached-run start --label NAME -- CMD` for "
        "jobs that must outlive the session.")


GUARDS = (
    G.Guard(
        code="B30",
        summary="no wait loop without a bound (while/until polling with no timeout and no counter)",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b30, needs=("bash",),
        doc=G.GuardDoc(
            why="A loop that polls until something appears runs forever when it never appears: the tool "
                "call hangs, the session waits, nobody notices for hours.",
            example="`while true; do curl -s localhost:8080 && break; sleep 5; done`, "
                    "`until [ -f out/done ]; do sleep 10; done`",
            instead="`timeout 600 bash -c 'until [ -f out/done ]; do sleep 10; done'`, or a counter: "
                    "`n=0; while [ $n -lt 60 ]; do ...; sleep 5; n=$((n+1)); done`.",
            exceptions="`for` loops (bounded lists), `while read ...` loops (end at end of input), loops "
                       "with a numeric comparison in the condition or guarding a break, loops inside "
                       "`timeout`, and the Monitor tool's commands (Monitor stops them at its timeout_ms). "
                       "A break on any other condition does not bound a wait.",
        ),
        breaks={"b30-allow-unbounded-loops": "unbounded wait loops pass"},
        cases=lambda: (
            G.Case("main-while-true-sleep", "PreToolUse",
                   main_call("while true; do curl -s localhost:8080 && break; sleep 5; done"),
                   fires=True, breaks=("b30-allow-unbounded-loops",)),
            G.Case("subagent-until-file", "PreToolUse",
                   subagent_call("until [ -f out/done ]; do sleep 10; done; cat out/result"),
                   fires=True, breaks=("b30-allow-unbounded-loops",)),
            G.Case("main-for-seq", "PreToolUse",
                   main_call("for i in $(seq 30); do curl -s localhost:8080 && break; sleep 1; done"),
                   fires=False),
            G.Case("subagent-timeout-wrapped", "PreToolUse",
                   subagent_call("timeout 60 bash -c 'until [ -f out/done ]; do sleep 1; done'"), fires=False),
            G.Case("main-counter", "PreToolUse",
                   main_call("n=0; while [ $n -lt 10 ]; do sleep 1; n=$((n+1)); done"), fires=False),
            G.Case("subagent-read-loop", "PreToolUse",
                   subagent_call("while read -r f; do wc -l \"$f\"; done < files.txt"), fires=False),
        ),
    ),
    G.Guard(
        code="B31",
        summary="no background job inside a background job",
        events=("PreToolUse",), tools=G.SHELL_TOOLS, check=check_b31, needs=("bash",),
        doc=G.GuardDoc(
            why="A job sent to the background inside another background job is waited for by nobody: its "
                "exit code is lost, it outlives the session and keeps memory and cores nobody accounts for.",
            example="`( cargo build & ) &`, `nohup ./long.sh & ` inside a backgrounded subshell, "
                    "`bash -c 'server &' &`",
            instead="Background once (Bash's run_in_background, or one `&`), or "
                    "`detached-run start --label NAME -- CMD` for work that must outlive the session.",
            exceptions="A single `&` (or `nohup cmd &`) at the top level passes; inside a Bash call with "
                       "run_in_background or a Monitor command, which are background jobs already, it does not.",
        ),
        breaks={"b31-allow-nested-background": "nested background jobs pass"},
        cases=lambda: (
            G.Case("main-subshell-nested", "PreToolUse", main_call("( cargo build & ) &"),
                   fires=True, breaks=("b31-allow-nested-background",)),
            G.Case("subagent-bash-c-nested", "PreToolUse", subagent_call("bash -c 'python3 server.py &' &"),
                   fires=True, breaks=("b31-allow-nested-background",)),
            G.Case("main-single-background", "PreToolUse", main_call("nohup python3 server.py > /tmp/s.log 2>&1 &"),
                   fires=False),
            G.Case("subagent-echo-ampersand", "PreToolUse", subagent_call("echo 'a & b' && ls"), fires=False),
        ),
    ),
)
