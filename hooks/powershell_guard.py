"""B40: a PowerShell command cannot be read here, so it is not silently allowed.

Claude Code 2.1.332 has a PowerShell tool (`PowerShell`, input `command`) where PowerShell is
installed (`pwsh`; on Windows also Windows PowerShell; CLAUDE_CODE_USE_POWERSHELL_TOOL). Its
commands run programs exactly as Bash does (`cargo test --workspace` is the same command in
both), but swarmgate has no PowerShell reader: PowerShell's quoting, pipelines of objects,
`-Command` script blocks, `Invoke-Expression` and `&` call operators are not bash, and reading
them as bash would let through what it misreads. What cannot be read is never allowed silently
(SPEC §4.3):

- a **subagent's** PowerShell command is refused: it has the Bash tool, where every shell guard
  judges it;
- the **main agent's** follows `[bash] unverifiable` (deny, or ask the person; where nobody can
  answer, `[hooks] ask_when_headless`).

Switch it per repository like any guard (`[guards] B40 = "warn"` or "off") where PowerShell is
judged some other way. Light at import.
"""
from __future__ import annotations

from swarmgate import guard as G

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent

POWERSHELL_TOOLS = ("PowerShell",)


def check_b40(event: HookEvent, config: Config) -> Finding | None:
    from swarmgate.break_switch import broken

    if broken("b40-allow-powershell"):
        return None
    cmd = event.tool_input.get("command")
    shown = " ".join(str(cmd).split())[:120] if isinstance(cmd, str) else "(no command)"
    what = (f"the PowerShell command `{shown}` cannot be read by swarmgate (it has no PowerShell reader: "
            f"quoting, script blocks, Invoke-Expression and & are not bash), so no guard could judge it")
    if event.is_subagent:
        return G.Finding("B40", f"{what}; subagent `{event.actor}` may not run it.",
                         "run it through the Bash tool, where every shell guard judges it.")
    decision = G.ASK if config["bash"]["unverifiable"] == "ask" else G.DENY
    return G.Finding("B40", what + ".",
                     "run it through the Bash tool; if it must be PowerShell, the person runs it "
                     "([bash] unverifiable = \"ask\" asks them each time).", decision)


def _ps(command: str, **agent: str) -> dict:
    return {"tool_name": "PowerShell", "tool_input": {"command": command, "description": "run"}, **agent}


GUARDS = (
    G.Guard(
        code="B40", summary="a PowerShell command cannot be read here: refused for subagents, "
                            "[bash] unverifiable for the main agent",
        events=("PreToolUse",), tools=POWERSHELL_TOOLS, check=check_b40,
        doc=G.GuardDoc(
            why="The PowerShell tool runs programs as Bash does, but swarmgate has no PowerShell reader. "
                "Reading PowerShell as bash would misread quoting, script blocks, Invoke-Expression and the & "
                "call operator, and let through what the Bash guards refuse (a heavy test, a write outside "
                "the row, a timer). What cannot be read is never allowed silently.",
            example='PowerShell {"command": "cargo test --workspace | Out-File test.log"} from a subagent',
            instead="Use the Bash tool, where every shell guard judges the command.",
            exceptions="The main agent's PowerShell follows [bash] unverifiable (deny or ask). Set "
                       "[guards] B40 = \"off\" where PowerShell is judged some other way."),
        breaks={"b40-allow-powershell": "PowerShell commands run unjudged"},
        cases=lambda: (
            G.Case("subagent-powershell", "PreToolUse", _ps("cargo test --workspace", agent_id="a1",
                                                           agent_type="implementer"),
                   fires=True, breaks=("b40-allow-powershell",)),
            G.Case("main-agent-powershell", "PreToolUse", _ps("Get-ChildItem"), fires=True,
                   breaks=("b40-allow-powershell",)),
            G.Case("bash-is-not-powershell", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "Get-ChildItem"}}, fires=False),
        )),
)
