"""gate-staged's self-test: each protection proves it can turn red (SPEC §7).

Cells run the real gate on a throw-away repository with its own cache and
tree directories. Break switches (honoured only under a self-test marker):

- ``gate-sees-worktree``: stages run in the live worktree instead of the
  exported HEAD + index tree => ``staged-not-worktree`` must go red;
- ``cache-ignores-inputs``: the verdict key leaves the inputs out => a staged
  change reuses the old verdict, ``cache-miss-on-change`` must go red;
- ``no-tree-cleanup``: the temporary tree is left behind => ``tree-removed``
  must go red;
- ``preflight-ignores-conditions``: unmet run conditions pass =>
  ``preflight-unmet-78`` must go red.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from swarmgate.cell_outcome import broken, protected
from swarmgate.gate import preflight
from swarmgate.gate.gate_staged import Gate
from swarmgate.selftest import Cell, Suite

CONFIG = """[[gate.stages]]
name = "no-bad"
command = "! grep -q BAD data.txt"
inputs = ["data.txt"]
"""


class _Fixture:
    def __init__(self) -> None:
        self.tmp: Path | None = None

    @property
    def repo(self) -> Path:
        return self.tmp / "repo"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_AUTHOR_NAME="selftest", GIT_AUTHOR_EMAIL="selftest@localhost",
                   GIT_COMMITTER_NAME="selftest", GIT_COMMITTER_EMAIL="selftest@localhost",
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        return env

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.repo, env=self.env(), check=True, capture_output=True)

    def setup(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="swarmgate-gate-selftest-"))
        self.repo.mkdir()
        self.git("init", "-q")
        (self.repo / ".claude").mkdir()
        (self.repo / ".claude" / "swarmgate.toml").write_text(CONFIG)
        (self.repo / "data.txt").write_text("good\n")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "selftest base")

    def teardown(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def stage(self, text: str, worktree: str | None = None) -> None:
        (self.repo / "data.txt").write_text(text)
        self.git("add", "data.txt")
        if worktree is not None:
            (self.repo / "data.txt").write_text(worktree)

    def gate(self, name: str, use_cache: bool = True):
        return Gate(self.repo, use_cache=use_cache, cache_root=self.tmp / f"cache-{name}",
                    trees_root=self.tmp / "trees", out=io.StringIO(), env=self.env()).run()


def _no_bad(result):
    """The outcome of the project's `no-bad` stage, and what else went wrong (BROKEN) if anything:
    a cell judges only that stage's verdict, every other stage must pass."""
    mine = [o for o in result.outcomes if o.stage == "no-bad"]
    others = [o for o in result.outcomes if o.stage != "no-bad" and o.red]
    if len(mine) != 1:
        return None, broken(f"the gate ran no `no-bad` stage: {result.outcomes!r}")
    if others:
        return None, broken(f"other stages went red: {others!r}")
    if mine[0].verdict not in ("pass", "fail"):
        return None, broken(f"`no-bad` came to {mine[0].verdict!r} (rc {mine[0].rc}): {mine[0].output[-200:]!r}")
    return mine[0], None


def suite():
    fx = _Fixture()

    def staged_not_worktree():
        """BAD staged, good in the worktree: the gate fails (green), or it passes on the worktree (red)."""
        fx.stage("BAD\n", worktree="good\n")
        o, bad = _no_bad(fx.gate("a", use_cache=False))
        return bad or protected(o.verdict == "fail", "the gate judged the worktree, not the staged content")

    def cache_miss_on_change():
        """A staged change after a passing run: judged afresh and failed (green), or the old verdict
        reused (red)."""
        cache = fx.tmp / "cache-b"
        shutil.rmtree(cache, ignore_errors=True)
        fx.stage("good\n")
        o1, bad = _no_bad(fx.gate("b"))
        if bad:
            return bad
        if o1.verdict != "pass":
            return broken("the first run on good content did not pass")
        fx.stage("BAD\n")
        o2, bad = _no_bad(fx.gate("b"))
        return bad or protected(o2.verdict == "fail", f"the changed input reused the verdict ({o2.how})")

    def tree_removed():
        """After a run, no temporary tree is left (green), or one is (red)."""
        fx.stage("good\n")
        _o, bad = _no_bad(fx.gate("c", use_cache=False))
        if bad:
            return bad
        trees = fx.tmp / "trees"
        return protected(not trees.exists() or not any(trees.iterdir()), "the temporary tree was left behind")

    def preflight_unmet_78():
        """A script needing a program that is not installed: unmet (green), or passed (red)."""
        script = fx.tmp / "needs.sh"
        script.write_text("#!/bin/sh\n# run-condition: command swarmgate-no-such-program\necho ran\n")
        header = preflight.read_header(script)
        if header.errors:
            return broken(f"the header did not parse: {header.errors!r}")
        unmet, _ = preflight.check(header, script, admission=False)
        return protected(any("swarmgate-no-such-program" in u.why for u in unmet),
                         "a missing program passed the run condition")

    cells = [Cell("staged-not-worktree", staged_not_worktree), Cell("cache-miss-on-change", cache_miss_on_change),
             Cell("tree-removed", tree_removed), Cell("preflight-unmet-78", preflight_unmet_78)]
    switches = {"gate-sees-worktree": ["staged-not-worktree"], "cache-ignores-inputs": ["cache-miss-on-change"],
                "no-tree-cleanup": ["tree-removed"], "preflight-ignores-conditions": ["preflight-unmet-78"]}
    return Suite("gate-staged", cells, switches, setup=fx.setup, teardown=fx.teardown)
