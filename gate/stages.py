"""The gate's stages, in order: the rules stamp, the common stages, the project's.

- ``rules-stamp`` (always first, SPEC §6.4): the upstream rules copy matches
  its stamp.
- common stages (``[gate] common = false`` turns them off), cheap and
  language-agnostic:
  ``no-conflict-markers`` (no staged text file holds a ``<<<<<<< ``/``>>>>>>> ``
  line) and ``no-large-files`` (no file added or changed against HEAD is larger
  than ``[gate] large_file``, default 500K).
- the project's ``[[gate.stages]]`` from the config, each a shell command run
  in the tree under test.

A built-in stage is a Python function of the exported tree; it is keyed and
cached like any other stage (its code version is part of its definition).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from swarmgate.config import ConfigError
from swarmgate.gate.sop_stage import stamp_check
from swarmgate.gate.tree import GITLINK, SYMLINK, Index
from swarmgate.sizes import human

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: an all-cached gate run imports no typing
    from collections.abc import Callable
    from typing import Any

BUILTIN_VERSION = "builtin/1"


class Stage:
    """One gate stage: a shell command (project stages) or a built-in check."""

    def __init__(self, name: str, source: str, command: str | None = None,
                 check: Callable[[Path, Index, Any], tuple[bool, str]] | None = None,
                 inputs: list[str] | None = None, heavy: bool = False, timeout: int = 3600,
                 cap: int | str = "auto", env: list[str] | None = None, python_inputs: str = "functions",
                 params: dict | None = None) -> None:
        self.name = name
        self.source = source                # "rules" | "common" | "project"
        self.command = command
        self.check = check
        self.inputs = list(inputs) if inputs is not None else ["**"]
        self.heavy = heavy
        self.timeout = timeout
        self.cap = cap
        self.env = list(env or [])
        self.python_inputs = python_inputs
        self.params = dict(params or {})     # built-in parameters that enter the key

    def definition(self) -> dict:
        """The canonical definition that enters the key."""
        if self.check is not None:
            return {"builtin": self.name, "version": BUILTIN_VERSION, "inputs": self.inputs,
                    "params": self.params, "python_inputs": self.python_inputs}
        return {"name": self.name, "command": self.command, "inputs": self.inputs, "heavy": self.heavy,
                "timeout": self.timeout, "cap": self.cap, "env": sorted(self.env),
                "python_inputs": self.python_inputs}

    def describe(self) -> str:
        return self.command if self.command is not None else f"built-in ({self.source})"


# --- built-in checks: (tree root, index, config) -> (ok, output) ---

def _rules_stamp(tree: Path, index: Index, config: Any) -> tuple[bool, str]:
    return stamp_check(tree, config)


CONFLICT_PREFIXES = (b"<<<<<<< ", b">>>>>>> ", b"<<<<<<<\n", b">>>>>>>\n")


def _conflict_markers(tree: Path, index: Index, config: Any) -> tuple[bool, str]:
    bad: list[str] = []
    for e in index.entries:
        if e.mode in (GITLINK, SYMLINK):
            continue
        try:
            data = (tree / e.path).read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8000]:
            continue  # binary
        for n, line in enumerate(data.splitlines(keepends=True), 1):
            if line.startswith(CONFLICT_PREFIXES):
                bad.append(f"{e.path}:{n}: {line.decode(errors='replace').rstrip()}")
                break
    if bad:
        return False, ("merge conflict markers are staged:\n  " + "\n  ".join(bad) +
                       "\nresolve the conflict, then `git add` the files again")
    return True, "no conflict markers"


def _head_blobs(index: Index) -> dict[str, str]:
    if index.head is None:
        return {}
    env = dict(os.environ)
    cp = subprocess.run(["git", "ls-tree", "-r", "-z", index.head], cwd=str(index.repo), env=env,
                        capture_output=True)
    out: dict[str, str] = {}
    for rec in cp.stdout.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        parts = meta.decode().split()
        if len(parts) == 3:
            out[path.decode("utf-8", errors="surrogateescape")] = parts[2]
    return out


def _large_files(tree: Path, index: Index, config: Any) -> tuple[bool, str]:
    limit = int(config["gate"]["large_file"])
    head = _head_blobs(index)
    big: list[str] = []
    for e in index.entries:
        if e.mode in (GITLINK, SYMLINK) or head.get(e.path) == e.oid:
            continue
        try:
            size = os.lstat(tree / e.path).st_size
        except OSError:
            continue
        if size > limit:
            big.append(f"{e.path} ({human(size)})")
    if big:
        return False, (f"files larger than [gate] large_file = {human(limit)} are staged:\n  " + "\n  ".join(big) +
                       "\nunstage them (`git restore --staged PATH`), use Git LFS, or raise [gate] large_file")
    return True, f"no new or changed file over {human(limit)}"


def _worktree_stamp(config: Any) -> str:
    repo = getattr(config, "repo", None)
    if not repo:
        return ""
    try:
        with open(os.path.join(repo, config["sop"]["stamp"]), encoding="utf-8", errors="replace") as f:
            return f.read(200).strip()
    except OSError:
        return ""


def build(config: Any) -> list[Stage]:
    """Every stage of this config, in order."""
    sop = config["sop"]
    # its red names what is left to do, which the working tree's stamp tells (sop_stage.stamp_check):
    # a verdict cached before `swarmgate sop stamp` must not answer after it
    stages = [Stage("rules-stamp", "rules", check=_rules_stamp, inputs=[sop["stamp"], sop["path"]],
                    params={"path": sop["path"], "stamp": sop["stamp"], "worktree_stamp": _worktree_stamp(config)})]
    if config["gate"]["common"]:
        # both read bytes (a marker inside a docstring, a file's size): keyed by content
        stages.append(Stage("no-conflict-markers", "common", check=_conflict_markers, inputs=["**"],
                            python_inputs="content"))
        stages.append(Stage("no-large-files", "common", check=_large_files, inputs=["**"],
                            params={"limit": int(config["gate"]["large_file"])}, python_inputs="content"))
    names = {s.name for s in stages}
    for raw in config["gate"]["stages"]:
        name = raw["name"]
        if name in names:
            raise ConfigError(f"{config.path or '<defaults>'}: [[gate.stages]] name {name!r} is the name of a "
                              f"built-in stage; choose another")
        names.add(name)
        stages.append(Stage(name, "project", command=raw["command"], inputs=list(raw["inputs"]),
                            heavy=bool(raw["heavy"]), timeout=int(raw["timeout"]),
                            cap=raw["cap"] if raw["cap"] == "auto" else int(raw["cap"]),
                            env=list(raw["env"]), python_inputs=raw.get("python_inputs", "functions")))
    return stages


def extra_key(stage: Stage, index: Index) -> dict:
    """Key parts a built-in stage depends on beyond its inputs (no-large-files: HEAD)."""
    if stage.name == "no-large-files" and stage.source == "common":
        return {"head": index.head}
    return {}
