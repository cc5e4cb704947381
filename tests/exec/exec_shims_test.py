"""The exec-time shims (hooks/exec_shims.py) and their slow path (hooks/exec_check.py, X01), with
real shells, real PATH lookups and stand-in programs behind the shims."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from swarmgate.config import load_config
from swarmgate.hooks import exec_shims

PATTERNS = ('[heavy]\npatterns = ["cargo test --workspace", "cargo test --all", "make check-full", '
            '"pytest tests/heavy", "npm run test:e2e"]\n')


# --- planning (pure) ---------------------------------------------------------------------------

def test_plan_shims_the_pattern_programs_the_runners_and_the_launchers(shimmed):
    shimmed.configure(PATTERNS)
    shims = exec_shims.plan(load_config(str(shimmed.repo)), path="")
    for name in ("cargo", "make", "pytest", "npm", "npx", "yarn", "pnpm", "just", "task", "tox", "nox",
                 "python3", "rustup", "uv"):
        assert name in shims, name
    assert shims["cargo"].kind == "cargo" and {"test", "t", "--workspace", "--all"} <= set(shims["cargo"].triggers)
    assert shims["make"].kind == shims["pytest"].kind == shims["just"].kind == "always"  # they read files
    assert shims["npm"].kind == "npm"
    assert shims["python3"].kind == "python" and "pytest" in shims["python3"].modules
    assert shims["rustup"].kind == "launcher" and "cargo" in shims["rustup"].triggers


def test_plan_a_bare_pattern_checks_every_call_and_a_glob_program_is_found_on_path(shimmed, tmp_path):
    bin_dir = tmp_path / "qemu"
    for n in ("qemu-system-x86_64", "qemu-img"):
        shimmed.add_standin(n, bin_dir)
    shimmed.configure('[heavy]\npatterns = ["herd7", "qemu-system-* -m"]\n')
    shims = exec_shims.plan(load_config(str(shimmed.repo)), path=str(bin_dir))
    assert shims["herd7"].kind == "always"
    assert "qemu-system-x86_64" in shims and "qemu-img" not in shims


# --- the fast path: not heavy runs the real program, unchanged ---------------------------------------

def test_a_call_that_is_not_heavy_runs_the_real_program_with_its_argv_stdin_and_exit_code(shimmed):
    shimmed.configure(PATTERNS)
    r = shimmed.run("printf 'in' | cargo build --release 'a b' '*' $'x\\ny'; echo rc=$?", STANDIN_EXIT="7")
    assert r.stdout.splitlines()[0] == "REAL cargo build --release a b * x"
    assert "rc=7" in r.stdout
    assert shimmed.log.read_text() == "cargo build --release a b * x\ny\n"
    assert r.stderr == ""


@pytest.mark.parametrize("command", [
    "cargo --version", "cargo test -p parser", "cargo test --workspace --no-run", "make build",
    "make -n check-full", "pytest tests/unit", "npm run lint", "python3 -c pass", "python3 x.py",
    "rustup show", "tox -e lint",
])
def test_controls_run(shimmed, command):
    shimmed.configure(PATTERNS)
    r = shimmed.run(command if command != "python3 x.py" else "echo pass > x.py; python3 x.py")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert len(shimmed.ran()) == (0 if command.startswith("python3") else 1), (command, r.stderr)


# --- the slow path: heavy calls are refused without an authorization -------------------------------

@pytest.mark.parametrize("command, pattern", [
    ("cargo test --workspace", "cargo test --workspace"),
    ("cargo --locked test --release --workspace", "cargo test --workspace"),
    ("cargo t --all", "cargo test --all"),
    ("cargo +nightly t --workspace", "cargo test --workspace"),
    ("CARGO_ALIAS_WS='test --workspace' cargo ws", "cargo test --workspace"),
    ("cargo --config 'alias.ws=\"test --all\"' ws", "cargo test --all"),
    ("make -j4 check-full", "make check-full"),
    ("pytest -x ./tests/heavy", "pytest tests/heavy"),
    ("python3 -m pytest tests/heavy", "pytest tests/heavy"),
    ("python3 -W ignore -m pytest tests/heavy", "pytest tests/heavy"),
    ("npm run test:e2e", "npm run test:e2e"),
    ("npm run-script test:e2e", "npm run test:e2e"),
    ("rustup run stable cargo test --workspace", "cargo test --workspace"),
    ("python3 -c 'import subprocess, sys; sys.exit(subprocess.run([\"cargo\", \"test\", \"--workspace\"]).returncode)'",
     "cargo test --workspace"),
    ("x=(cargo test --workspace); \"${x[@]}\"", "cargo test --workspace"),
    ("echo 'cargo test --all' | sh", "cargo test --all"),
    ("env -S 'cargo test --all'", "cargo test --all"),
])
def test_heavy_calls_are_refused_with_249_whatever_starts_them(shimmed, command, pattern):
    shimmed.configure(PATTERNS)
    r = shimmed.run(command)
    assert r.returncode == 249, (command, r.stdout, r.stderr)
    assert shimmed.ran() == [] or all("python3" in x for x in shimmed.ran()), shimmed.ran()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("swarmgate: [X01] heavy program refused where it starts (exit 249)")
    assert f"heavy pattern `{pattern}`" in lines[0] and "Way out:" in lines[0]


def test_a_refusal_is_logged_under_x01_and_alerted(shimmed):
    shimmed.configure(PATTERNS)
    r = shimmed.run("cargo test --workspace")
    assert r.returncode == 249
    (rec,) = shimmed.decisions()
    assert (rec["event"], rec["tool"], rec["codes"], rec["decision"], rec["input"]) == \
        ("Exec", "cargo", ["X01"], "deny", "cargo test --workspace")
    assert rec["session"] == "sess-1"
    (alert,) = shimmed.alerts()
    assert alert["kind"] == "heavy-exec-refused" and alert["source"] == "X01"
    assert alert["pattern"] == "cargo test --workspace"


def test_cargo_aliases_from_the_config_files_cargo_reads(shimmed):
    shimmed.configure(PATTERNS)
    sub = shimmed.repo / "crates" / "x"
    sub.mkdir(parents=True)
    (shimmed.repo / ".cargo").mkdir()
    (shimmed.repo / ".cargo" / "config.toml").write_text('[alias]\nwhole = ["test", "--workspace"]\n'
                                                         'again = "whole"\nquick = "check"\n')
    assert shimmed.run("cargo whole", cwd=sub).returncode == 249
    assert shimmed.run("cargo again", cwd=sub).returncode == 249   # an alias of an alias
    r = shimmed.run("cargo quick", cwd=sub)
    assert r.returncode == 0 and r.stdout.strip() == "REAL cargo quick"


# --- finding the real program: never the shim itself ---------------------------------------------

def test_the_real_program_is_found_past_a_doubled_symlinked_or_relative_shim_directory(shimmed, tmp_path):
    shimmed.configure(PATTERNS)
    link = tmp_path / "shims-link"
    link.symlink_to(shimmed.shims)
    rel = os.path.relpath(shimmed.shims, shimmed.repo)
    path = shimmed.path(str(shimmed.shims), str(link), rel, str(shimmed.shims), str(shimmed.standin))
    r = shimmed.run("cargo build; cargo test --workspace", path=path, STANDIN_SHOW_HOPS="1")
    assert r.stdout.split("\n")[0] == "REAL cargo build"
    assert r.stdout.split("\n")[1].endswith(":1"), r.stdout   # straight to the real one: no hop through a shim
    assert r.returncode == 249, r.stderr
    # another shim directory (a copy, another session's) is skipped by its marker, not entered
    other = tmp_path / "other-session-shims"
    shutil.copytree(shimmed.shims, other)
    r = shimmed.run("cargo build", path=shimmed.path(str(other), str(shimmed.shims), str(shimmed.standin)),
                    STANDIN_SHOW_HOPS="1")
    assert r.stdout.split("\n")[0] == "REAL cargo build" and r.stdout.split("\n")[1].endswith(":1"), r.stdout


def test_a_copied_or_linked_shim_is_skipped_and_copies_cannot_loop(shimmed, tmp_path):
    shimmed.configure(PATTERNS)
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    shutil.copy(shimmed.shims / "cargo", one / "cargo")
    (two / "cargo").symlink_to(shimmed.shims / "cargo")
    r = shimmed.run("cargo build", path=shimmed.path(str(one), str(two), str(shimmed.standin)), STANDIN_SHOW_HOPS="1")
    assert r.stdout.split("\n")[0] == "REAL cargo build", r.stderr
    assert r.stdout.split("\n")[1].endswith(":2"), r.stdout   # the copy skipped itself; one hop through the link
    # two copies and no real program behind them: each passes the other once, then nothing is left
    (two / "cargo").unlink()
    shutil.copy(shimmed.shims / "cargo", two / "cargo")
    r = shimmed.run("cargo build", path=shimmed.path(str(one), str(two)))
    assert r.returncode == 127 and "cargo: command not found" in r.stderr
    assert shimmed.ran() == ["cargo build"]
    # a forged hop count ends at the bound
    r = shimmed.run("SWARMGATE_SHIM_HOPS=\"$$:8||\" exec cargo build")
    assert r.returncode == 127 and "shims keep calling each other" in r.stderr


def test_a_program_missing_behind_the_shim_is_not_found(shimmed):
    shimmed.configure(PATTERNS)
    r = shimmed.run("just build", path=shimmed.path(str(shimmed.shims)))
    assert r.returncode == 127 and "just: command not found" in r.stderr


# --- the config and the shims' own state ---------------------------------------------------------

def test_a_config_changed_after_session_start_is_judged_and_the_shims_rewritten(shimmed):
    shimmed.configure(PATTERNS)
    assert not (shimmed.shims / "herd7").exists()
    cfg = shimmed.repo / ".claude" / "swarmgate.toml"
    cfg.write_text(PATTERNS.replace('"npm run test:e2e"', '"npm run test:e2e", "tox -e heavy", "herd7"'))
    stamp = shimmed.shims / exec_shims.MARKER
    os.utime(stamp, (os.path.getmtime(cfg) - 10,) * 2)
    r = shimmed.run("tox -e heavy")
    assert r.returncode == 249, r.stderr
    assert (shimmed.shims / "herd7").exists()   # written again with the new programs
    assert shimmed.run("tox -e lint").returncode == 0


def test_fail_closed_when_the_shims_cannot_check(shimmed):
    shimmed.configure(PATTERNS)
    (shimmed.shims / exec_shims.META).unlink()
    r = shimmed.run("cargo test --workspace")
    assert r.returncode == 249 and "cannot be checked" in r.stderr
    assert shimmed.run("cargo build").returncode == 0   # the fast path needs nothing of it
    shimmed.write_shims()
    text = (shimmed.shims / "cargo").read_text().replace(os.path.realpath(os.sys.executable), "/nonexistent/python")
    text = text.replace(os.sys.executable, "/nonexistent/python")
    (shimmed.shims / "cargo").write_text(text)
    r = shimmed.run("cargo test --all")
    assert r.returncode == 249 and "is gone" in r.stderr
    assert shimmed.ran() == ["cargo build"]


def test_the_env_file_puts_the_shims_first_as_claude_code_applies_it(shimmed, tmp_path):
    shimmed.configure(PATTERNS)
    env_file = tmp_path / "sessionstart-hook-0.sh"
    env_file.write_text("export OTHER=1\n")
    assert exec_shims.add_to_env_file(str(env_file), str(shimmed.shims))
    assert exec_shims.add_to_env_file(str(env_file), str(shimmed.shims))
    text = env_file.read_text()
    assert text.count("export PATH=") == 1
    # 2.1.332 inlines the file between the snapshot and the command (FACTS.md, measured)
    line = f"source /nonexistent 2>/dev/null || true && {text}: && eval 'cargo test --workspace' < /dev/null"
    r = subprocess.run(["bash", "-c", line], cwd=shimmed.repo, capture_output=True, text=True, timeout=60,
                       env=shimmed.env(path=shimmed.path(str(shimmed.standin))))
    assert r.returncode == 249, r.stderr


@pytest.mark.parametrize("files, command", [
    ({"package.json": '{"scripts": {"t2": "/root/.cargo/bin/cargo test --workspace"}}'}, "npm run t2"),
    ({"package.json": '{"scripts": {"pretest": "make check-full", "test": "echo ok"}}'}, "npm test"),
    ({"x.mk": "all: check-full\ncheck-full:\n\ttrue\n"}, "make -f x.mk"),
    ({"Makefile": ".DEFAULT_GOAL := check-full\ncheck-full:\n\ttrue\n"}, "make"),
    ({"justfile": "go:\n    cargo test --all\n"}, "just go"),
    ({"tox.ini": "[testenv:h]\ncommands = cargo test --workspace\n"}, "tox -e h"),
    ({}, "PYTEST_ADDOPTS='-q tests/heavy' pytest"),
    ({"pytest.ini": "[pytest]\naddopts = tests/heavy\n"}, "pytest"),
    ({"setup.cfg": "[tool:pytest]\ntestpaths = tests/heavy\n"}, "python3 -m pytest -q"),
])
def test_what_a_runner_runs_is_read_the_way_the_reader_reads_it(shimmed, files, command):
    shimmed.configure(PATTERNS)
    for rel, text in files.items():
        (shimmed.repo / rel).write_text(text)
    shimmed.add_standin("just")
    r = shimmed.run(command)
    assert r.returncode == 249, (command, r.stdout, r.stderr)
    assert "[X01]" in r.stderr


def test_a_runner_whose_scripts_are_harmless_runs(shimmed):
    shimmed.configure(PATTERNS)
    (shimmed.repo / "package.json").write_text('{"scripts": {"test": "echo ok", "test:e2e": "node e2e.js"}}')
    (shimmed.repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests/unit\n")
    for command in ("npm test", "npm run-script test", "pytest", "PYTEST_ADDOPTS=-q pytest tests/unit"):
        r = shimmed.run(command)
        assert r.returncode == 0, (command, r.stderr)


def test_x01_switched_off_or_warn_only_in_the_config_lets_the_run_go(shimmed):
    shimmed.configure(PATTERNS + '[guards]\nX01 = "warn"\n')
    r = shimmed.run("cargo test --workspace")
    assert r.returncode == 0 and r.stdout.strip() == "REAL cargo test --workspace"
    assert r.stderr.startswith("swarmgate: (warn only) [X01] heavy program refused where it starts")
    assert [d["decision"] for d in shimmed.decisions()] == ["warn"]
    shimmed.configure(PATTERNS + '[guards]\nX01 = "off"\n')
    r = shimmed.run("cargo test --workspace")
    assert r.returncode == 0 and r.stderr == ""
