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


def suite():
    fx = _Fixture()

    def staged_not_worktree() -> bool:
        fx.stage("BAD\n", worktree="good\n")
        return fx.gate("a", use_cache=False).red

    def cache_miss_on_change() -> bool:
        cache = fx.tmp / "cache-b"
        shutil.rmtree(cache, ignore_errors=True)
        fx.stage("good\n")
        first = fx.gate("b")
        fx.stage("BAD\n")
        second = fx.gate("b")
        return not first.red and second.red

    def tree_removed() -> bool:
        fx.stage("good\n")
        fx.gate("c", use_cache=False)
        trees = fx.tmp / "trees"
        return not trees.exists() or not any(trees.iterdir())

    def preflight_unmet_78() -> bool:
        script = fx.tmp / "needs.sh"
        script.write_text("#!/bin/sh\n# run-condition: command swarmgate-no-such-program\necho ran\n")
        unmet, _ = preflight.check(preflight.read_header(script), script, admission=False)
        return any("swarmgate-no-such-program" in u.why for u in unmet)

    cells = [Cell("staged-not-worktree", staged_not_worktree), Cell("cache-miss-on-change", cache_miss_on_change),
             Cell("tree-removed", tree_removed), Cell("preflight-unmet-78", preflight_unmet_78)]
    switches = {"gate-sees-worktree": ["staged-not-worktree"], "cache-ignores-inputs": ["cache-miss-on-change"],
                "no-tree-cleanup": ["tree-removed"], "preflight-ignores-conditions": ["preflight-unmet-78"]}
    return Suite("gate-staged", cells, switches, setup=fx.setup, teardown=fx.teardown)
