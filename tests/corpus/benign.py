"""Benign commands (controls): each must pass every Bash guard for the main agent and a subagent.
Many look like a workaround and are not: data that names a heavy command, narrowed runs, project
runners running light scripts, wrappers around light work, bash features used for ordinary ends."""
from __future__ import annotations

from tests.corpus.model import Entry
from tests.corpus.workarounds import PKG, SAFE_SH


def B(cls: str, command: str, files: dict | None = None, git_init: bool = False) -> Entry:
    return Entry(cls, command, files, "pass", git_init=git_init)


VERIFY = "#!/bin/bash\nset -e\ncargo build\ncargo test --workspace\n"
LIGHT_MK = "all: build\nbuild:\n\tcargo build\nlint:\n\tcargo clippy\ncheck-full:\n\tcargo test --workspace\n"
ENTRIES: list[Entry] = []
add = ENTRIES.append

for c in ['echo "cargo test --workspace"', "printf '%s\\n' \"cargo test --all\"", "grep -r 'cargo test --all' docs/",
          'rg -n "make check-full" .', 'git commit -m "run cargo test --workspace before merging"',
          'git log --grep "cargo test --all" --oneline', "git grep -n 'cargo test --workspace'",
          "cat > /tmp/notes.md <<'EOF'\ncargo test --workspace\nEOF", "ls -la  # then cargo test --workspace",
          "echo cargo test --workspace | wc -c", "awk '/cargo test --all/ {print FILENAME}' README.md",
          "python3 -c 'print(\"cargo test --workspace\")'", "node -e 'console.log(\"run: make check-full\")'",
          "python3 -c 'import sys; print(sys.argv)' cargo test --workspace", "echo 'bash .claude/gate.d/replay.sh'",
          "man cargo-test | head -40", "jq -r '.scripts.test' package.json", "grep -c 'test --workspace' package.json",
          "sed -n '1,20p' scripts/verify.sh", "head -5 scripts/verify.sh", "cat scripts/verify.sh",
          "less -F scripts/verify.sh", "wc -l scripts/verify.sh", "git show HEAD:scripts/verify.sh | head",
          "echo 'xargs -I{} sh -c {}' > /tmp/notes.txt", "printf 'npm test\\n' >> /tmp/todo.txt",
          "echo '$(( x[$(cmd)] ))' | wc -c", "python3 -c 'help_text = \"use cargo test --workspace\"; print(len(help_text))'"]:
    add(B("data", c, {"scripts/verify.sh": VERIFY, "package.json": PKG, "README.md": "x\n"}))
for c in ["cargo build --workspace", "cargo check --all", "cargo clippy --all-targets -- -D warnings", "cargo test -p core",
          "cargo test -p core parser::tests", "cargo test --lib", "cargo test --workspace --no-run", "cargo test -- --list",
          "cargo t -p core", "cargo build --release -j$(nproc)", "cargo fmt --all -- --check", "cargo doc --no-deps",
          "RUSTFLAGS='-D warnings' cargo build", "timeout 300 cargo build", "nice -n 19 cargo build --release",
          "strace -c cargo --version", "valgrind --tool=massif ./target/debug/app", "docker run --rm rust:1 cargo build",
          "pytest tests/unit", "pytest tests/unit/test_x.py -k parse", "python3 -m pytest tests/unit -q",
          "pytest --collect-only -q", "uv run pytest tests/unit", "tox -l", "make -n check-full"]:
    add(B("build and narrow tests", c))
for c, f in [("npm run lint", {"package.json": PKG}), ("npm run test:unit", {"package.json": PKG.replace(
                 '"pretest:unit": "cargo test --all", ', "")}),
             ("npm ls", {"package.json": PKG}), ("npm install --ignore-scripts", {"package.json": PKG}),
             ("npx eslint .", {"package.json": PKG}), ("yarn lint", {"package.json": PKG}),
             ("pnpm run lint", {"package.json": PKG}), ("bun test", {"package.json": PKG}),
             ("npm test", {"package.json": '{"scripts": {"test": "jest"}}'}),
             ("npm install", {"package.json": '{"scripts": {"postinstall": "husky install"}}'}),
             ("make", {"Makefile": LIGHT_MK}), ("make lint", {"Makefile": LIGHT_MK}), ("make -j4 build", {"Makefile": LIGHT_MK}),
             ("make -C sub", {"sub/Makefile": "all:\n\techo sub\n"}),
             ("just fmt", {"justfile": "test:\n    cargo test --workspace\nfmt:\n    cargo fmt\n"}),
             ("just --list", {"justfile": "test:\n    cargo test --workspace\n"}),
             ("task lint", {"Taskfile.yml": "version: '3'\ntasks:\n  test:\n    cmds:\n      - cargo test --workspace\n"
                                           "  lint:\n    cmds:\n      - cargo clippy\n"}),
             ("tox -e lint", {"tox.ini": "[tox]\nenvlist = lint\n[testenv:lint]\ncommands = ruff check .\n"
                                         "[testenv:heavy]\ncommands = cargo test --workspace\n"}),
             ("nox -s lint", {"noxfile.py": "import nox\n@nox.session\ndef tests(session):\n"
                                           "    session.run('cargo', 'test', '--workspace')\n@nox.session\ndef lint(session):\n"
                                           "    session.run('ruff', 'check')\n"}),
             ("ninja", {"build.ninja": "rule cc\n  command = cc -c $in -o $out\nbuild a.o: cc a.c\n"}),
             ("cargo b2", {".cargo/config.toml": "[alias]\nb2 = \"build --release\"\n"}),
             ("pre-commit run f", {".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks:\n  - id: t\n    name: t\n"
                                                              "    entry: cargo test --workspace\n    language: system\n"
                                                              "  - id: f\n    name: f\n    entry: cargo fmt --check\n"
                                                              "    language: system\n"}),
             ("bash scripts/fmt.sh", {"scripts/fmt.sh": "#!/bin/bash\ncargo fmt --all\n"}),
             ("./scripts/fmt.sh && git diff --stat", {"scripts/fmt.sh": "#!/bin/bash\ncargo fmt --all\n"}),
             ("python3 tools/report.py", {"tools/report.py": "print('cargo test --workspace')\n"}),
             ("python3 tools/gen.py", {"tools/gen.py": "import json\nprint(json.dumps({'a': 1}))\n"})]:
    add(B("project runners, light", c, f))
for c in ["git status --short && git diff --stat", "git log --oneline -5", "git checkout -b feature && git status",
          "git add -A && git commit -m 'wip'", "git stash && git pull --rebase && git stash pop",
          "git rebase main", "git bisect start", "git -c user.name=x commit -m y", "git push origin HEAD",
          "git fetch --all --prune", "git worktree list", "git diff HEAD~1 -- src/"]:
    add(B("git", c, git_init=True))
for c in ["find . -name '*.rs' -newer Cargo.toml | head", "du -sh target/ 2>/dev/null",
          "for f in src/*.rs; do wc -l \"$f\"; done", "while read -r l; do echo \"$l\"; done < /tmp/list",
          "ls -la {src,tests}/", "mkdir -p build/{debug,release}", "cp config.{yml,yml.bak}", "echo {1..5}",
          "ls *.md", "rm -f build/*.o", "tar -czf out.tar.gz src", "tar -xzf out.tar.gz -C /tmp",
          "sed -i 's/foo/bar/' src/lib.rs", "perl -i -pe 's/foo/bar/g' src/lib.rs", "awk '{print $1}' data.txt",
          "find . -name '*.tmp' -exec rm -f {} +", "find . -name '*.sh' -exec grep -l 'cargo' {} +",
          "xargs -n1 echo < list.txt", "ls | xargs -I{} echo {}", "zip -r src.zip src", "rsync -a src/ /tmp/src-copy/",
          "chmod +x scripts/fmt.sh", "ln -sf ../README.md docs/README.md", "diff <(ls src) <(ls tests)",
          "sort -u names.txt | uniq -c", "cut -d, -f1 data.csv | head"]:
    add(B("files", c, {"README.md": "x\n", "src/lib.rs": "", "scripts/fmt.sh": SAFE_SH}))
for c in ["export RUST_LOG=debug; cargo build", "C=cargo; $C build", "f() { cargo build; }; f",
          "n=4; echo $(( 1 << (n - 1) ))", "for ((i=0; i<3; i++)); do echo $i; done", "(( count += 1 ))",
          "x=5; echo $((x * 2))", "declare -a arr=(a b c); echo ${arr[1]}", "echo ${#PATH}", "hash -r",
          "IFS=$'\\n' read -r -d '' -a lines < f.txt || true", "set -euo pipefail; cargo build",
          "trap 'rm -f /tmp/x' EXIT; touch /tmp/x", "alias ll='ls -la'; ll", "shopt -s nullglob; ls *.none",
          "pushd src >/dev/null && ls && popd >/dev/null", "case $1 in a) echo a;; *) echo other;; esac",
          "if [ -f Cargo.toml ]; then cargo build; fi", "test -d target || mkdir target",
          "cargo test -p core $(echo --release)", "make -j$(nproc) build", "read -r v <<< 'x'; echo \"$v\""]:
    add(B("bash features", c, {"Makefile": LIGHT_MK}))
for c in ["ps aux | grep cargo", "nohup python3 -m http.server 8000 > /tmp/http.log 2>&1 &",
          "sleep 2 && curl -s localhost:8080/health", "timeout 60 bash -c 'until curl -s localhost:8080; do sleep 1; done'",
          "sleep 90; make build; echo built", "n=0; while [ $n -lt 10 ]; do sleep 1; n=$((n+1)); done",
          "crontab -l", "date; uptime", "env | grep SWARMGATE", "pip install pytest", "curl -sSf https://e.x/a.json | jq .",
          "docker ps", "docker build -t app .", "kubectl get pods", "ssh localhost uptime", "tmux ls",
          "screen -ls", "watchexec --help", "hyperfine 'sleep 0.1'", "strace -p 1234", "gdb -p 1234 -batch -ex bt",
          "nproc && free -h", "df -h /", "kill -0 1", "journalctl --user -n 20 --no-pager"]:
    add(B("processes and tools", c, {"Makefile": LIGHT_MK}))
for c in ["SWARMGATE_RUN_SCOPE='kind=items; target=core parser; range=one crate; reason=changed only the parser' "
          "cargo test -p core", "echo x > src/generated.rs && cp src/generated.rs tests/fixture.rs",
          "python3 - <<'EOF'\nprint('hello')\nEOF", "echo 'print(1)' | python3", "python3 -c 'import json; print(json.dumps([1]))'",
          "node -e 'console.log(process.version)'", "perl -ne 'print if /x/' f.txt", "ruby -e 'puts 1+1'",
          "python3 -m venv .venv && . .venv/bin/activate && pip install -e .", "uv pip install -r requirements.txt"]:
    add(B("misc", c))
