"""The one list of swarmgate's tools: every console script and every `swarmgate VERB`.

`cli.VERBS`, the self-test suites of `swarmgate selftest` (selftest.TOOL_SUITES) and the
`[project.scripts]` of pyproject.toml come from here (tests/swarmgate/front_door_test.py holds the
last to it). Each tool's entry function is wrapped by front_door.entry(NAME), which gives every tool
the same start: `--selftest`, the break-switch refusal, and usage or set-up errors as one line
and exit 251.

Pure data, no imports: cli.py reads it on every `swarmgate` call, the hook's included.
"""
from __future__ import annotations


class Tool:
    __slots__ = ("name", "entry", "suite", "doc", "script")

    def __init__(self, name: str, entry: str, suite: str | None, doc: str, script: bool = False) -> None:
        self.name = name        # the console script, and the verb: `swarmgate NAME`
        self.entry = entry      # "module:function"; the function takes argv and returns an exit code
        self.suite = suite      # "module:function" returning its self-test Suite, or None
        self.doc = doc          # one line for `swarmgate --help`
        self.script = script    # also a console script of its own (pyproject [project.scripts])

    @property
    def prog(self) -> str:
        """How a person calls it: the script's name, or `swarmgate VERB`."""
        return self.name if self.script else f"swarmgate {self.name}"


TOOLS: tuple[Tool, ...] = (
    # verbs of the umbrella command only
    Tool("install", "swarmgate.install:main", None, "wire swarmgate into a repository (.claude/)"),
    Tool("selftest", "swarmgate.selftest_cli:main", None, "prove every guard and tool can turn red"),
    Tool("status", "swarmgate.hosts.status:main", None, "the runner's ledger, slice use and history peaks"),
    Tool("log", "swarmgate.log_view:main", None, "the decision log as a table, with filters"),
    Tool("report", "swarmgate.log_view:report_main", None,
         "counts and latencies per guard; --html/--json: the session flow (lanes, graph, runs, tokens)"),
    Tool("preflight", "swarmgate.gate.preflight:main", None,
         "check a script's admission and run conditions, then run it"),
    Tool("doctor", "swarmgate.doctor:main", None, "check that this machine and repository are wired correctly"),
    Tool("docs", "swarmgate.docs:main", None,
         "write the generated docs (guards, exit codes, checklists); --check compares"),
    Tool("sop", "swarmgate.agents.sop:main", "swarmgate.agents.sop:selftest_suite",
         "the upstream rules copy: check the stamp, sync"),
    Tool("records", "swarmgate.agents.records:main", "swarmgate.agents.records:selftest_suite",
         "scheduling records: create, update, validate, verify"),
    Tool("replay", "swarmgate.replay:main", None,
         "re-judge recorded sessions with the current guards; --junit FILE"),
    Tool("explain", "swarmgate.explain:main", None,
         "what the hook would decide for a command, and why: every command reached, each guard's verdict"),
    # the console scripts, also reachable as verbs
    Tool("run-with-memory-cap", "swarmgate.hosts.runner_cli:main", "swarmgate.hosts.runner_selftest:suite",
         "run a command in its own memory-capped cgroup", script=True),
    Tool("host-resources", "swarmgate.hosts.host_resources:main", "swarmgate.hosts.host_resources:selftest_suite",
         "free memory, cores and GPUs per host", script=True),
    Tool("host-dispatch", "swarmgate.hosts.host_dispatch:main", "swarmgate.hosts.host_dispatch:selftest_suite",
         "place a command on the host where it fits", script=True),
    Tool("multi-host-run", "swarmgate.hosts.multi_host_run:main", "swarmgate.hosts.multi_host_run:selftest_suite",
         "run one job on the second machine and bring results back", script=True),
    Tool("detached-run", "swarmgate.hosts.detached_run:main", "swarmgate.hosts.detached_run:selftest_suite",
         "long jobs that outlive the session", script=True),
    Tool("gpu-quiesce-run", "swarmgate.hosts.gpu_quiesce_run:main", "swarmgate.hosts.gpu_quiesce_run:selftest_suite",
         "stop whitelisted GPU services, then run", script=True),
    Tool("core-usage", "swarmgate.hosts.core_usage:main", "swarmgate.hosts.core_usage:selftest_suite",
         "cores in use and threads computing at once", script=True),
    Tool("gate-staged", "swarmgate.gate.gate_staged:main", "swarmgate.gate.selftest_cells:suite",
         "check exactly HEAD + the index before a commit", script=True),
    Tool("dispatch-prompt", "swarmgate.agents.dispatch_prompt:main", None,
         "print the dispatch skeleton of an agent type", script=True),
    Tool("agent-handover", "swarmgate.agents.handover:main", None,
         "hand-over file from a subagent's transcript", script=True),
    Tool("swarm-watch", "swarmgate.agents.swarm_watch:main", "swarmgate.agents.swarm_watch:selftest_suite",
         "the per-session watchdog", script=True),
    Tool("workspace-lock", "swarmgate.agents.workspace_lock:main", "swarmgate.agents.workspace_lock:selftest_suite",
         "the merge lock: acquire, release, status", script=True),
    Tool("work-dir-owner", "swarmgate.agents.work_dir_owner:main", "swarmgate.agents.work_dir_owner:selftest_suite",
         "ownership files of work directories", script=True),
    Tool("remind", "swarmgate.agents.remind:main", "swarmgate.agents.remind:selftest_suite",
         "the one timer: remind <when> <message>, remind list, remind cancel ID", script=True),
)

UMBRELLA = "swarmgate"  # the umbrella command itself: `swarmgate VERB ...` (swarmgate.cli:main)
UMBRELLA_ENTRY = "swarmgate.cli:main"


def get(name: str) -> Tool | None:
    for t in TOOLS:
        if t.name == name:
            return t
    return None


def verbs() -> dict[str, tuple[str, str]]:
    """verb -> ("module:function", one line)."""
    return {t.name: (t.entry, t.doc) for t in TOOLS}


def suites() -> dict[str, str]:
    """self-test suite name (the tool's name) -> "module:function" returning the Suite."""
    return {t.name: t.suite for t in TOOLS if t.suite}


def scripts() -> dict[str, str]:
    """The console scripts as pyproject.toml declares them: name -> "module:function"."""
    out = {UMBRELLA: UMBRELLA_ENTRY}
    out.update({t.name: t.entry for t in TOOLS if t.script})
    return out
