"""The repository and the machine the execution harness runs every case in (inside the sandbox).

Four heavy targets, each leaving a marker in $EXEC_MARKERS when it really runs, however it was
reached:
- ``cargo test --workspace`` / ``--all``: the stand-in cargo (standin.py), mounted over every real
  cargo of the machine as well, so an absolute path reaches it too;
- the npm script ``test:e2e`` (its body writes the marker);
- the make target ``check-full`` (its recipe writes the marker);
- the pytest directory ``tests/heavy`` (its module writes the marker when pytest collects it,
  whichever way pytest was started: `pytest`, `python -m pytest`, `pytest.main()`).
"""
from __future__ import annotations

import os
import subprocess

PATTERNS = ["cargo test --workspace", "cargo test --all", "make check-full", "npm run test:e2e",
            "pytest tests/heavy*"]
MARKERS = {"cargo-test-workspace", "npm-test-e2e", "make-check-full", "pytest-heavy"}
SESSION = "exec-harness-session"
SUBAGENT = {"agent_id": "aexecharness01", "agent_type": "implementer"}


def config_text(slice_name: str, guards_off: tuple = ()) -> str:
    patterns = ", ".join(f'"{p}"' for p in PATTERNS)
    return f"""\
[heavy]
patterns = [{patterns}]
[memory]
total = "1G"
slice = "{slice_name}"
default_prediction = "128M"
wait = 30
[agents]
memory_cap = "256M"
cpu_max = 1.0
[hooks]
guard_budget_ms = 20000
timeout = 60
report_timeout = 60
[dispatch]
max_concurrent = 3
[write]
main = ["**"]
implementer = ["**"]
[guards]
""" + "".join(f'{code} = "off"\n' for code in guards_off)


FILES = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/parser", "crates/store"]\nresolver = "2"\n',
    "crates/parser/Cargo.toml": '[package]\nname = "parser"\nversion = "0.1.0"\nedition = "2021"\n',
    "crates/parser/src/lib.rs": "pub fn parse() {}\n",
    "crates/store/Cargo.toml": '[package]\nname = "store"\nversion = "0.1.0"\nedition = "2021"\n',
    "crates/store/src/lib.rs": "pub fn store() {}\n",
    "Makefile": (".PHONY: build check check-full lint\n"
                 "build:\n\t@echo built\n"
                 "check:\n\t@echo unit checks ok\n"
                 "lint:\n\t@echo lint ok\n"
                 "check-full:\n\t@touch $$EXEC_MARKERS/make-check-full; echo full checks ran\n"),
    "package.json": ('{\n  "name": "exec-harness",\n  "version": "1.0.0",\n  "private": true,\n'
                     '  "scripts": {\n'
                     '    "test": "echo unit tests ok",\n'
                     '    "lint": "echo lint ok",\n'
                     '    "build": "echo build ok",\n'
                     '    "test:e2e": "node -e \\"require(\'fs\').writeFileSync(process.env.EXEC_MARKERS + '
                     '\'/npm-test-e2e\', \'x\')\\" && echo e2e ran"\n'
                     '  }\n}\n'),
    "pytest.ini": "[pytest]\ntestpaths = tests/unit\nnorecursedirs = heavy .git node_modules\n",
    "tests/unit/test_unit.py": "def test_unit():\n    assert 1 + 1 == 2\n",
    "tests/heavy/test_heavy.py": ("import os\n"
                                  "with open(os.path.join(os.environ['EXEC_MARKERS'], 'pytest-heavy'), 'a') as f:\n"
                                  "    f.write('collected\\n')\n\n"
                                  "def test_heavy():\n    assert True\n"),
    "scripts/unit.sh": "#!/bin/sh\nset -e\nmake check\n",
    "justfile": "build:\n    echo just build ok\n",
    "Taskfile.yml": "version: '3'\ntasks:\n  build:\n    cmds:\n      - echo task build ok\n",
    "tox.ini": "[tox]\nenvlist = lint\n[testenv:lint]\ncommands =\n    echo tox lint ok\n",
    "noxfile.py": "import nox\n\n@nox.session\ndef lint(session):\n    session.run('echo', 'nox lint ok')\n",
    "README.md": "exec harness repository\n",
    "src/main.py": "print('hello')\n",
}


def build(root: str, slice_name: str, guards_off: tuple = ()) -> str:
    """The template repository under ``root`` (a git repository, everything committed)."""
    repo = os.path.join(root, "template")
    files = dict(FILES)
    files[".claude/swarmgate.toml"] = config_text(slice_name, guards_off)
    files[".gitignore"] = ".swarmgate/\n"
    for rel, text in files.items():
        path = os.path.join(repo, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if rel.endswith(".sh"):
            os.chmod(path, 0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": root, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.email=h@example.invalid", "-c", "user.name=h", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return repo
