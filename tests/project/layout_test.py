"""Test paths mirror modules: the unit tests of module P/M.py live at tests/P/M_test.py (or
tests/P/M_<aspect>_test.py when one module has several), where P is a package directory of
pyproject.toml's package map. Tests that span modules live in the cross-cutting directories below,
or are listed here one by one with the reason. A new test file that names no module, or a new
directory under tests/, fails here until it is placed or listed."""
from __future__ import annotations

from pathlib import Path

from tests.project import package_map
from tests.project.package_map import ROOT

TESTS = ROOT / "tests"

# directories under tests/ that do not mirror a package, each with what it holds
CROSS_CUTTING_DIRS = {
    "corpus": "the command corpus (workarounds, benign controls, real-world commands) judged by every Bash guard",
    "e2e": "the real clients (Claude Code, Codex CLI, Gemini CLI) against scripted model APIs",
    "exec": "the execution harness: what a command really does against what the guards read",
    "vm": "test guests (QEMU, else user-mode Linux): cgroup v2 and systemd as PID 1, which the host does not have",
    "project": "the repository as a whole: packaging, lint config, its own gate, the test layout, the CI rule",
    "faults": "the fault harness: every state write of each tool failed or killed in turn, then the invariants",
    "bench": "smoke runs of bench/'s scripts in a tiny configuration (the benches themselves are not tests)",
}

# test files inside a mirrored directory that name no single module, each with why
CROSS_CUTTING_FILES = {
    "hooks/bash_guards_test.py": "every Bash rule family (heavy, scope, shell job, shell protection, timer, "
                                 "write scope) over the corpus, its cases and break switches, through the real hook",
    "hooks/guard_fixes_test.py": "issue 11's guard-side fixes across four families (B01's dry-run words, B30's "
                                 "parsed condition, W01 on perl's expression, T01 before real work)",
    "hooks/act_phase_test.py": "the act phase of swarmgate/guard.py on the real guards of several hook families "
                               "(D07, D16, P01, A01, C04); it needs the hooks' repository fixtures",
    "swarmgate/forged_state_test.py": "state an agent could rewrite, across config, doctor, install, sizes and "
                                      "the registry: none of it switches a guard off",
}


def package_dirs() -> dict[str, Path]:
    """{name under tests/: source directory}: swarmgate.hooks = "hooks" is tests/hooks/ for hooks/."""
    return {package.rpartition(".")[2]: folder for package, folder in package_map.package_dirs().items()}


def modules(directory: Path) -> set[str]:
    return {p.stem for p in directory.glob("*.py") if p.stem != "__init__"}


def stem_of(path: Path) -> str:
    name = path.stem
    return name.removesuffix("_test") if name.endswith("_test") else name.removeprefix("test_")


def named_module(stem: str, names: set[str]) -> str | None:
    """The module a test stem names: M itself, or the longest M with stem == M_<aspect>."""
    if stem in names:
        return stem
    hits = [m for m in names if stem.startswith(m + "_")]
    return max(hits, key=len) if hits else None


def modules_of_tests(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if p.name.endswith("_test.py") or p.name.startswith("test_"))


def test_every_directory_under_tests_is_mirrored_or_cross_cutting():
    mirrored = set(package_dirs())
    unplaced = sorted(d.name for d in TESTS.iterdir()
                      if d.is_dir() and not d.name.startswith((".", "__")) and d.name not in mirrored
                      and d.name not in CROSS_CUTTING_DIRS)
    assert not unplaced, (f"tests/{unplaced[0]}/ mirrors no package of pyproject.toml's package map "
                          f"({sorted(mirrored)}) and is not in CROSS_CUTTING_DIRS: move its tests to "
                          "tests/<package>/<module>_test.py, or list the directory with what it holds")
    assert not top_level_test_modules(), f"test files directly under tests/: {top_level_test_modules()}"


def top_level_test_modules() -> list[str]:
    return [p.name for p in TESTS.glob("*.py") if p.name.endswith("_test.py") or p.name.startswith("test_")]


def test_every_test_file_in_a_mirrored_directory_names_a_module():
    wrong = []
    for name, source in package_dirs().items():
        here = TESTS / name
        if not here.is_dir():
            continue
        names = modules(source)
        for path in modules_of_tests(here):
            rel = path.relative_to(TESTS).as_posix()
            if rel in CROSS_CUTTING_FILES:
                continue
            if named_module(stem_of(path), names) is None:
                wrong.append(f"tests/{rel} names no module of {source.relative_to(ROOT)}/")
    assert not wrong, ("\n".join(wrong) + "\nname it <module>_test.py or <module>_<aspect>_test.py, move it "
                       "to a cross-cutting directory, or list it in CROSS_CUTTING_FILES with why")


def test_the_cross_cutting_lists_are_current():
    dirs = package_dirs()
    for rel, why in CROSS_CUTTING_FILES.items():
        assert why, rel
        path = TESTS / rel
        assert path.is_file(), f"CROSS_CUTTING_FILES lists tests/{rel}, which does not exist"
        source = dirs[rel.split("/", 1)[0]]
        found = named_module(stem_of(path), modules(source))
        assert found is None, f"tests/{rel} names {found}.py: it is not cross-cutting, drop it from the list"
    for name, why in CROSS_CUTTING_DIRS.items():
        assert why and (TESTS / name).is_dir(), f"CROSS_CUTTING_DIRS lists tests/{name}/, which does not exist"
        assert name not in dirs, f"tests/{name}/ mirrors a package: it cannot be cross-cutting"


def test_named_module_reads_aspects_and_whole_names():
    names = {"bash_tree", "bash", "runner", "runner_cli"}
    assert named_module("bash_tree", names) == "bash_tree"
    assert named_module("bash_tree_fuzz", names) == "bash_tree"
    assert named_module("runner_cli_errors", names) == "runner_cli"
    assert named_module("runner_cgroup", names) == "runner"
    assert named_module("bashful", names) is None
    assert named_module("guard_fixes", names) is None
