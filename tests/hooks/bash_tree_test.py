"""bash_tree.analyze: every simple command a text would run, and nothing that is data."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from swarmgate.hooks import bash_lexical, bash_tree, bash_walker
from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.code_scan import unverifiable_programs

HEAVY = ("cargo test --workspace", "cargo test --all", "pytest")


def run(text, cwd="/", patterns=HEAVY, **kw):
    """analyze(), then the interpreter programs judged against ``patterns`` as the guards do."""
    an = analyze(text, cwd=str(cwd), **kw)
    an.unverifiable.extend(unverifiable_programs(an, patterns))
    return an


def words(an):
    return [c.words for c in an.commands]


def names(an):
    return [c.name for c in an.commands]


def find(an, name):
    got = [c for c in an.commands if c.name == name]
    assert got, f"{name!r} not among {names(an)}"
    return got[0]


def reasons(an):
    return " | ".join(u.reason for u in an.unverifiable)


# ------------------------------------------------------------------ structure

@pytest.mark.parametrize("text, via", [
    ("a | cargo test", "pipeline"),
    ("a; cargo test", "list"),
    ("a && cargo test || b", "list"),
    ("{ a; cargo test; }", "group"),
    ("( cargo test )", "subshell"),
    ("if a; then cargo test; fi", "if"),
    ("if a; then b; elif c; then d; else cargo test; fi", "if"),
    ("while a; do cargo test; done", "loop:while"),
    ("until a; do cargo test; done", "loop:until"),
    ("for x in a b; do cargo test; done", "loop:for"),
    ("case $x in a) cargo test;; esac", "case"),
    ("echo $(cargo test)", "cmdsubst"),
    ("echo `cargo test`", "backtick"),
    ("diff <(cargo test) x", "procsubst"),
    ("tee >(cargo test) < x", "procsubst"),
    ('echo "result: $(cargo test)"', "cmdsubst"),
    ("X=$(cargo test)", "cmdsubst"),
    ("f() { cargo test; }; f", "function:f"),
    ("function f { cargo test; }; f", "function:f"),
    ("bash -c 'cargo test'", "bash -c"),
    ("sh -ec 'cargo test'", "bash -c"),
    ("bash -lc 'cargo test'", "bash -c"),
    ("zsh -xc 'cargo test'", "bash -c"),
    ("eval cargo test", "eval"),
    ("eval 'cargo test'", "eval"),
    ("xargs cargo test < list", "xargs"),
    ("sudo -u root cargo test", "sudo"),
    ("timeout -s KILL 60 cargo test", "timeout"),
    ("nohup cargo test", "nohup"),
    ("setsid cargo test", "setsid"),
    ("find . -name '*.rs' -exec cargo test {} \\;", "find -exec"),
    ("find . -execdir cargo test {} +", "find -exec"),
    ("parallel cargo test ::: a b", "parallel"),
    ("parallel ::: 'cargo test' 'ls'", "parallel"),
    ("watch -n 5 cargo test", "watch"),
    ("run-with-memory-cap 16G -- cargo test", "run-with-memory-cap"),
    ("run-with-memory-cap 16G cargo test", "run-with-memory-cap"),
    ("host-dispatch --mem 8G -- cargo test", "host-dispatch"),
    ("multi-host-run --peer --memory-cap 8G --label x -- cargo test", "multi-host-run"),
    ("gpu-quiesce-run -- cargo test", "gpu-quiesce-run"),
    ("detached-run start --label x -- cargo test", "detached-run"),
    ("bash <<EOF\ncargo test\nEOF", "heredoc-shell"),
    ("sh <<< 'cargo test'", "herestring-shell"),
    ("echo 'cargo test' | bash", "echo-shell"),
    ("printf 'cargo test\\n' | sh", "printf-shell"),
    ("time -p cargo test", None),
    ("((n++)); cargo test", None),
    ("[[ -f x ]] && cargo test", None),
    ("coproc cargo test", None),
    ("select x in a; do cargo test; done", "loop:for"),
])
def test_cargo_is_found_and_how(text, via):
    an = run(text)
    c = find(an, "cargo")
    assert c.args[:1] == ["test"]
    if via:
        assert via in c.via, c.via
    assert not an.unverifiable, reasons(an)


@pytest.mark.parametrize("text", [
    "cargo test", "/usr/bin/cargo test", "\\cargo test", '"cargo" test', "c'argo' test",
    "C=cargo; $C test", "C=cargo; ${C} test", 'export C=cargo; "$C" test',
    "declare C=cargo; $C test", "~/.cargo/bin/cargo test", "$HOME/.cargo/bin/cargo test",
    "env cargo test", "env -i A=1 cargo test", "env -u X -- cargo test", "nice -n 5 cargo test",
    "nice -5 cargo test", "nohup cargo test", "time cargo test", "command cargo test",
    "builtin cargo test", "exec cargo test", "sudo -E cargo test", "stdbuf -oL cargo test",
    "ionice -c 3 cargo test", "chrt -f 10 cargo test", "taskset -c 0-3 cargo test",
    "xargs -n 1 -P 4 cargo test", "timeout --signal=KILL 5m cargo test",
    "env A=1 nice timeout 5 sudo cargo test", "swarmgate preflight x.sh && cargo test",
])
def test_name_normalised_and_wrappers_unwrapped(text):
    an = run(text)
    c = find(an, "cargo")
    assert c.args == ["test"] or (text.startswith("xargs") and c.args == ["test", "$XARGS_INPUT"])
    assert c.words[0].endswith("cargo")


def test_wrapper_itself_is_also_yielded_with_wrappers_recorded():
    an = run("SWARMGATE_HEAVY=commit run-with-memory-cap 16G --label t -- env A=1 cargo test --workspace")
    runner = find(an, "run-with-memory-cap")
    assert runner.assignments == {"SWARMGATE_HEAVY": "commit"}
    cargo = find(an, "cargo")
    assert cargo.wrappers == ("run-with-memory-cap", "env")
    assert "run-with-memory-cap" in cargo.via
    assert cargo.assignments == {"SWARMGATE_HEAVY": "commit", "A": "1"}


def test_prefix_assignments_and_redirects():
    an = run("A=1 B='x y' cargo test > out.log 2>&1 < in.txt")
    c = find(an, "cargo")
    assert c.assignments == {"A": "1", "B": "x y"}
    ops = [(r.op, r.target, r.fd) for r in c.redirects]
    assert (">", "out.log", None) in ops and (">&", "1", 2) in ops and ("<", "in.txt", None) in ops
    assert [r.writes for r in c.redirects] == [True, False, False]


def test_background_counts_and_nested_background():
    an = run("cargo build & wait")
    assert find(an, "cargo").background == 1 and find(an, "wait").background == 0
    an = run("( sleep 5 & ) &")
    assert find(an, "sleep").background == 2
    assert an.nested_background == ["sleep 5 &"]
    an = run("a && b &")
    assert [c.background for c in an.commands] == [1, 1]
    assert not run("a & b &").nested_background
    an = run("( nohup worker & ) &")
    assert an.nested_background and "nohup" in find(an, "worker").via


def test_loops():
    an = run("while true; do curl -s x && break; sleep 1; done")
    (lp,) = an.loops
    assert lp.kind == "while" and lp.has_break
    assert [c.name for c in lp.condition_commands] == ["true"]
    assert [c.name for c in lp.body_commands] == ["curl", "break", "sleep"]
    an = run("until false; do sleep 5; done")
    assert an.loops[0].kind == "until" and not an.loops[0].has_break
    an = run("while :; do for i in 1 2; do break; done; sleep 1; done")
    outer = [lp for lp in an.loops if lp.kind == "while"][0]
    assert not outer.has_break   # the break leaves only the inner for
    an = run("while :; do for i in 1 2; do break 2; done; done")
    assert all(lp.has_break for lp in an.loops)
    an = run("for f in $(ls); do echo $f; done")
    assert [c.name for c in an.loops[0].condition_commands] == ["ls"]


def test_function_defined_and_not_called_is_walked_once():
    an = run("f() { cargo test --workspace; }")
    assert names(an) == ["cargo"] and an.commands[0].via == ("function:f", "group")
    an = run("f() { cargo test; }; f; f")
    assert names(an).count("cargo") == 2   # judged where called, each call
    an = run("f() { f; }; f")    # recursion stops
    assert names(an) == ["f", "f"]


def test_constant_variables():
    assert find(run("C=cargo; $C test --workspace"), "cargo").args == ["test", "--workspace"]
    assert find(run("T=--workspace; cargo test $T"), "cargo").args == ["test", "--workspace"]
    an = run("C=$(which cargo); $C test")
    assert "dynamic" in reasons(an)
    an = run("$CMD test")
    assert "dynamic" in reasons(an)
    an = run("read C; $C test")
    assert "dynamic" in reasons(an)
    # a directory that is dynamic does not make the command unknown
    an = run("$HOME/bin/tool --x")
    assert find(an, "tool") and not an.unverifiable


# ------------------------------------------------------------------ data is not a command

@pytest.mark.parametrize("text", [
    'echo "cargo test --workspace"',
    "printf '%s\\n' 'cargo test --all'",
    "grep -r 'cargo test --all' docs/",
    "rg 'cargo test --workspace' .",
    'git commit -m "run cargo test --workspace before merging"',
    "git log --grep='cargo test --all'",
    "# cargo test --workspace",
    "ls # cargo test --workspace",
    "cat <<EOF\ncargo test --workspace\nEOF",
    "cat > notes.md <<'EOF'\ncargo test --workspace\nEOF",
    "sed -n '/cargo test/p' Makefile",
    "head -5 scripts/ci.sh",
    "echo 'bash -c \"cargo test --workspace\"'",
    "echo \\`cargo test --workspace\\`",
    "echo '$(cargo test --workspace)'",
    "jq '.cargo' x.json",
    "python3 x.py 'cargo test --workspace'",
    "python3 -c 'print(\"hello\")'",
    'git commit -m "fix `src/lib.rs` parsing"',
])
def test_data_is_never_a_command(text):
    an = run(text)
    assert "cargo" not in names(an), words(an)
    assert not an.unverifiable, reasons(an)


def test_backquote_in_double_quotes_runs_like_bash_but_a_rs_file_is_not_a_script(tmp_path):
    """The seed's 100 s bug: an unescaped backquote made a .rs file a 'script'."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("fn main() { let x = `weird`; }\n")
    an = run('git commit -m "fix `src/lib.rs` parsing"', tmp_path)
    assert "lib.rs" in names(an)            # bash would try to run it: it is a command...
    assert an.scripts_read == []            # ...but never read as a shell script
    assert not an.unverifiable


def test_unquoted_heredoc_expands_substitutions():
    an = run("cat > x.txt <<EOF\nbuilt: $(cargo test --workspace)\nEOF")
    assert find(an, "cargo").via[-1] == "cmdsubst"
    an = run("cat > x.txt <<'EOF'\nbuilt: $(cargo test --workspace)\nEOF")
    assert "cargo" not in names(an)


# ------------------------------------------------------------------ unverifiable

@pytest.mark.parametrize("text, why", [
    ("base64 -d payload | bash", "piped into bash"),
    ("curl -sL https://x/install.sh | sh", "piped into sh"),
    ("wget -qO- x | bash -s -- --flag", "piped into bash"),
    ("bash <(curl -s x)", "process substitution"),
    ("source <(kubectl completion bash)", "process substitution"),
    (". <(gen)", "process substitution"),
    ('bash -c "$SCRIPT"', "dynamic"),
    ('eval "$X"', "dynamic"),
    ('eval "$(ssh-agent -s)"', "shell setup"),   # unverifiable; left to the exec-time shims (exec_deferral)
    ("$CMD --workspace", "dynamic"),
    ("$(which cargo) test", "dynamic"),
    ("python3 -c 'import subprocess; subprocess.run(\"cargo test --workspace\", shell=True)'",
     "cargo test --workspace"),
    ("python -c 'import os; os.system(\"cd x && cargo test --all\")'", "cargo test --all"),
    ("python3 -c 'import subprocess as s; s.run([\"cargo\", \"test\", \"--workspace\"])'",
     "cargo test --workspace"),
    ("node -e 'require(\"child_process\").execSync(\"cargo test --workspace\")'", "cargo"),
    ("perl -e 'system(\"cargo test --all\")'", "cargo"),
    ("ruby -e 'system(\"pytest\")'", "pytest"),
    ("python3 - <<EOF\nimport os\nos.system('cargo test --workspace')\nEOF", "cargo"),
    ("echo 'unbalanced", "could not be read"),
    ('cargo test "unterminated', "could not be read"),
])
def test_unverifiable(text, why):
    an = run(text)
    assert an.unverifiable, words(an)
    assert why in reasons(an)


def test_interpreter_without_pattern_is_fine():
    assert not run("python3 -c 'import sys; print(sys.version)'").unverifiable
    assert not run("node -e 'console.log(1)'").unverifiable
    assert not run("python3 -c 'print(\"cargo test\")'",
                   patterns=("cargo test --workspace",)).unverifiable


# ------------------------------------------------------------------ scripts

def write(path, text, mode=0o755):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("text", [
    "./ci.sh", "bash ci.sh", "sh ci.sh", "source ci.sh", ". ./ci.sh", "scripts/../ci.sh",
    "cd sub && ../ci.sh", "bash -x ci.sh arg", "cat ci.sh | bash", "bash < ci.sh",
    "swarmgate preflight ci.sh", "nohup ./ci.sh &",
])
def test_scripts_at_command_position_are_read(tmp_path, text):
    write(tmp_path / "ci.sh", "#!/bin/bash\nset -e\ncargo test --workspace\n")
    (tmp_path / "sub").mkdir()
    an = run(text, tmp_path)
    c = find(an, "cargo")
    assert f"script:{tmp_path / 'ci.sh'}" in c.via
    assert c.script == str(tmp_path / "ci.sh")
    assert an.scripts_read == [str(tmp_path / "ci.sh")]


def test_script_shebang_and_executable_rules(tmp_path):
    write(tmp_path / "tool", "#!/usr/bin/env bash\ncargo test\n")
    write(tmp_path / "py", "#!/usr/bin/env python3\nimport os\nos.system('cargo test')\n")
    write(tmp_path / "plain", "cargo test\n")                    # executable, no shebang
    write(tmp_path / "lib.rs", "cargo test\n", mode=0o644)      # not executable, not a script
    assert "cargo" in names(run("./tool", tmp_path))
    assert "cargo" not in names(run("./py", tmp_path))
    # a python file is no shell script: cargo runs only through its os.system (hooks/embedded_shell.py)
    assert [c.via for c in run("python3 py", tmp_path).commands if c.name == "cargo"] == [("python3 os.system",)]
    assert "cargo" in names(run("./plain", tmp_path))
    assert "cargo" not in names(run("./lib.rs", tmp_path))
    assert "cargo" in names(run("bash lib.rs", tmp_path))       # bash runs any file it is given


def test_scripts_recursive_each_once(tmp_path):
    write(tmp_path / "a.sh", "./b.sh\n./b.sh\nsource ./a.sh\n")
    write(tmp_path / "b.sh", "cargo test --workspace\n./a.sh\n")
    an = run("./a.sh && ./b.sh", tmp_path)
    assert sorted(an.scripts_read) == [str(tmp_path / "a.sh"), str(tmp_path / "b.sh")]
    assert names(an).count("cargo") == 1
    inner = find(an, "cargo")
    assert inner.via[-2:] == (f"script:{tmp_path / 'a.sh'}", f"script:{tmp_path / 'b.sh'}")[-2:] \
        or f"script:{tmp_path / 'b.sh'}" in inner.via


def test_script_depth_bound(tmp_path):
    for k in range(10):
        write(tmp_path / f"s{k}.sh", f"./s{k + 1}.sh\n")
    write(tmp_path / "s10.sh", "cargo test\n")
    an = run("./s0.sh", tmp_path, max_depth=4)
    assert "cargo" not in names(an)
    assert any("deeper" in p for p in an.problems)
    assert an.unverifiable


def test_missing_binary_huge_scripts(tmp_path):
    an = run("./nope.sh", tmp_path)
    assert any("does not exist" in p for p in an.problems) and not an.unverifiable
    (tmp_path / "bin.sh").write_bytes(b"\x7fELF\x00\x01\x02cargo test\n")
    an = run("bash bin.sh", tmp_path)
    assert any("not a text file" in p for p in an.problems) and an.unverifiable
    (tmp_path / "latin.sh").write_bytes(b"echo \xff\xfe\n")
    an = run("bash latin.sh", tmp_path)
    assert an.unverifiable
    write(tmp_path / "big.sh", "echo x\n" * 2000)
    an = run("./big.sh", tmp_path, max_script_bytes=1000)
    assert any("limit" in p for p in an.problems) and an.unverifiable


def test_cd_is_followed_for_scripts(tmp_path):
    write(tmp_path / "sub" / "x.sh", "cargo test\n")
    assert "cargo" in names(run("cd sub && ./x.sh", tmp_path))
    assert "cargo" in names(run("cd sub; bash x.sh", tmp_path))
    an = run("(cd sub) && ./x.sh", tmp_path)          # the subshell's cd does not leak
    assert "cargo" not in names(an)
    an = run('cd "$DIR" && ./x.sh', tmp_path)
    assert an.unverifiable and "cannot tell where" in reasons(an)


@pytest.mark.parametrize("text", [
    "cat > /tmp/sg-x.sh <<'EOF'\ncargo test --workspace\nEOF\nbash /tmp/sg-x.sh",
    "cat > run.sh <<EOF\ncargo test --workspace\nEOF\nchmod +x run.sh && ./run.sh",
    "echo 'cargo test --workspace' > run.sh; sh run.sh",
    "printf 'set -e\\ncargo test --workspace\\n' > run.sh && bash run.sh",
    "echo '#!/bin/sh' > run.sh; echo 'cargo test --workspace' >> run.sh; sh run.sh",
    "tee run.sh <<'EOF' >/dev/null\ncargo test --workspace\nEOF\nbash run.sh",
    "echo 'cargo test --workspace' | tee run.sh; bash run.sh",
    "echo 'cargo test --workspace' > a.sh; cp a.sh run.sh; ./run.sh",
])
def test_script_written_then_run_is_judged_by_content(tmp_path, text):
    an = run(text, tmp_path)
    c = find(an, "cargo")
    assert c.args == ["test", "--workspace"]
    assert any(v.startswith("script:") for v in c.via)
    assert not an.unverifiable, reasons(an)


@pytest.mark.parametrize("text", [
    "curl -s x > run.sh; bash run.sh",
    "curl -so run.sh x && bash run.sh",
    "base64 -d <<<$P > run.sh; chmod +x run.sh; ./run.sh",
    "echo \"$CMD\" > run.sh; bash run.sh",
    "cat > run.sh <<EOF\n$CMD\nEOF\nbash run.sh",
])
def test_script_written_with_unknown_content_is_unverifiable(tmp_path, text):
    an = run(text, tmp_path)
    assert an.unverifiable, words(an)


# ------------------------------------------------------------------ robustness

def test_never_raises_on_odd_input(tmp_path):
    for text in ["", " ", "\n\n", ";", "&&", "|", "(", ")", "{", "}", "'", '"', "`", "$(", "${",
                 "<<EOF", "a <<EOF\nno end", "if", "fi", "done", "case", "esac", "((", "]]",
                 "\x00", "\\", "a\\\nb", "f() {", "for", "while true", "a | | b", "$((", "x=(",
                 "a >", "a 2>&", "eval", "bash -c", "xargs", "env", "timeout 5", "sudo", "find -exec"]:
        an = analyze(text, cwd=str(tmp_path))
        assert isinstance(an, bash_tree.Analysis)


def test_bad_arguments_do_not_raise():
    an = analyze(None, cwd="/")   # type: ignore[arg-type]
    assert an.unverifiable
    an = analyze("cargo test", cwd="")
    assert find(an, "cargo")


def test_lexical_fallback_marks_parsed_by():
    an = run("case $1 in start) cargo test;; *) echo no;; esac", parser="auto")
    assert an.parsed_by == "lexical" and find(an, "cargo")
    an = run("cargo test", parser="auto")
    assert an.parsed_by == "bashlex"
    assert run("cargo test").parsed_by == "lexical"   # the default: what the guards judge with


def test_lexical_and_bashlex_agree_on_common_commands():
    texts = [
        "A=1 cargo test --workspace 2>&1 | tail -5 && echo ok",
        "for f in *.rs; do rustfmt $f; done; git add -A",
        "f() { cargo build; }; ( f ) & wait",
        "if [ -f x ]; then bash -c 'make all'; else eval 'make clean'; fi",
        "cat <<EOF | bash\ncargo test\nEOF",
        "echo \"$(date) `whoami`\" > log.txt",
    ]
    for t in texts:
        a = run(t, parser="auto")
        assert a.parsed_by == "bashlex", t
        seq, unsure = bash_lexical.parse(t)
        assert unsure is None
        w = bash_walker.Walker(bash_tree.Analysis(), "/", 6, float("inf"), 1 << 20)
        w.source = t   # as bash_tree.analyze sets it
        w.walk(seq, bash_walker.Ctx())
        w.finish(bash_walker.Ctx())
        assert [c.words for c in w.an.commands] == words(a), t


def test_cached_parse_does_not_leak_state_between_calls(tmp_path):
    write(tmp_path / "x.sh", "cargo test\n")
    a1 = run("./x.sh", tmp_path)
    a2 = run("./x.sh", tmp_path)
    assert a1.scripts_read == a2.scripts_read == [str(tmp_path / "x.sh")]
    assert names(a1) == names(a2)


def test_budget_is_respected(tmp_path):
    text = "; ".join(f"echo {i} | cat" for i in range(3000))
    t = time.monotonic()
    an = analyze(text, cwd=str(tmp_path), budget_s=0.05)
    took = time.monotonic() - t
    assert took < 5  # generous: the point is that it stops
    assert an.parsed_by == "lexical"


def test_import_is_light():
    code = ("import sys; import swarmgate.hooks.bash_tree; "
            "print('bashlex' in sys.modules, 'bashlex.parser' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_bashlex_tables_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "st"))
    code = ("from swarmgate.hooks import bashlex_fast as f; b = f.load(); "
            "print(f.cache_path()); print(b.parser.parse('a | b')[0].kind)")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    path, kind = first.stdout.split()
    assert kind == "pipeline" and os.path.exists(path)
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o022 == 0
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert second.stdout.split() == [path, "pipeline"]
    # a corrupt cache is ignored and rebuilt
    with open(path, "wb") as fh:
        fh.write(b"garbage")
    third = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert third.stdout.split()[1] == "pipeline"
    assert os.path.getsize(path) > 1000
    # a group-writable cache is not trusted (still parses)
    os.chmod(path, 0o666)
    fourth = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert fourth.stdout.split()[1] == "pipeline"


# ------------------------------------------------------------------ make and remote/session wrappers

MAKEFILE = (
    "CARGO ?= cargo\nFLAGS = --workspace\n.PHONY: all test\nall: build test\n"
    "build:\n\t@$(CARGO) build\n"
    "test: build\n\t-$(CARGO) test $(FLAGS) 2>&1 | tee $@.log\n\techo \"done $$SOMEVAR\"\n"
    "sub:\n\t$(MAKE) -C sub x\n"
    "env-tool:\n\t$(TOOL) run\n"
    "c:\n\t$(CC) -o x x.c\n"
)


def test_make_targets_recipes_are_commands(tmp_path):
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Makefile").write_text("x:\n\tpytest -q\n")
    an = run("make test", tmp_path)
    c = [c for c in an.commands if c.name == "cargo" and c.args[:1] == ["test"]][0]
    assert c.args == ["test", "--workspace"] and "make:test" in c.via
    assert ["cargo", "build"] in words(an)                       # prerequisite first
    assert ["echo", "done $SOMEVAR"] in words(an)                # $$ is a shell $
    assert an.scripts_read == [str(tmp_path / "Makefile")]
    assert find(run("make", tmp_path), "cargo")                  # default target: all
    assert find(run("make CARGO=/opt/cargo test", tmp_path), "cargo").words[0] == "/opt/cargo"
    assert "cargo" not in names(run("make -n test", tmp_path))   # dry run runs nothing
    sub = run("make sub", tmp_path)
    assert "make:x" in find(sub, "pytest").via
    assert "dynamic" in reasons(run("make env-tool", tmp_path))
    assert find(run("make c", tmp_path), "cc") and not run("make c", tmp_path).unverifiable
    assert names(run("make", tmp_path / "sub" / "nowhere")) == ["make"]


@pytest.mark.parametrize("text, name, label", [
    ("su -c 'cargo test' bob", "cargo", "su"),
    ("ssh -p 2222 peer 'cd x && cargo test --workspace'", "cargo", "ssh:peer"),
    ("uv run --with x pytest -q", "pytest", "uv run"),
    ("poetry run pytest", "pytest", "poetry run"),
    ("nix-shell --run 'cargo test'", "cargo", "nix-shell"),
    ("script -qc 'cargo test' /dev/null", "cargo", None),
    ("tmux new -d -s w 'cargo test'", "cargo", "tmux"),
    ("screen -dmS w cargo test", "cargo", "screen"),
    ("flock /tmp/l cargo test", "cargo", "flock"),
    ("flock -c 'cargo test' /tmp/l", "cargo", "flock"),
    ("srun --mem=8G -n 1 cargo test", "cargo", "srun"),
    ("systemd-run --user --scope -p MemoryMax=8G cargo test", "cargo", "systemd-run"),
    ("env -S 'cargo test'", "cargo", "env"),
])
def test_more_wrappers(text, name, label):
    an = run(text)
    c = find(an, name)
    if label:
        assert label in c.via, c.via


def test_detached_sessions_count_as_background():
    assert find(run("tmux new -d 'cargo test'"), "cargo").background == 1
    assert find(run("screen -dm cargo test"), "cargo").background == 1


def test_getopt_clusters():
    assert find(run("sudo -Eu bob cargo test"), "cargo").args == ["test"]
    assert find(run("xargs -n1 -P4 cargo test"), "cargo").args == ["test", "$XARGS_INPUT"]
    assert find(run("timeout -k5 60 cargo test"), "cargo").args == ["test"]


def test_command_v_runs_nothing():
    assert names(run("command -v cargo")) == ["command"]
    assert names(run("ionice -p 123")) == ["ionice"]


def test_fast_bashlex_parses_exactly_like_stock_bashlex(tmp_path, monkeypatch):
    """The cached tables and the two hot-spot patches must not change any tree."""
    monkeypatch.setenv("SWARMGATE_STATE_DIR", str(tmp_path / "st"))
    texts = ["A=1 cargo test --workspace 2>&1 | tail -5 && echo ok", "a=(1 2) b[1]=x cmd",
             "echo ${x:-y} ${#z} $1 $@", "cat <<EOF | bash\nx\nEOF", "f() { local a=1; }; f",
             "x=$(a `b` \"$(c)\")", "echo \"a\\\"b\" 'c' $'d\\n'", "if a; then b; fi > f 2>&1",
             "! a | b", "a |& b", "echo {a,b}c ~/x", "while true; do sleep 1; done &",
             "for f in *.rs; do rustfmt $f; done", "( a; b ) && { c; }", "x=1 y=2", "a <<< 'x y' 3>&-",
             "case x in a) b;; esac", "echo $((1+2))", "time ls", "[[ a == b ]]"]
    code = ("import json, sys\n"
            "texts = json.loads(sys.argv[2])\n"
            "if sys.argv[1] == 'stock':\n    import bashlex\n"
            "else:\n    from swarmgate.hooks import bashlex_fast\n    bashlex = bashlex_fast.load()\n"
            "out = []\n"
            "for t in texts:\n"
            "    try:\n        out.append([n.dump() for n in bashlex.parse(t)])\n"
            "    except Exception as e:\n        out.append(type(e).__name__ + ': ' + str(e))\n"
            "print(json.dumps(out))\n")
    results = {}
    for mode in ("stock", "fast", "fast"):   # the second fast run reads the cached tables
        p = subprocess.run([sys.executable, "-c", code, mode, json.dumps(texts)],
                           capture_output=True, text=True, check=True)
        results.setdefault(mode, []).append(json.loads(p.stdout))
    assert results["fast"][0] == results["stock"][0]
    assert results["fast"][1] == results["stock"][0]


def test_python_dash_m_runs_the_module_as_a_command():
    c = find(run("python3 -m pytest -x tests/unit"), "pytest")
    assert c.args == ["-x", "tests/unit"] and "python -m" in c.via and c.wrappers == ("python3",)
    assert find(run("python -W ignore -m pytest"), "pytest").args == []
    assert "pytest" not in names(run("python3 x.py -m pytest"))


def test_compound_redirections_reach_the_inner_commands():
    an = run("{ echo a; cargo test; } > /etc/x 2>&1")
    for c in an.commands:
        assert ("> /etc/x") in [f"{r.op} {r.target}" for r in c.redirects]
    an = run("for f in a b; do cat $f; done > out.txt")
    assert any(r.target == "out.txt" and r.writes for r in find(an, "cat").redirects)


def test_symlinked_script_read_once_and_relative_cwd(tmp_path, monkeypatch):
    write(tmp_path / "real.sh", "cargo test\n")
    os.symlink(tmp_path / "real.sh", tmp_path / "link.sh")
    an = run("./real.sh; ./link.sh; bash link.sh", tmp_path)
    assert names(an).count("cargo") == 1 and len(an.scripts_read) == 1
    monkeypatch.chdir(tmp_path)
    an = analyze("./real.sh", cwd=".")
    assert an.scripts_read == [str(tmp_path / "real.sh")]
    assert find(an, "cargo").cwd == str(tmp_path)


def test_copy_onto_itself_does_not_loop(tmp_path):
    write(tmp_path / "x.sh", "cargo test\n")
    an = run("cp x.sh x.sh; ./x.sh", tmp_path)
    assert isinstance(an, bash_tree.Analysis)


def test_positional_parameters_and_constant_substitutions(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "scripts" / "outer.sh",
          '#!/bin/bash\nSCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
          'cd "$SCRIPT_DIR/.."\n./scripts/inner.sh --all\nexec "$@"\n')
    write(tmp_path / "scripts" / "inner.sh", 'cargo test "$1"\n')
    (tmp_path / "sub").mkdir()
    an = run("cd sub && ../scripts/outer.sh pytest -q", tmp_path)
    assert ["cargo", "test", "--all"] in words(an)
    assert ["pytest", "-q"] in words(an)
    assert not an.unverifiable
    an = run('cd "$(git rev-parse --show-toplevel)" && scripts/inner.sh --workspace', tmp_path / "sub")
    assert ["cargo", "test", "--workspace"] in words(an)
    assert find(run('f() { cargo "$@"; }; f test --workspace'), "cargo").args == ["test", "--workspace"]
    assert find(run("echo $1 \"$@\" $#"), "echo").args == ["", "0"]
    assert find(run('cd "$HOME" && pwd'), "cd").args == [os.environ["HOME"]] if "HOME" in os.environ else True


def test_trap_handlers_are_commands():
    c = find(run("trap 'cargo test --workspace' EXIT; true"), "cargo")
    assert "trap" in c.via
    assert names(run("trap - EXIT")) == ["trap"]
    assert names(run("trap -p")) == ["trap"]


def test_unknown_directory_still_matches_its_own_writes(tmp_path):
    an = run('cd "$(mktemp -d)" && cat > run.sh <<EOF\ncargo test --workspace\nEOF\nbash run.sh', tmp_path)
    assert find(an, "cargo").args == ["test", "--workspace"] and not an.unverifiable
    assert find(an, "cargo").cwd is None
    assert "cannot tell where" in reasons(run("cd $D && ./x.sh", tmp_path))
    assert "cannot tell where" in reasons(run("cd $D && source env.sh", tmp_path))
    assert not run("cd $D && ./app --help", tmp_path).unverifiable
    assert find(run("cd $D; cd /tmp && pwd", tmp_path), "pwd").cwd == "/tmp"


def test_bash_c_arguments_are_positional():
    assert find(run("bash -c 'cargo test \"$@\"' _ --workspace"), "cargo").args == ["test", "--workspace"]
    assert find(run("sh -c 'cargo $1 $2' sh test --all"), "cargo").args == ["test", "--all"]
    an = run("find . -name '*.toml' -exec sh -c 'cargo test --manifest-path \"$1\"' _ {} \\;")
    assert find(an, "cargo").args == ["test", "--manifest-path", "{}"]


def test_lexical_only_mode_never_imports_bashlex(tmp_path):
    write(tmp_path / "x.sh", "bash -c 'cargo test --workspace'\n")
    code = ("import sys\nfrom swarmgate.hooks.bash_tree import analyze\n"
            f"an = analyze('./x.sh && eval \"ls -la\"', cwd={str(tmp_path)!r}, parser='lexical')\n"
            "print(an.parsed_by, 'bashlex' in sys.modules, [c.name for c in an.commands])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "lexical False ['x.sh', 'bash', 'cargo', 'eval', 'ls']"
    a = run("A=1 cargo test | tee log & wait", parser="lexical")
    b = run("A=1 cargo test | tee log & wait", parser="auto")
    assert words(a) == words(b) and a.parsed_by == "lexical" and b.parsed_by == "bashlex"


def test_xargs_and_parallel_arguments():
    c = find(run("echo --workspace | xargs cargo test"), "cargo")
    assert c.args == ["test", "--workspace"]
    c = find(run("find . -name Cargo.toml | xargs -n1 cargo test"), "cargo")
    assert c.args == ["test", "$XARGS_INPUT"] and c.dynamic == [False, False, True]
    assert find(run("xargs cargo test <<< '--all'"), "cargo").args == ["test", "--all"]
    c = find(run("xargs -I{} cp {} b/ < f"), "cp")   # unknown input: the replaced word is unknown
    assert c.args == ["$XARGS_INPUT", "b/"] and c.dynamic == [False, True, False]
    assert find(run("printf 'a\\nb\\n' | xargs -I{} cp {} b/"), "cp").args == ["a", "b/"]
    an = run("parallel cargo test ::: --workspace --all")
    assert [c.args for c in an.commands if c.name == "cargo"] == [["test", "--workspace"], ["test", "--all"]]
    an = run("parallel 'cargo test -p {}' ::: a b")
    assert [c.args for c in an.commands if c.name == "cargo"] == [["test", "-p", "a"], ["test", "-p", "b"]]


def test_unquoted_heredoc_with_known_variables_is_literal(tmp_path):
    an = run('D=/opt/x; cat > run.sh <<EOF\n#!/bin/bash\ncd $D && cargo test --workspace "\\$1"\nEOF\n'
             'bash run.sh', tmp_path)
    assert not an.unverifiable, reasons(an)
    assert ["cd", "/opt/x"] in words(an) and find(an, "cargo").args == ["test", "--workspace", ""]
    an = run('cat > run.sh <<EOF\n$UNKNOWN_THING\nEOF\nbash run.sh', tmp_path)
    assert an.unverifiable


def test_special_files_as_scripts(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    an = run("bash fifo; ./fifo; source fifo", tmp_path)     # never opened: no hang
    assert any("not a regular file" in p for p in an.problems)
    assert "piped into bash" in reasons(run("curl x | bash /dev/stdin"))
    assert find(run("echo 'cargo test' | bash /dev/stdin"), "cargo")
    assert "file descriptor" in reasons(run("bash /dev/fd/63"))
    assert names(run("bash /dev/null")) == ["bash"]


# ------------------------------------------------------------------ bypasses an agent finds without trying

def test_unquoted_variable_is_split_into_words():
    assert find(run('C="cargo test"; $C --workspace'), "cargo").args == ["test", "--workspace"]
    assert names(run('C="cargo test"; "$C" --workspace')) == ["cargo test"]   # bash: no such command


@pytest.mark.parametrize("text", ["$'\\x63argo' test", "$'\\143argo' test", "$'\\u0063argo' test",
                                  "echo -e 'cargo\\x20test' | bash", "printf 'cargo\\040test' | sh"])
def test_escaped_names(text):
    assert find(run(text), "cargo").args == ["test"]


def test_aliases_and_busybox():
    assert "alias:c" in find(run('alias c="cargo test"\nc --workspace'), "cargo").via
    assert find(run('alias c="cargo test"; c --workspace'), "cargo").args == ["test", "--workspace"]
    assert find(run("busybox sh -c 'cargo test'"), "cargo").wrappers == ("busybox",)


def test_script_created_by_an_unseen_writer_is_unverifiable(tmp_path):
    an = run("python3 -c \"open('x.sh','w').write('cargo test')\" && bash x.sh", tmp_path)
    assert "does not exist yet" in reasons(an) or "written by this same command" in reasons(an)
    an = run("git checkout other -- gen.sh && ./gen.sh", tmp_path)
    assert "does not exist yet" in reasons(an)
    an = run("cd . && chmod +x nope.sh && ./nope.sh", tmp_path)   # nothing could have made it
    assert not an.unverifiable and any("does not exist" in p for p in an.problems)


def test_for_loop_over_constants_and_globs(tmp_path):
    write(tmp_path / "scripts" / "a.sh", "cargo test --workspace\n")
    write(tmp_path / "scripts" / "b.sh", "ls\n")
    an = run('for f in scripts/*.sh; do bash "$f"; done', tmp_path)
    assert sorted(an.scripts_read) == [str(tmp_path / "scripts" / "a.sh"), str(tmp_path / "scripts" / "b.sh")]
    assert find(an, "cargo") and not an.unverifiable
    an = run("for t in --workspace --all; do cargo test $t; done")
    assert [c.args for c in an.commands if c.name == "cargo"] == [["test", "--workspace"], ["test", "--all"]]
    an = run("for i in 1 2 3 4 5 6 7 8 9 10; do echo $i; done")
    assert words(an) == [["echo", "$i"]]          # long lists: read once, the variable unknown


def test_more_assignment_forms_and_argv_literals():
    assert find(run("printf -v C cargo; $C test"), "cargo").args == ["test"]
    assert find(run('set -- cargo test; "$@" --workspace'), "cargo").args == ["test", "--workspace"]
    assert "cargo test --workspace" in reasons(run(
        "node -e \"require('child_process').spawnSync('cargo', ['test', '--workspace'])\""))
    assert "cargo test --workspace" in reasons(run(
        "python3 -c \"import os; os.execvp('cargo', ['cargo', 'test', '--workspace'])\""))
    assert "cannot be read statically" in reasons(run("cat <(echo 'cargo test') | bash"))
    assert not run("diff <(ls a) <(ls b)").unverifiable


def test_api_contract_types(tmp_path):
    """The shape the guards code against (see the module doc)."""
    write(tmp_path / "x.sh", "while true; do sleep 1; done\n")
    an = run("A=1 env B=2 timeout 5 cargo test > o 2>&1 & ( ./x.sh & ) & eval \"$Z\"", tmp_path)
    assert an.parsed_by in ("bashlex", "lexical")
    for name in ("commands", "loops", "unverifiable", "nested_background", "scripts_read", "problems"):
        assert isinstance(getattr(an, name), list)
    for c in an.commands:
        assert isinstance(c, bash_tree.SimpleCommand)
        assert isinstance(c.words, list) and all(isinstance(w, str) for w in c.words)
        assert c.name == (bash_tree.command_name(c.words[0]) if c.words else "")
        assert c.args == c.words[1:]
        assert isinstance(c.assignments, dict) and isinstance(c.redirects, list)
        assert isinstance(c.via, tuple) and isinstance(c.wrappers, tuple)
        assert isinstance(c.background, int) and isinstance(c.text, str) and c.is_data is False
        assert len(c.dynamic) == len(c.words)
        for r in c.redirects:
            assert isinstance(r, bash_tree.Redirect) and isinstance(r.op, str) and isinstance(r.target, str)
            assert r.fd is None or isinstance(r.fd, int)
    cargo = find(an, "cargo")
    assert cargo.assignments == {"A": "1", "B": "2"} and cargo.wrappers == ("env", "timeout")
    assert cargo.background == 1
    (lp,) = an.loops
    assert isinstance(lp, bash_tree.Loop) and lp.kind == "while" and lp.has_break is False
    assert all(isinstance(c, bash_tree.SimpleCommand) for c in lp.condition_commands + lp.body_commands)
    assert an.nested_background and all(isinstance(x, str) for x in an.nested_background)
    assert all(isinstance(u, bash_tree.Unverifiable) and u.reason and isinstance(u.text, str)
               for u in an.unverifiable)
    assert an.scripts_read == [str(tmp_path / "x.sh")]


@pytest.mark.parametrize("text, expected", [
    ("[[ -f x ]] && y", [["y"]]),
    ("time -p cargo test | tail", [["cargo", "test"], ["tail"]]),
    ("for ((i=0;i<3;i++)); do :; done", [[":"]]),
    ("x=$(cat <<'E'\nhi\nE\n)", [["cat"]]),
    ("a=(1 2); b", [["b"]]),
    ("declare -A m=([a]=1); c", [["declare", "-A", "m=([a]=1)"], ["c"]]),
    ("local arr=(a 'b c') x=1", [["local", "arr=(a b c)", "x=1"]]),
    ("[[ $(cargo test) ]]", [["cargo", "test"]]),
    ("coproc ls", [["ls"]]),
])
def test_constructs_bashlex_cannot_parse(text, expected):
    an = run(text)
    assert an.parsed_by == "lexical" and words(an) == expected and not an.unverifiable


def test_array_assignment_is_not_a_constant():
    assert "dynamic" in reasons(run("C=(cargo x); $C test"))


def test_detaching_wrappers_count_as_background():
    assert find(run("setsid -f cargo test"), "cargo").background == 1
    assert find(run("setsid cargo test"), "cargo").background == 0
    assert find(run("sudo -b cargo test"), "cargo").background == 1
    an = run("( setsid -f worker ) &")
    assert find(an, "worker").background == 2 and an.nested_background == ["setsid -f worker"]
    an = run("( tmux new -d 'worker' ) &")
    assert an.nested_background


@pytest.mark.parametrize("text", [
    "(\ncat <<EOF\ncargo test --workspace\nEOF\n)",
    "{ cat <<EOF\ncargo test --workspace\nEOF\n}",
    "if true; then cat <<EOF\ncargo test --workspace\nEOF\nfi",
    "f() {\ncat <<EOF\ncargo test --workspace\nEOF\n}",
    "while false; do cat <<EOF\ncargo test --workspace\nEOF\ndone",
])
def test_heredoc_inside_compound_is_data(text):
    """bashlex parses such bodies as commands; its tree is refused and the fallback reads it right."""
    an = run(text)
    assert "cargo" not in names(an), words(an)
    assert "cat" in names(an) and not an.unverifiable


def test_bashlex_positions_inside_backquotes_are_checked():
    an = run('X=`a | \\\n  grep -o "b"`; echo $X')
    assert ["grep", "-o", "b"] in words(an)


def test_every_elif_branch_is_read():
    """bashlex nests the third and later elif inside a reserved-word node."""
    an = run("if a; then b; elif c; then d; elif e; then cargo test --workspace; else g; fi", parser="auto")
    assert an.parsed_by == "bashlex" and ["cargo", "test", "--workspace"] in words(an)
    assert names(an) == ["a", "b", "c", "d", "e", "cargo", "g"]


def test_parameter_word_with_quotes_inside_braces():
    an = run('case ${1?"missing pattern; try \\`$0 --help\' for help"} in a) ls;; esac')
    assert not an.unverifiable and "ls" in names(an)


@pytest.mark.parametrize("text", ['echo ${X:-"$(cargo test --workspace)"}', "echo ${X:-$(cargo test --workspace)}",
                                  "echo ${X:-`cargo test --workspace`}", 'echo "${X:-$(cargo test --workspace)}"'])
def test_substitution_inside_parameter_default(text):
    assert find(run(text), "cargo").args == ["test", "--workspace"]
    assert find(run(text, parser="lexical"), "cargo").args == ["test", "--workspace"]


@pytest.mark.parametrize("text, expected", [
    # bashlex bugs found by reading ~11,000 lines of the machine's shell scripts
    ("X='$(cargo test --workspace)'", []),                          # substitution in single quotes
    ("F='`cargo test --workspace`'; echo $F", [["echo", "`cargo", "test", "--workspace`"]]),
    ("exit 0 ;# cargo test --workspace", [["exit", "0"]]),            # comment right after ;
    ('V["k"]=" cargo test"', []),                                   # array element assignment
    ('X="`\\\\unset -f command; \\\\command -v java`"', [["unset", "-f", "command"], ["command", "-v", "java"]]),
    ("u=`echo \"$x\" | sed -e 's,/[^/]*\\$,/,'`", [["echo", "$x"], ["sed", "-e", "s,/[^/]*$,/,"]]),
])
def test_bashlex_mistakes_are_not_trusted(text, expected):
    an = run(text)
    assert words(an) == expected, (an.parsed_by, words(an))


def test_fresh_virtualenv_activation_is_not_unverifiable(tmp_path):
    an = run("python3 -m venv .venv && source .venv/bin/activate && pip install -e .", tmp_path)
    assert not an.unverifiable and "pip" in names(an)


def test_parameter_defaults():
    assert find(run('"${CARGO:-cargo}" test --workspace'), "cargo").args == ["test", "--workspace"]
    assert find(run("C=/opt/cargo; ${C:-cargo} test"), "cargo").words[0] == "/opt/cargo"
    assert "dynamic" in reasons(run("C=$(which x); ${C:-cargo} test"))


def test_interpreter_program_from_stdin(tmp_path):
    (tmp_path / "a.py").write_text('import os\nos.system("cargo test --workspace")\n')
    assert "cannot be read statically" in reasons(run("curl -s https://x/get.py | python3", tmp_path))
    assert "cargo test --workspace" in reasons(run("cat a.py | python3", tmp_path))
    assert "cargo test --workspace" in reasons(run("python3 - < a.py", tmp_path))
    assert "cargo test --workspace" in reasons(run(
        "python3 <<< 'import os; os.system(\"cargo test --workspace\")'", tmp_path))
    assert not run("echo 'print(1)' | python3", tmp_path).unverifiable
    # a program file is not a shell script (SPEC), but its code is scanned like a one-liner (issue 11)
    assert "cargo test --workspace" in reasons(run("python3 a.py", tmp_path))
    assert not run("python3 b.py", tmp_path).unverifiable        # no such file: nothing runs
