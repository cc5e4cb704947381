"""R01: before a heavy or GPU command, add the host report to the agent's context (SPEC §4.4).

Never refuses. When the command matches the heavy patterns or uses a GPU
(config [gpu] patterns), every configured host is read (in parallel, 12 s
each, 25 s in all) and the report — cores, memory after bookings, GPUs, this
command's history and a verdict per host — is returned as additionalContext
(built in the derive phase: the fact "host_resources", whose builder is here,
registered with hooks/derivations.py), so the agent sees where the job fits
before it presses Enter. A host that cannot be read is reported as unreadable
and the command goes on.
"""
from __future__ import annotations

from swarmgate import guard as G
from swarmgate.hooks import derivations, guard_gates

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no typing import at run time (the hook's hot path)
    from swarmgate.config import Config
    from swarmgate.guard import Finding
    from swarmgate.hook_protocol import HookEvent


def check_r01(event: HookEvent, config: Config) -> Finding | list[Finding] | None:
    from swarmgate.break_switch import broken

    if not guard_gates.host_report(event, config):   # the gate the engine asks before loading this module
        return None
    if broken("r01-silent"):
        return None
    found = derivations.get(event, config, "host_resources")   # built in the derive phase (ssh to peers)
    if found is None:
        return None
    from swarmgate.hosts.host_resources import render_text

    return G.Finding("R01", f"[R01] host resources before this {found['why']} command:\n"
                            + render_text(found["report"]), decision=G.CONTEXT)


def _host_resources(event: HookEvent, config: Config) -> dict | None:
    """The "host_resources" fact: the report of every configured host, None when R01's gate is shut."""
    from swarmgate.hooks.heavy_commands import gpu_words, heavy_commands

    if not guard_gates.host_report(event, config):   # R01's gate: nothing heavy, no GPU pattern
        return None
    analysis = derivations.get(event, config, "bash")
    heavy = heavy_commands(event, config)
    gpu = gpu_words(analysis, config["gpu"]["patterns"])
    from swarmgate.hosts_config import load_hosts_config
    from swarmgate.hosts.host_resources import build

    report = build(config, load_hosts_config(), event.shell_command, gpu=bool(gpu))
    return {"report": report, "why": f"heavy ({heavy[0][2]})" if heavy else f"GPU ({gpu})"}


derivations.register("host_resources", _host_resources)


GUARDS = (
    G.Guard(
        code="R01",
        summary="before a heavy or GPU command, report free memory, cores and GPUs per host (never refuses)",
        events=("PreToolUse",),
        tools=G.SHELL_TOOLS,
        check=check_r01,
        needs=("bash", "host_resources"),
        advisory=True,
        budget_ms=26000,
        doc=G.GuardDoc(
            why="Agents start heavy jobs without looking at the machine, and a second OOM follows the first. "
                "A table of what each host has free, what this command peaked at last time and where it fits "
                "lands in the agent's context just before the command runs, so the choice is made with the "
                "numbers in front of it.",
            example="SWARMGATE_HEAVY=commit SWARMGATE_RUN_SCOPE='kind=full; target=workspace; range=all crates; "
                    "reason=commit gate for this batch' run-with-memory-cap auto -- cargo test --workspace",
            instead="Nothing to do: read the report; if the verdict says it does not fit here, use "
                    "host-dispatch or multi-host-run --peer.",
            exceptions="Only heavy commands ([heavy] patterns) and GPU commands ([gpu] patterns) get a report; "
                       "data commands (echo, grep, ...) never do.",
        ),
        breaks={"r01-silent": "no report for heavy or GPU commands"},
        cases=lambda: (
            G.Case("heavy-command-gets-report", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "cargo test --workspace"}},
                   fires=True, breaks=("r01-silent",)),
            G.Case("gpu-command-gets-report", "PreToolUse",
                   {"tool_name": "Bash", "agent_id": "a1", "agent_type": "experiment-runner",
                    "tool_input": {"command": "nvidia-smi --query-gpu=memory.free --format=csv"}},
                   fires=True, breaks=("r01-silent",)),
            G.Case("plain-command", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "ls -la src"}}, fires=False),
            G.Case("heavy-words-as-data", "PreToolUse",
                   {"tool_name": "Bash", "tool_input": {"command": "echo 'cargo test --workspace uses cuda'"}},
                   fires=False),
        ),
    ),
)
