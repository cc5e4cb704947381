"""The defaults this machine gives, computed in one place: the memory margin, the runner's total, the
cap a way-out or a rule names for a heavy run, and the thread default (docs/runner.md, "Defaults
from the machine").

- **margin** (`[memory] margin = "auto"`, the default): a quarter of the machine's memory, at least
  1 GiB (half the memory on a machine under 2 GiB), at most 20 GiB (the seed's margin, for machines
  of 80 GiB and more). A size in the config is used as written.
- **total**: `[memory] total` when set, else the machine's memory less the margin.
- **heavy cap** (`heavy_cap`, what `run-with-memory-cap auto` and every way-out use): from the run
  history of the command's label (its peak × 1.5; the cap it hit × 1.5 when it hit its ceiling or
  was pushed out), else `[memory] default_prediction`; then never more than the total, rounded to a
  whole GiB (256M steps under 2 GiB) so that the printed cap, run here, is admitted rather than
  answered with 252 ("can never fit here").
- **thread default** (`[threads] heavy_default = "auto"`, the default): the machine's cores less one
  (the seed's 31 on its 32-core machine), at least 1.

Light at import: the hook imports this module only when it builds a way-out or judges D15; the run
history is read only when a command is named.
"""
from __future__ import annotations

import posix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from swarmgate.config import Config

GIB = 1 << 30
MIB = 1 << 20
MAX_AUTO_MARGIN = 20 * GIB


def machine_memory() -> int:
    """MemTotal of /proc/meminfo, in bytes (OSError when it cannot be read)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise OSError("MemTotal missing from /proc/meminfo")


def machine_cores() -> int:
    """The CPUs this process may run on (the affinity mask), else the machine's count, at least 1."""
    try:
        return max(len(posix.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(posix.cpu_count() or 1, 1)


def auto_margin(memory: int) -> int:
    """The margin `auto` gives a machine of ``memory`` bytes."""
    floor = GIB if memory >= 2 * GIB else memory // 2
    return min(max(memory // 4, floor), MAX_AUTO_MARGIN)


def margin(config: Config, memory: int | None = None) -> int:
    """[memory] margin in bytes: the configured size, or the automatic one for this machine."""
    m = config["memory"]["margin"]
    if m == "auto" or m is None:
        return auto_margin(machine_memory() if memory is None else memory)
    return int(m)


def runner_total(config: Config, memory: int | None = None) -> int:
    """The total every capped run (and agent cgroup) shares: [memory] total, else the machine's
    memory less the margin. ValueError with the fix when that leaves nothing (or cannot be read)."""
    mem = config["memory"]
    if mem["total"]:
        return int(mem["total"])
    try:
        memory = machine_memory() if memory is None else memory
    except OSError as e:
        raise ValueError(f"cannot read the machine's memory: {e}") from None
    m = margin(config, memory)
    total = memory - m
    if total <= 0:
        where = getattr(config, "path", None) or ".claude/swarmgate.toml"
        raise ValueError(f"[memory] margin {size_text(m)} leaves nothing for capped runs on this machine "
                         f"({size_text(memory)}); lower it or set [memory] total in {where}")
    return total


def size_text(n: int) -> str:
    """A size as run-with-memory-cap takes it: 8G, 1536M."""
    if n >= GIB and n % GIB == 0:
        return f"{n // GIB}G"
    return f"{max(n // MIB, 1)}M"


def _fit(need: int, total: int) -> int:
    """``need`` rounded up to a whole GiB (256M steps under 2 GiB), never above ``total`` rounded down."""
    step = GIB if need >= 2 * GIB else 256 * MIB
    up = -(-need // step) * step
    tstep = GIB if total >= 2 * GIB else 256 * MIB
    room = max((total // tstep) * tstep, min(total, 256 * MIB))
    return max(min(up, room), 4 * MIB)


def predicted_need(config: Config, entry: dict | None) -> tuple[int, str]:
    """(bytes, why) a run of a label with history ``entry`` needs, before the margin of 1.5."""
    default = int(config["memory"]["default_prediction"])
    if entry:
        try:
            cap = int(entry.get("cap") or 0)
            peak = int(entry.get("peak") or 0)
        except (TypeError, ValueError):
            cap = peak = 0
        if (entry.get("ceiling_hit") or entry.get("pushed_out")) and cap:
            return int(cap * 1.5), f"hit its cap {size_text(cap)} last time"
        if peak:
            return int(peak * 1.5), f"history peak {size_text(peak)} × 1.5"
    return default, "no history: [memory] default_prediction"


def heavy_cap(config: Config, argv: Sequence[str] | None = None, label: str | None = None,
              total: int | None = None) -> int:
    """The cap, in bytes, for a heavy run of ``argv`` (or ``label``) on this machine."""
    entry = None
    from swarmgate.hosts import history   # only when a cap is computed: D15 needs none of it

    if label is None and argv:
        label = history.normalise(list(argv))
    if label:
        try:
            entry = history.entry(history.load(), label)
        except (OSError, ValueError, TypeError):   # an unreadable history is no history (the runner says so)
            entry = None
    need, _why = predicted_need(config, entry)
    if total is None:
        try:
            total = runner_total(config)
        except ValueError:
            return need
    return _fit(need, total)


def heavy_cap_text(config: Config, argv: Sequence[str] | None = None) -> str:
    """``heavy_cap`` as the word to write after run-with-memory-cap."""
    return size_text(heavy_cap(config, argv))


def auto_threads(cores: int) -> int:
    return max(cores - 1, 1)


def thread_default(config: Config) -> int:
    """[threads] heavy_default: the configured number, or the machine's cores less one."""
    n = config["threads"]["heavy_default"]
    if n == "auto" or n is None:
        return auto_threads(machine_cores())
    return int(n)
