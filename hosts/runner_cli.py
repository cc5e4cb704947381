"""`run-with-memory-cap CAP [--label KEY] [--timeout SEC] [--wait SEC]
[--backend auto|systemd|cgroup2|cgroup1] [--unbounded] -- COMMAND...` (SPEC §5.1).

Also `run-with-memory-cap --selftest`. Exit codes: SPEC §9 (docs/runner.md).
"""
from __future__ import annotations

import sys
from collections.abc import Sequence

from swarmgate.front_door import UsageError, entry

USAGE = ("usage: run-with-memory-cap CAP|auto [--label KEY] [--timeout SEC] [--wait SEC] "
         "[--backend auto|systemd|cgroup2|cgroup1] [--unbounded] -- COMMAND...\n"
         "       run-with-memory-cap --selftest")


def _fail(msg: str) -> int:
    """A usage or set-up error: one line (the front door prints it) and exit 251; it runs nothing."""
    raise UsageError(f"exit 251: {msg} (`run-with-memory-cap --help` shows the usage)")


def machine_memory() -> int:
    from swarmgate.host_defaults import machine_memory as memory
    return memory()


def runner_total(cfg) -> int:
    """The total every capped run (and agent cgroup) shares: swarmgate/host_defaults.py computes it
    ([memory] total, else the machine's memory less the margin, `auto` by default)."""
    from swarmgate.host_defaults import runner_total as total
    return total(cfg)


def parse(argv: list[str]) -> dict | str:
    """The options as a dict, or an error message. Hand-rolled: argparse is not needed on the run path."""
    if "--" not in argv:
        return "put the command after `--` (e.g. run-with-memory-cap 8G -- cargo test)"
    i = argv.index("--")
    head, command = argv[:i], argv[i + 1:]
    if not command:
        return "no command after `--`"
    opts: dict = {"label": None, "timeout": None, "wait": None, "backend": None, "unbounded": False,
                  "cap": None}
    valued = {"--label": "label", "--timeout": "timeout", "--wait": "wait", "--backend": "backend"}
    j = 0
    while j < len(head):
        a = head[j]
        key, eq, val = a.partition("=")
        if key in valued:
            if not eq:
                if j + 1 >= len(head):
                    return f"{a} needs a value"
                j += 1
                val = head[j]
            opts[valued[key]] = val
        elif a == "--unbounded":
            opts["unbounded"] = True
        elif a.startswith("-"):
            return f"unknown option {a}"
        elif opts["cap"] is None:
            opts["cap"] = a
        else:
            return f"unexpected argument {a!r} before `--`"
        j += 1
    if opts["cap"] is None:
        return "give the memory cap first (e.g. 8G, or auto: the cap this machine and the command's history give)"
    from swarmgate.sizes import parse_size

    if opts["cap"] == "auto":   # the cap this machine and the label's history give (host_defaults)
        opts["cap_bytes"] = None
        opts["command"] = command
        return _check_rest(opts)
    try:
        opts["cap_bytes"] = parse_size(opts["cap"])
    except ValueError as e:
        return f"CAP: {e}"
    if opts["cap_bytes"] < 4096:
        return f"CAP {opts['cap']!r} is too small"
    opts["command"] = command
    return _check_rest(opts)


def _check_rest(opts: dict) -> dict | str:
    for k in ("timeout", "wait"):
        if opts[k] is not None:
            try:
                opts[k] = float(opts[k])
            except ValueError:
                return f"--{k} {opts[k]!r}: expected seconds (a number)"
            if opts[k] < 0 or (k == "timeout" and opts[k] == 0):
                return f"--{k} {opts[k]:g}: must be positive"
    if opts["backend"] is not None and opts["backend"] not in ("auto", "systemd", "cgroup2", "cgroup1"):
        return f"--backend {opts['backend']!r}: choose auto, systemd, cgroup2 or cgroup1"
    if opts["label"] is not None and not opts["label"].strip():
        return "--label must not be empty"
    return opts


@entry("run-with-memory-cap")
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    parsed = parse(args)
    if isinstance(parsed, str):
        return _fail(parsed)
    from swarmgate.config import ConfigError, load_config
    from swarmgate.hosts.cgroups import valid_name
    from swarmgate.hosts.history import normalise
    from swarmgate.hosts.runner import Options, execute

    try:
        cfg = load_config()
    except ConfigError as e:
        return _fail(str(e))
    mem = cfg["memory"]
    try:
        total = runner_total(cfg)
    except ValueError as e:
        return _fail(str(e))
    slice_name = mem["slice"]
    if not valid_name(slice_name):
        return _fail(f"[memory] slice = {slice_name!r}: use letters, digits, '-', '_' or '.'")
    label = parsed["label"] or normalise(parsed["command"])
    cap, cap_text = parsed["cap_bytes"], parsed["cap"]
    if cap is None:
        from swarmgate.host_defaults import heavy_cap, size_text
        cap = heavy_cap(cfg, label=label, total=total)
        cap_text = size_text(cap)
    opts = Options(cap=cap, cap_text=cap_text, argv=parsed["command"], label=label, total=total,
                   slice_name=slice_name,
                   wait=float(mem["wait"] if parsed["wait"] is None else parsed["wait"]),
                   report_every=float(mem["report_every"]),
                   backend=parsed["backend"] or mem["backend"], timeout=parsed["timeout"],
                   unbounded=parsed["unbounded"])
    return execute(opts)


if __name__ == "__main__":
    sys.exit(main())
