"""The style the tools hold: `ruff check` passes with the repository's config, and the modules allowed
lazy imports (PLC0415 switched off) are exactly ones a latency-sensitive entry point reaches."""
from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.project.package_map import ROOT, module_path

# the entry points whose start-up every agent tool call or every capped command pays
HOT_ENTRIES = ("swarmgate.cli", "swarmgate.hook_start", "swarmgate.hook_engine", "swarmgate.hosts.runner_cli",
               "swarmgate.gate.gate_staged")   # gate-staged: before every commit, all cached (bench/gate_cache)
# modules that import others by name (a string): the registry loads the guard modules that way, the
# bash walker the readers of project files, the writer table's dispatch its parsers' families (by
# their name in the package)
BY_NAME = ("swarmgate.hooks.registry", "swarmgate.hooks.bash_walker", "swarmgate.hooks.shell_writers")


def _ruff() -> list[str]:
    try:
        import ruff  # noqa: F401, PLC0415 - only to know whether it is installed
    except ImportError:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_passes_with_the_repository_config():
    cp = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True,
                        timeout=300)
    assert cp.returncode == 0, f"`ruff check` found problems (fix them, or `ruff check --fix`):\n{cp.stdout}{cp.stderr}"


def test_ruff_config_is_the_one_in_pyproject():
    """A stray ruff.toml / .ruff.toml would shadow pyproject's [tool.ruff] without a word."""
    for name in ("ruff.toml", ".ruff.toml"):
        assert not (ROOT / name).exists(), f"{name} shadows [tool.ruff] in pyproject.toml: keep one config"


def _imports(module: str) -> set[str]:
    """Every swarmgate module ``module`` can import, at the top or inside a function; for the modules in
    BY_NAME also the modules they name in strings (in full, or by their name in the same package)."""
    path = module_path(module)
    if path is None:
        return set()
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif module in BY_NAME and isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.split(":")[0]
            found.add(name if name.startswith("swarmgate.") else f"{module.rpartition('.')[0]}.{name}")
    return {m for m in found if module_path(m) is not None}


def reached_from(entries) -> set[Path]:
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        m = todo.pop()
        if m in seen or module_path(m) is None:
            continue
        seen.add(m)
        todo.extend(_imports(m))
    return {module_path(m).relative_to(ROOT) for m in seen}


def _lazy_import_exemptions() -> list[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    ignores = cfg["tool"]["ruff"]["lint"]["per-file-ignores"]
    return [pattern for pattern, rules in ignores.items() if "PLC0415" in rules]


def test_every_module_allowed_lazy_imports_is_on_a_hot_path():
    """PLC0415 is off only for modules the hook or the runner's start reaches (a lazy import there keeps
    every tool call / capped command fast); elsewhere imports belong at the top of the file."""
    hot = reached_from(HOT_ENTRIES)
    cold = []
    for pattern in _lazy_import_exemptions():
        if pattern.startswith(("bench/", "tests/")):
            continue  # scripts and tests: their own reasons, stated beside the entry
        matches = sorted(p.relative_to(ROOT) for p in ROOT.glob(pattern))
        assert matches, f"per-file-ignores entry {pattern!r} matches no file: remove it"
        if "*" in pattern:
            # a whole package (hooks/: the hook's own modules); a module in it that nothing imports
            # yet is work in progress, not a reason to move the package's imports
            if not any(p in hot for p in matches):
                cold.append(pattern)
        else:
            cold.extend(str(p) for p in matches if p not in hot)
    assert not cold, (f"PLC0415 is switched off for modules no hot entry point ({', '.join(HOT_ENTRIES)}) reaches: "
                      f"{cold}; move their imports to the top and drop them from [tool.ruff.lint.per-file-ignores]")


def test_the_hot_path_reaches_the_guard_modules():
    """The walk above follows lazy imports and by-name imports; if it stopped seeing the guard modules the
    previous test would pass vacuously."""
    hot = reached_from(HOT_ENTRIES)
    assert Path("hooks/registry.py") in hot and Path("hooks/dispatch_guards.py") in hot
    assert Path("hosts/runner.py") in hot
    assert Path("swarmgate/flow_html.py") not in hot   # the report page: no entry point of those pays it
