"""The wrapper table of the bash reader: programs that run another command or a shell text.

Facts only (names, options that take a value); the walker (``bash_walker``) uses
them to find the command a wrapper runs.
"""
from __future__ import annotations


SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "busybox-sh"})
INTERPRETERS = {  # name prefix -> options that take inline code
    "python": ("-c",), "pypy": ("-c",), "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "lua": ("-e",),
}

WRAPPER_LABELS = {"nohup", "setsid", "sudo", "doas", "timeout", "xargs", "watch", "parallel",
                   "flock", "srun", "systemd-run"}
# options that take a value, per wrapper (short and long forms)
OPT_ARGS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "time": {"-f", "--format", "-o", "--output"},
    "exec": {"-a"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host",
             "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U",
             "--other-user", "-R", "--chroot"},
    "doas": {"-u", "-C"},
    "setsid": set(),
    "stdbuf": {"-i", "--input", "-o", "--output", "-e", "--error"},
    "ionice": {"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"},
    "chrt": {"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"},
    "taskset": set(),
    "xargs": {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-n", "--max-args",
              "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "--eof"},
    "watch": {"-n", "--interval", "-d", "--differences", "-q", "--equexit", "--chgexit", "-s"},
    "parallel": {"-j", "--jobs", "-P", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter",
                 "-I", "--colsep", "-C", "--joblog", "--results", "--tmpdir", "--timeout", "-L",
                 "-n", "-N", "--halt", "--memfree", "--load", "--delay", "--workdir", "--wd",
                 "-E", "--tag-string", "--retries", "--sshloginfile", "--basefile", "--env"},
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"},
    "srun": {"-n", "--ntasks", "-c", "--cpus-per-task", "-N", "--nodes", "-p", "--partition",
             "-t", "--time", "--mem", "-J", "--job-name", "-w", "--nodelist", "-o", "--output",
             "-e", "--error", "-A", "--account", "--gres", "-G", "--gpus", "--mem-per-cpu", "-D",
             "--chdir", "-q", "--qos"},
    "systemd-run": {"-p", "--property", "-u", "--unit", "--slice", "-E", "--setenv",
                    "--description", "-M", "--machine", "--uid", "--gid", "--nice",
                    "--working-directory", "--on-active", "--on-boot", "--on-startup",
                    "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property",
                    "-H", "--host"},
    # swarmgate's own runners (SPEC §5)
    "run-with-memory-cap": {"--label", "--timeout", "--wait", "--backend"},
    "host-dispatch": {"--mem", "--expect-duration", "--label", "--backend", "--threads"},
    "multi-host-run": {"--memory-cap", "--label", "--fetch", "--host", "--timeout"},
    "gpu-quiesce-run": set(),
    "detached-run": {"--label", "--wall-clock"},
}
RUNNERS = ("run-with-memory-cap", "host-dispatch", "multi-host-run", "gpu-quiesce-run",
            "detached-run")
# every command name dispatch() does more with than yield it
SPECIAL = frozenset(SHELLS) | frozenset(OPT_ARGS) | frozenset(RUNNERS) | frozenset({
    "break", "exit", "return", "source", ".", "trap", "eval", "cd", "pushd", "export", "declare",
    "typeset", "local", "readonly", "unset", "read", "mapfile", "readarray", "find", "make", "gmake",
    "command", "builtin", "su", "ssh", "uv", "poetry", "pipenv", "pdm", "hatch", "rye",
    "nix-shell", "nix", "script", "tmux", "screen", "swarmgate", "time", "nohup", "exec",
    "alias", "busybox", "printf", "set"})
INTERP_PREFIXES = tuple(INTERPRETERS)

def opt_value(args: list, short: str, longs: tuple = ()) -> str | None:
    """The value of option -X (also inside a getopt cluster: -qc VALUE, -cVALUE) or --long[=V]."""
    n = len(args)
    for k, a in enumerate(args):
        if a == "--":
            return None
        if longs and a.startswith(longs):
            if "=" in a:
                return a.split("=", 1)[1]
            if a in longs and k + 1 < n:
                return args[k + 1]
        if a.startswith("-") and not a.startswith("--") and short in a[1:]:
            j = a.index(short, 1)
            if j < len(a) - 1:
                return a[j + 1:]
            if k + 1 < n:
                return args[k + 1]
    return None


def skip_opts(args: list, i: int, takes: set) -> int:
    """Skip options starting at args[i]; return index of the first operand."""
    n = len(args)
    while i < n:
        a = args[i]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-":
            return i
        if "=" in a and a.startswith("--"):
            i += 1
            continue
        if a in takes:
            i += 2
            continue
        if not a.startswith("--") and len(a) > 2:
            # getopt cluster: the first letter that takes a value takes the rest
            # of the cluster (-n5) or, when it is the last letter, the next word (-dmS name)
            for k in range(1, len(a)):
                if "-" + a[k] in takes:
                    i += 2 if k == len(a) - 1 else 1
                    break
            else:
                i += 1
            continue
        i += 1
    return i
