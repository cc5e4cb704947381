"""`[heavy] equivalents` (issue 24 item 3): a heavy pattern names a workload, not a spelling.

Each HEAVY command is refused under B01 for a subagent in a repository whose heavy patterns name
`cargo test --workspace`/`--all`, `pytest tests/integration`, `npm run e2e` and `make check-full`; each
CONTROL passes B01. The table is data: an entry added, one dropped with `no ENTRY`, a bad one named.
The exec-time check (X01, hooks/exec_argv.heavy_argv) reads the same table, and the shims cover the
programs it names.
"""
from __future__ import annotations

import pytest

from swarmgate import guard as G
from swarmgate.config import ConfigError, validate
from swarmgate.hooks import exec_shims
from swarmgate.hooks.exec_argv import heavy_argv
from swarmgate.hooks.heavy_equivalents import workload_patterns
from tests import builders as build

CONFIG = """\
[heavy]
patterns = ["cargo test --workspace", "cargo test --all", "make check-full", "pytest tests/integration",
            "npm run e2e"]
"""
FILES = {
    "tests/integration/test_a.py": "def test_a():\n    pass\n",
    "tests/integration/test_b.py": "def test_b():\n    pass\n",
    "tests/unit/test_u.py": "def test_u():\n    pass\n",
    "web/e2e/login.spec.ts": "",
    "package.json": '{"scripts": {"e2e": "cd web && playwright test --workers=2", "build": "tsc -p ."}}\n',
    "Makefile": "check-full:\n\tcargo build --release\n\tpytest -x tests/integration\n",
    "args.txt": "-q\ntests/integration\n",
    "few.txt": "tests/unit\n",
}

HEAVY = [
    # cargo's test runners and watchers, with the selection they carry
    "cargo nextest run --workspace",
    "cargo +nightly --locked nextest run --all",
    "cargo-nextest nextest run --workspace",
    "cargo watch -x check -x 'test --workspace'",
    "cargo watch --exec='test --all'",
    "cargo llvm-cov --workspace",
    "cargo llvm-cov nextest --workspace",
    "cargo tarpaulin --workspace --out Html",
    "cargo mutants --workspace",
    "cargo miri test --all",
    "cargo hack test --workspace --each-feature",
    # pytest's aliases and collections that include tests/integration
    "py.test tests/integration",
    "pytest",
    "pytest -q",
    "pytest tests",
    "pytest tests/",
    "pytest .",
    "pytest ./tests -x",
    "cd tests && pytest integration",
    "pytest ~+/tests/integration",                 # ~+ is $PWD, ~- is $OLDPWD
    "cd tests && pytest ~-/tests/integration",
    "pytest --pyargs tests.integration",           # a dotted name is the package's directory
    "cd tests && python3 -m pytest",
    "python3 -m pytest tests",
    "uv run pytest tests -n 4",
    "pytest tests/integration/test_a.py tests/integration/test_b.py",
    "pytest tests/integration/test_*.py",
    "pytest @args.txt",
    "PYTEST_ADDOPTS=tests pytest",
    "pytest tests/integration::test_a tests/integration/test_b.py -k slow",
    # the heavy scripts' bodies, run directly
    "npx playwright test",
    "cd web && npx playwright test --project=chromium",
    "playwright test e2e/login.spec.ts",
    "pnpm exec playwright test",
]

CONTROLS = [
    "pytest --pyargs tests.unit",
    "pytest ~+/tests/unit",
    "cargo nextest run -p parser",
    "cargo build -p mutants --workspace",
    "cargo watch -x check",
    "cargo watch -x 'test -p parser'",
    "cargo llvm-cov report",
    "cargo test -p parser",
    "pytest tests/unit",
    "pytest tests/integration/test_a.py",
    "pytest tests --ignore=tests/integration",
    "pytest --collect-only tests",
    "pytest @few.txt",
    "cd tests && pytest unit",
    "cargo build --release",
    "tsc -p .",
    "npm run build",
    "npx eslint web",
    "echo 'cargo nextest run --workspace'",
    "grep -rn 'pytest tests' docs",
    "git commit -m 'run pytest tests and playwright test'",
]


@pytest.fixture
def ejudge(judge):
    judge.config_text = CONFIG
    judge.write(FILES)
    return judge


def b01(j, command: str, **kw) -> list:
    return [f for f in j.findings(command, subagent=True, **kw) if f.code == "B01"]


@pytest.mark.parametrize("command", HEAVY)
def test_an_equivalent_of_a_heavy_pattern_is_heavy(ejudge, command):
    found = b01(ejudge, command)
    assert found and all(f.decision == G.DENY for f in found), f"B01 missed {command!r}"
    assert "heavy test refused" in found[0].message


@pytest.mark.parametrize("command", CONTROLS)
def test_what_only_looks_like_one_is_not(ejudge, command):
    assert b01(ejudge, command) == [], command


def test_the_refusal_names_the_pattern_and_why(ejudge):
    (f,) = b01(ejudge, "cargo nextest run --workspace")
    assert ("matches the heavy pattern `cargo test --workspace (read as cargo test --workspace, by [heavy] "
            "equivalents)`") in f.message
    (f,) = b01(ejudge, "pytest tests")
    assert "`pytest tests/integration (its collection includes that directory" in f.message
    (f,) = b01(ejudge, "npx playwright test")
    assert "`playwright test (the body of a heavy script" in f.message


def test_the_main_agent_runs_an_equivalent_with_the_prefix_and_the_cap(ejudge):
    assert b01(ejudge, "cargo nextest run --workspace")   # the main agent too, unprefixed
    ok = ejudge.findings("SWARMGATE_HEAVY=commit run-with-memory-cap 8G -- cargo nextest run --workspace")
    assert not [f for f in ok if f.code in ("B01", "B02")], ok
    uncapped = ejudge.findings("SWARMGATE_HEAVY=commit cargo nextest run --workspace")
    assert [f for f in uncapped if f.code == "B02"]


def test_an_entry_the_config_adds_counts_and_no_drops_a_built_in_one(judge):
    judge.config_text = CONFIG + ('equivalents = ["cargo xtask ci = cargo test --workspace", "no script bodies", '
                                  '"no cargo nextest run = cargo test"]\n')
    judge.write(FILES)
    assert b01(judge, "cargo xtask ci")
    assert b01(judge, "cargo xtask ci --release")
    assert b01(judge, "npx playwright test") == []
    assert b01(judge, "cargo nextest run --workspace") == []
    assert b01(judge, "cargo tarpaulin --workspace")   # the rest of the table stands
    assert b01(judge, "pytest tests")


def test_without_pytest_collections_only_the_spelling_counts(judge):
    judge.config_text = CONFIG + 'equivalents = ["no pytest collections"]\n'
    judge.write(FILES)
    assert b01(judge, "pytest tests") == []
    assert b01(judge, "pytest tests/integration")


@pytest.mark.parametrize("entry, says", [
    ("cargo nextest run", "neither `ALT = CANON`"),
    ("cargo 'nextest = cargo test", "unbalanced '"),
    ("cargo watch -x {} -s {} = cargo {}", "stands once"),
    ("cargo nextest = cargo {}", "only when ALT has it"),
])
def test_a_bad_entry_is_named_in_one_line(tmp_path, entry, says):
    with pytest.raises(ConfigError) as e:
        validate({"heavy": {"equivalents": [entry]}}, str(tmp_path / "swarmgate.toml"))
    text = str(e.value)
    assert "[heavy] equivalents" in text or "heavy.equivalents" in text, text
    assert says in text and "\n" not in text.strip(), text


def test_the_exec_check_reads_the_same_table(ejudge):
    cfg, repo = ejudge.config, ejudge.repo
    assert heavy_argv(["cargo", "nextest", "run", "--workspace"], cfg, repo, repo, {})[0].startswith(
        "cargo test --workspace")
    assert heavy_argv(["pytest", "tests"], cfg, repo, repo, {})[0].startswith("pytest tests/integration")
    assert heavy_argv(["playwright", "test"], cfg, repo + "/web", repo, {})[0].startswith("playwright test")
    assert heavy_argv(["pytest", "tests/unit"], cfg, repo, repo, {}) is None
    assert heavy_argv(["cargo", "nextest", "run", "-p", "x"], cfg, repo, repo, {}) is None


def test_the_shims_cover_the_programs_the_table_names(ejudge, tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    shims = exec_shims.plan(ejudge.config, path="", patterns=workload_patterns(ejudge.config, ejudge.repo))
    assert {"cargo", "cargo-nextest", "cargo-watch", "py.test", "playwright"} <= set(shims), sorted(shims)
    assert (tmp_path / "state" / "cache" / "heavy-bodies.json").is_file()   # SessionStart saves the bodies


def test_the_guards_read_the_bodies_cache_and_never_write_it(ejudge, tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(state))
    assert b01(ejudge, "npx playwright test")
    assert not (state / "cache" / "heavy-bodies.json").exists()


def test_a_changed_script_changes_its_body(ejudge, tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "state"))
    workload_patterns(ejudge.config, ejudge.repo)
    assert b01(ejudge, "npx playwright test")
    build.write_files(ejudge.repo, {"package.json": '{"scripts": {"e2e": "vitest run --dir web"}}\n'})
    assert b01(ejudge, "npx playwright test") == []
    assert b01(ejudge, "npx vitest run --dir web")


def test_a_collection_follows_the_ini_files_norecursedirs_and_its_overrides(judge):
    judge.config_text = CONFIG.replace('"pytest tests/integration"', '"pytest tests/integ*"')
    judge.write({**FILES, "pytest.ini": "[pytest]\nnorecursedirs = integration .git\n"})
    assert b01(judge, "pytest tests") == []   # pytest does not descend into tests/integration
    assert b01(judge, "pytest") == []
    assert b01(judge, "pytest -o norecursedirs=.git tests")
    assert b01(judge, "pytest --override-ini=norecursedirs=.git tests")
    assert b01(judge, "cd tests && pytest integration")   # named on the command line, it is collected
    assert b01(judge, "pytest -o testpaths=tests/integration")
