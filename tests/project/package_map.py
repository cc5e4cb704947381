"""The product's modules as pyproject.toml's package map lays them out (package-dir: swarmgate.X = "dir"),
for the tests that walk them: the test layout, the lint exemptions, the import graph (``imports``)."""
from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def package_dirs() -> dict[str, Path]:
    """{package: its source directory}, e.g. "swarmgate.hooks": ROOT/hooks."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {package: ROOT / folder for package, folder in data["tool"]["setuptools"]["package-dir"].items()}


def module_path(module: str) -> Path | None:
    """The file of a product module (or package), None when ``module`` is not one."""
    for pkg, folder in sorted(package_dirs().items(), key=lambda kv: -len(kv[0])):
        if module == pkg:
            return folder / "__init__.py"
        if module.startswith(pkg + "."):
            rest = module[len(pkg) + 1:].split(".")
            if not all(part.isidentifier() for part in rest):
                return None
            for p in (folder / Path(*rest).with_suffix(".py"), folder / Path(*rest) / "__init__.py"):
                if p.is_file():
                    return p
            return None
    return None


@functools.cache
def modules() -> dict[str, Path]:
    """{module name: file} of every module directly in a package directory."""
    out = {}
    for pkg, folder in package_dirs().items():
        for p in folder.glob("*.py"):
            out[pkg if p.stem == "__init__" else f"{pkg}.{p.stem}"] = p
    return out


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _import_statements(nodes) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement among ``nodes`` and below them (function and method bodies, classes,
    if, try, with, match), except those under ``if TYPE_CHECKING:`` (its else branch counts)."""
    out: list[ast.Import | ast.ImportFrom] = []
    for n in nodes:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out.append(n)
        elif isinstance(n, ast.If) and _type_checking(n):
            out += _import_statements(n.orelse)
        else:
            out += _import_statements(ast.iter_child_nodes(n))
    return out


def imports(module: str, path: Path) -> set[str]:
    """The product modules ``module`` imports anywhere in its source: every import statement, those
    inside functions included (a lazy import is still a dependency), not those under ``if
    TYPE_CHECKING`` (annotations only, never run); with the packages an import runs on the way
    (``swarmgate.hooks`` for ``swarmgate.hooks.registry``)."""
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found: set[str] = set()
    for n in _import_statements(ast.parse(path.read_text()).body):
        if isinstance(n, ast.Import):
            names = [a.name for a in n.names]
        else:
            base = n.module or ""
            if n.level:
                parts = package.split(".")[:len(package.split(".")) - (n.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in n.names]
        for name in names:
            parts = name.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    known = modules()
    return {m for m in found if m in known and m != module}
