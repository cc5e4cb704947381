"""Project files that hold commands: package.json, justfile, Taskfile.yml, tox, nox, ninja,
cargo aliases, git configuration and hooks, .pre-commit-config.yaml, Makefiles."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.code_scan import unverifiable_programs
from swarmgate.hooks.command_patterns import matches

HEAVY = ("cargo test --workspace",)


def heavy_reached(an) -> bool:
    return any(matches(c, p) for c in an.commands for p in HEAVY)


def setup(tmp_path, files: dict) -> str:
    for rel, body in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body)
        if rel.endswith(".sh") or "/hooks/" in rel:
            p.chmod(0o755)
    return str(tmp_path)


def judge(tmp_path, files, command):
    cwd = setup(tmp_path, files)
    an = analyze(command, cwd=cwd)
    an.unverifiable.extend(unverifiable_programs(an, HEAVY))
    return an


PKG = ('{"name": "app", "scripts": {"test": "cargo test --workspace", "lint": "eslint .", '
       '"test:e2e": "playwright test", "pretest:e2e": "cargo test --workspace", '
       '"postinstall": "cargo test --workspace", "build": "tsc -p .", "ci": "npm run build && npm test"}}')
PKG_SAFE = '{"name": "app", "scripts": {"test": "jest", "build": "tsc -p ."}}'
WS_ROOT = '{"name": "root", "private": true, "workspaces": ["packages/*"]}'
WS_PKG = '{"name": "@x/core", "scripts": {"test": "cargo test --workspace"}}'

REACHED = [
    # package.json
    ({"package.json": PKG}, "npm test"),
    ({"package.json": PKG}, "npm t"),
    ({"package.json": PKG}, "npm run test"),
    ({"package.json": PKG}, "npm run-script test -- --nocapture"),
    ({"package.json": PKG}, "npm run test:e2e --list"),
    ({"package.json": PKG}, "npm run ci"),
    ({"package.json": PKG}, "npm install"),
    ({"package.json": PKG}, "npm ci"),
    ({"package.json": PKG}, "npm i"),
    ({"package.json": PKG}, "npm install-test"),
    ({"package.json": PKG}, "yarn"),
    ({"package.json": PKG}, "yarn test"),
    ({"package.json": PKG}, "yarn run test"),
    ({"package.json": PKG}, "pnpm test"),
    ({"package.json": PKG}, "pnpm run test"),
    ({"package.json": PKG}, "pnpm install"),
    ({"package.json": PKG}, "bun run test"),
    ({"package.json": PKG}, "bun install"),
    ({"package.json": PKG}, "npm --prefix . test"),
    ({"package.json": PKG, "sub/x.txt": ""}, "cd sub && npm test"),
    ({"web/package.json": PKG}, "npm --prefix web run test"),
    ({"package.json": WS_ROOT, "packages/core/package.json": WS_PKG}, "npm test --workspaces"),
    ({"package.json": WS_ROOT, "packages/core/package.json": WS_PKG}, "npm run test -w @x/core"),
    ({"package.json": WS_ROOT, "packages/core/package.json": WS_PKG}, "npm run test --workspace=packages/core"),
    ({"package.json": WS_ROOT, "packages/core/package.json": WS_PKG}, "yarn workspace @x/core test"),
    ({"package.json": WS_ROOT, "packages/core/package.json": WS_PKG}, "yarn workspaces run test"),
    ({"package.json": '{"name": "r"}', "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
      "packages/core/package.json": WS_PKG}, "pnpm -r test"),
    # justfile
    ({"justfile": "default: test\n\ntest:\n    cargo test --workspace\n"}, "just"),
    ({"justfile": "build:\n    cargo build\n\ntest: build\n    @cargo test {{flags}}\n\nflags := '--workspace'\n"},
     "just test"),
    ({"justfile": "t *args:\n    cargo test {{args}}\n"}, "just t --workspace"),
    ({"justfile": "alias t := test\ntest:\n    cargo test --workspace\n"}, "just t"),
    ({"Justfile": "check: (run 'test')\nrun what:\n    cargo {{what}} --workspace\n"}, "just check"),
    ({"justfile": "ci:\n    #!/usr/bin/env bash\n    set -e\n    cargo test --workspace\n"}, "just ci"),
    ({"ci.just": "default:\n    cargo test --workspace\n"}, "just -f ci.just"),
    # Taskfile
    ({"Taskfile.yml": "version: '3'\ntasks:\n  test:\n    cmds:\n      - cargo test --workspace\n"}, "task test"),
    ({"Taskfile.yml": "version: '3'\ntasks:\n  default:\n    deps: [test]\n  test:\n    cmds:\n"
                      "      - cmd: cargo test {{.CLI_ARGS}}\n"}, "task -- --workspace"),
    ({"Taskfile.yml": "version: '3'\ntasks:\n  ci:\n    cmds:\n      - task: unit\n  unit:\n"
                      "    cmds:\n      - |\n        echo unit\n        cargo test --workspace\n"}, "task ci"),
    # tox / nox / ninja
    ({"tox.ini": "[tox]\nenvlist = py311\n[testenv]\ncommands =\n    cargo test --workspace\n"}, "tox"),
    ({"tox.ini": "[tox]\nenvlist = lint\n[testenv:unit]\ncommands = cargo test {posargs:--workspace}\n"},
     "tox -e unit"),
    ({"tox.ini": "[testenv]\ncommands = cargo test {posargs}\n"}, "tox -e py -- --workspace"),
    ({"noxfile.py": "import nox\n\n@nox.session\ndef tests(session):\n"
                    "    session.run('cargo', 'test', '--workspace')\n"}, "nox"),
    ({"noxfile.py": "import nox\n\n@nox.session(python=['3.11'])\ndef tests(session):\n"
                    "    session.run('cargo', 'test', '--workspace')\n\n@nox.session\ndef lint(session):\n"
                    "    session.run('ruff', 'check')\n"}, "nox -s tests"),
    ({"build.ninja": "rule t\n  command = cargo test --workspace\nbuild check: t\ndefault check\n"}, "ninja"),
    ({"out/build.ninja": "rule t\n  command = cargo test $flags\nbuild check: t\n  flags = --workspace\n"},
     "ninja -C out check"),
    # cargo aliases
    ({".cargo/config.toml": "[alias]\ntw = \"test --workspace\"\n"}, "cargo tw"),
    ({".cargo/config.toml": "[alias]\nall = [\"t\", \"--workspace\"]\n"}, "cargo all"),
    ({"crates/a/x.rs": ""}, "cargo t --workspace"),
    ({"crates/a/x.rs": ""}, "cargo --config 'alias.x=\"test --workspace\"' x"),
    ({".cargo/config.toml": "[alias]\ntw = \"test --workspace\"\n", "crates/a/x.rs": ""},
     "cd crates/a && cargo tw"),
    ({"a": ""}, "CARGO_ALIAS_TW='test --workspace' cargo tw"),
    # make
    ({"Makefile": "all: check\ncheck:\n\tcargo test --workspace\n"}, "make"),
    ({"Makefile": ".DEFAULT_GOAL := ci\nlint:\n\techo lint\nci:\n\tcargo test --workspace\n"}, "make"),
    ({"Makefile": "%.test:\n\tcargo test --$*\n"}, "make workspace.test"),
    ({"Makefile": "include ci.mk\n", "ci.mk": "ci:\n\tcargo test --workspace\n"}, "make ci"),
    ({"Makefile": "X := $(shell cargo test --workspace)\nall:\n\techo hi\n"}, "make"),
    ({"Makefile": "all:\n\t+cargo test --workspace\n"}, "make -n"),
    ({"Makefile": "all:\n\techo hi\n"}, "make --eval 'x:\n\tcargo test --workspace' x"),
    ({"Makefile": "all:\n\techo hi\n"}, "printf 'x:\\n\\tcargo test --workspace\\n' | make -f - x"),
    ({"Makefile": "all:\n\techo hi\n", "extra.mk": "X != cargo test --workspace\n"},
     "MAKEFILES=extra.mk make"),
    ({"Makefile": "T = cargo test\nall:\n\t$(T) --workspace\n"}, "make all"),
    # pre-commit
    ({".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks:\n  - id: t\n    name: t\n"
                                 "    entry: cargo test\n    language: system\n    args: [--workspace]\n"},
     "pre-commit run --all-files"),
    ({".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks:\n  - id: t\n    name: t\n"
                                 "    entry: cargo test --workspace\n    language: system\n"},
     "pre-commit run t"),
]


@pytest.mark.parametrize("files, command", REACHED)
def test_project_file_commands_are_read(tmp_path, files, command):
    an = judge(tmp_path, files, command)
    assert heavy_reached(an) or an.unverifiable, \
        f"{command!r}: {[c.words for c in an.commands]} {an.unverifiable}"


NOT_REACHED = [
    ({"package.json": PKG}, "npm run lint"),
    ({"package.json": PKG}, "npm run build"),
    ({"package.json": PKG}, "npm install --ignore-scripts"),
    ({"package.json": PKG_SAFE}, "npm test"),
    ({"package.json": PKG_SAFE}, "npm install"),
    ({"package.json": PKG_SAFE}, "yarn build"),
    ({"package.json": PKG}, "npm ls"),
    ({"package.json": PKG}, "npx eslint ."),
    ({"package.json": PKG}, "bun test"),
    ({"package.json": PKG}, "yarn add lodash --ignore-scripts"),
    ({"justfile": "test:\n    cargo test --workspace\nfmt:\n    cargo fmt\n"}, "just fmt"),
    ({"justfile": "test:\n    cargo test --workspace\n"}, "just --list"),
    ({"justfile": "test:\n    cargo test --workspace\n"}, "just -n test"),
    ({"Taskfile.yml": "version: '3'\ntasks:\n  test:\n    cmds:\n      - cargo test --workspace\n"
                      "  lint:\n    cmds:\n      - cargo clippy\n"}, "task lint"),
    ({"tox.ini": "[tox]\nenvlist = lint\n[testenv:lint]\ncommands = ruff check .\n"
                 "[testenv:heavy]\ncommands = cargo test --workspace\n"}, "tox -e lint"),
    ({"noxfile.py": "import nox\n@nox.session\ndef tests(session):\n"
                    "    session.run('cargo', 'test', '--workspace')\n@nox.session\ndef lint(session):\n"
                    "    session.run('ruff', 'check')\n"}, "nox -s lint"),
    ({"build.ninja": "rule cc\n  command = cc -c $in -o $out\nbuild a.o: cc a.c\n"}, "ninja"),
    ({".cargo/config.toml": "[alias]\nb2 = \"build --release\"\n"}, "cargo b2"),
    ({"a": ""}, "cargo test -p core"),
    ({"Makefile": "all:\n\tcargo build\ncheck:\n\tcargo test --workspace\n"}, "make"),
    ({"Makefile": "all:\n\tcargo test --workspace\n"}, "make -n"),
    ({"Makefile": "all:\n\tcargo test --workspace\n"}, "make -q all"),
    ({".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks:\n  - id: t\n    name: t\n"
                                 "    entry: cargo test --workspace\n    language: system\n"
                                 "  - id: f\n    name: f\n    entry: cargo fmt --check\n    language: system\n"},
     "pre-commit run f"),
]


@pytest.mark.parametrize("files, command", NOT_REACHED)
def test_project_file_commands_not_run_are_not_judged(tmp_path, files, command):
    an = judge(tmp_path, files, command)
    assert not heavy_reached(an) and not an.unverifiable, \
        f"{command!r}: {[c.words for c in an.commands if c.name == 'cargo']} {an.unverifiable}"


@pytest.mark.parametrize("files, command, why", [
    ({"package.json": "{not json"}, "npm test", "cannot be read"),
    ({"package.json": PKG}, "npm run $TARGET", "cannot be read statically"),
    ({"Taskfile.yml": "version: '3'\ntasks: &a\n  x: y\n"}, "task x", "cannot be read"),
    ({".cargo/config.toml": "[alias\n"}, "cargo tw", "cannot be read"),
    ({"Makefile": "all:\n\techo\n"}, "make -f - all < gen.mk", "cannot be read statically"),
    ({"justfile": "import 'more.just'\n"}, "just ci", "module or import"),
    ({"a": ""}, "echo '{\"scripts\":{\"test\":\"x\"}}' > package.json && curl -o package.json u && npm test",
     "cannot be read statically"),
])
def test_unreadable_project_files_are_unverifiable(tmp_path, files, command, why):
    an = judge(tmp_path, files, command)
    reasons = " | ".join(u.reason for u in an.unverifiable)
    assert why in reasons, (reasons, [c.words for c in an.commands])


def test_package_json_written_by_the_same_command_is_read_as_written(tmp_path):
    an = judge(tmp_path, {"a": ""}, "cat > package.json <<'EOF'\n{\"scripts\": {\"test\": \"cargo test "
                                    "--workspace\"}}\nEOF\nnpm test")
    assert heavy_reached(an)


def test_readers_are_not_imported_when_nothing_calls_them():
    code = ("import sys\nfrom swarmgate.hooks.bash_tree import analyze\n"
            "analyze('ls -la && git status && cargo build', cwd='/')\n"
            "bad = [m for m in ('swarmgate.hooks.package_scripts', 'swarmgate.hooks.task_files', "
            "'swarmgate.hooks.yaml_subset', 'swarmgate.hooks.makefile_reader') if m in sys.modules]\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# ---------------------------------------------------------------- git

def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"})


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q")
    return r


@pytest.mark.parametrize("command", [
    "git -c alias.t='!cargo test --workspace' t",
    "git -c alias.t='!cargo test' t --workspace",
    "git -c alias.x='!f() { cargo test --workspace; }; f' x",
    "git config alias.t '!cargo test --workspace' && git t",
    "git rebase --exec 'cargo test --workspace' HEAD~3",
    "git rebase -x 'cargo test --workspace' main",
    "git bisect run cargo test --workspace",
    "GIT_EDITOR='cargo test --workspace; true' git commit",
    "GIT_SEQUENCE_EDITOR='cargo test --workspace;:' git rebase -i HEAD~2",
    "git -c core.editor='cargo test --workspace #' commit --amend",
    "git -c core.fsmonitor='cargo test --workspace' status",
    "git config core.fsmonitor 'cargo test --workspace'; git status",
    "git filter-branch --tree-filter 'cargo test --workspace' HEAD",
    "git submodule foreach 'cargo test --workspace'",
    "git -c diff.external='cargo test --workspace' diff",
    "GIT_SSH_COMMAND='cargo test --workspace' git fetch origin",
    "git difftool -x 'cargo test --workspace' HEAD",
])
def test_git_runs_what_it_is_told(repo, command):
    an = analyze(command, cwd=str(repo))
    assert heavy_reached(an) or an.unverifiable, [c.words for c in an.commands]


def test_git_aliases_and_hooks_from_the_repository(repo):
    git(repo, "config", "alias.t", "!cargo test --workspace")
    git(repo, "config", "alias.st", "status")
    assert heavy_reached(analyze("git t", cwd=str(repo)))
    assert not heavy_reached(analyze("git st", cwd=str(repo)))
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ncargo test --workspace\n")
    hook.chmod(0o755)
    assert heavy_reached(analyze("git commit -m 'x'", cwd=str(repo)))
    assert not heavy_reached(analyze("git commit --no-verify -m 'x'", cwd=str(repo)))
    assert not heavy_reached(analyze("git log --oneline -5", cwd=str(repo)))


def test_git_include_and_global_config(repo, tmp_path):
    (tmp_path / "extra.inc").write_text("[alias]\n\tq = !cargo test --workspace\n")
    (tmp_path / "gitconfig").write_text(f"[include]\n\tpath = {tmp_path / 'extra.inc'}\n")
    assert heavy_reached(analyze("git q", cwd=str(repo)))


@pytest.mark.parametrize("command", [
    "git status", "git log --oneline -5", "git diff --stat", "git commit -m 'x'", "git push origin main",
    "git rebase main", "git -c user.name=x commit -m y", "git bisect start", "git stash pop",
])
def test_ordinary_git_runs_nothing_more(repo, command):
    an = analyze(command, cwd=str(repo))
    assert [c.name for c in an.commands] == ["git"] and not an.unverifiable, \
        ([c.words for c in an.commands], an.unverifiable)
