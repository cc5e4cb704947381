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


# the reader's corpus (tests/corpus/, owned by "reader") runs under its own config; its heavy targets
# get stand-ins or instrumented recipes that leave markers too
READER_MARKERS = {"qemu-system-x86_64": "qemu", "herd7": "herd7", "playwright": "playwright"}


def config_text(slice_name: str, guards_off: tuple = (), corpus_config: str | None = None) -> str:
    patterns = ", ".join(f'"{p}"' for p in PATTERNS)
    own = corpus_config if corpus_config is not None else f"""\
[heavy]
patterns = [{patterns}]
[write]
main = ["**"]
implementer = ["**"]
"""
    return own + f"""\
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


def instrument(rel: str, text: str) -> str:
    """A file an entry writes, made to leave a marker when its heavy part really runs: a gate script
    (`.claude/gate.d/*`) when it starts, a Makefile's `check-full` or `replay` recipe when it runs."""
    if rel.startswith(".claude/gate.d/"):
        first, _, rest = text.partition("\n")
        mark = "touch \"$EXEC_MARKERS/gate-script\""
        return f"{first}\n{mark}\n{rest}" if first.startswith("#!") else f"{mark}\n{text}"
    if os.path.basename(rel) in ("Makefile", "makefile", "GNUmakefile") or rel.endswith(".mk"):
        out = []
        for line in text.split("\n"):
            out.append(line)
            head = line.split(":", 1)[0].strip()
            if ":" in line and not line.startswith("\t") and head in ("check-full", "replay") and "=" not in line:
                out.append(f"\t@touch $$EXEC_MARKERS/make-{head}")
        return "\n".join(out)
    return text


READER_FILES = {
    "tests/slow/test_slow.py": ("import os\n"
                                "with open(os.path.join(os.environ['EXEC_MARKERS'], 'pytest-slow'), 'a') as f:\n"
                                "    f.write('collected\\n')\n\n"
                                "def test_slow():\n    assert True\n"),
    "pytest.ini": "[pytest]\ntestpaths = tests/unit\nnorecursedirs = heavy slow .git node_modules\n",
    "Makefile": instrument("Makefile", FILES["Makefile"] + "replay:\n\t@echo replayed\n"),
}


def build(root: str, slice_name: str, guards_off: tuple = (), corpus_config: str | None = None) -> str:
    """The template repository under ``root`` (a git repository, everything committed)."""
    repo = os.path.join(root, "template")
    files = dict(FILES)
    if corpus_config is not None:
        files.update(READER_FILES)
    files[".claude/swarmgate.toml"] = config_text(slice_name, guards_off, corpus_config)
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
