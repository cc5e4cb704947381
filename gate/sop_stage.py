"""The first gate stage: is the upstream rules copy the one the agents read? (SPEC §6.4)

A repository may carry a copy of an upstream rules repository (``[sop] path``,
default ``.claude/sop``) with a stamp file (``[sop] stamp``) holding the
version the team last read. When the copy's ``VERSION`` differs from the
stamp, the rules changed under the team: red, "rules changed: read them
before you run".

When ``swarmgate.agents.sop`` provides ``stamp_status(repo, config)`` this
stage uses it (one implementation for the gate and SessionStart); otherwise it
compares the two files itself. Either way it reads the tree under test, not
the worktree.
"""
from __future__ import annotations

from pathlib import Path

from swarmgate.agents import sop

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: an all-cached gate run imports no typing
    from typing import Any


def _read(p: Path) -> str | None:
    try:
        return p.read_text(encoding="utf-8", errors="replace").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def local_status(tree: Path, sop_path: str, stamp_path: str) -> tuple[bool, str]:
    """(ok, message) comparing ``<sop_path>/VERSION`` with the stamp file inside ``tree``."""
    copy = tree / sop_path
    version = _read(copy / "VERSION")
    stamp = _read(tree / stamp_path)
    if not copy.exists() and stamp is None:
        return True, f"no upstream rules copy ({sop_path} absent): nothing to compare"
    if version is None:
        return False, (f"the rules copy {sop_path} has no VERSION file: sync it again "
                       f"(`swarmgate sop sync`), which writes VERSION and the stamp {stamp_path}")
    if stamp is None:
        return False, (f"rules changed: read them before you run ({sop_path}/VERSION is {version!r}, "
                       f"no stamp {stamp_path} yet). After reading, write the version into {stamp_path} "
                       f"(`swarmgate sop sync` does it)")
    if stamp != version:
        return False, (f"rules changed: read them before you run ({sop_path}/VERSION is {version!r}, "
                       f"the stamp {stamp_path} says {stamp!r}). After reading, update the stamp "
                       f"(`swarmgate sop sync`)")
    return True, f"rules copy {sop_path} at {version!r} matches the stamp"


def _interpret(result: Any) -> tuple[bool, str] | None:
    """Accept the likely shapes of agents.sop.stamp_status: (ok, msg), an object or a dict."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool):
        return result[0], str(result[1])
    if isinstance(result, dict) and "ok" in result:
        return bool(result["ok"]), str(result.get("message") or result.get("reason") or "")
    if hasattr(result, "ok"):
        return bool(result.ok), str(getattr(result, "message", "") or getattr(result, "reason", "") or "")
    if isinstance(result, bool):
        return result, "rules stamp " + ("matches" if result else "differs: read the rules before you run")
    return None


def stamp_check(tree: Path, config: Any) -> tuple[bool, str]:
    """(ok, message) of the tree under test; red with the step that leads out of it: when the
    working tree is already stamped (the agent ran the `swarmgate sop stamp` the red line gives), what is
    left is to stage the stamp, and saying `swarmgate sop stamp` again would be a loop."""
    ok, msg = _stamp_check(tree, config)
    return (ok, msg) if ok else (ok, msg + _stamped_but_unstaged(config))


def _stamped_but_unstaged(config: Any) -> str:
    repo = getattr(config, "repo", None)
    if not repo:
        return ""
    try:
        here, _ = sop.stamp_status(repo, config)
    except Exception:  # noqa: BLE001 - the hint is extra; the verdict stands without it
        return ""
    if not here:
        return ""
    sop_cfg = config["sop"]
    return (f"\nthe working tree is stamped already, but the gate checks HEAD + the index: stage it "
            f"(`git add {sop_cfg['stamp']} {sop_cfg['path']}`), then run gate-staged again")


def _stamp_check(tree: Path, config: Any) -> tuple[bool, str]:
    sop_cfg = config["sop"]
    status = getattr(sop, "stamp_status", None)
    if status is not None:
        try:
            got = _interpret(status(tree, config))
        except Exception as e:  # noqa: BLE001 - fall back, and say so
            got = None
            note = f" (swarmgate.agents.sop.stamp_status failed: {type(e).__name__}: {e}; compared locally)"
        else:
            note = ""
        if got is not None:
            return got
        ok, msg = local_status(tree, sop_cfg["path"], sop_cfg["stamp"])
        return ok, msg + note
    return local_status(tree, sop_cfg["path"], sop_cfg["stamp"])
