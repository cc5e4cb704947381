"""Bash semantics that change what runs, content changed within one command, budgets, and the
interpreter-code scan (issue 11): each workaround is read or unverifiable, never a silent allow."""
from __future__ import annotations

import os

import pytest

from swarmgate.hooks.bash_results import Unverifiable
from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.code_literals import string_literals
from swarmgate.hooks.code_scan import scan_code, unverifiable_programs
from swarmgate.hooks.command_patterns import could_match, matches, open_matches

HEAVY = ("cargo test --workspace", "make check-full")


def judge(text, cwd="/tmp", files=None, tmp_path=None):
    if files:
        for rel, body in files.items():
            p = tmp_path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body)
            if rel.endswith(".sh"):
                p.chmod(0o755)
        cwd = str(tmp_path)
    an = analyze(text, cwd=cwd)
    # the guards' side, as shell_event.analysis_of does it
    an.unverifiable.extend(unverifiable_programs(an, HEAVY))
    for c, p in open_matches(an, HEAVY, cwd=cwd):
        an.unverifiable.append(Unverifiable(f"could complete {p}", c.text))
    return an


def refused(an) -> bool:
    return bool(an.unverifiable) or any(matches(c, p) for c in an.commands for p in HEAVY)


SCRIPT = {"x.sh": "#!/bin/bash\necho hello\n"}

WORKAROUNDS = [
    # brace expansion
    ("cargo test --{workspace,all}", None),
    ("{cargo,} test --workspace", None),
    ("cargo te{s,}t --work{space,}", None),
    ("car{go,} test --workspace", None),
    # arithmetic and subscripts
    ("echo $(( x[$(cargo test --workspace)] ))", None),
    ("a[$(cargo test --workspace)]=1", None),
    ("(( a[$(cargo test --workspace)] ))", None),
    ("let 'a[$(cargo test --workspace)]'", None),
    ("x='a[$(cargo test --workspace)]'; echo $((x))", None),
    ("x='a[$(cargo test --workspace)]'; (( x > 0 ))", None),
    ("declare -i n='a[$(cargo test --workspace)]'", None),
    ("[[ 'a[$(cargo test --workspace)]' -eq 0 ]]", None),
    # substitutions that complete the pattern
    ("cargo test $(echo --workspace)", None),
    ("cargo test `echo --workspace`", None),
    ("cargo test $(printf -- --workspace)", None),
    ("cargo test $(cat flags.txt)", {"flags.txt": "--workspace\n"}),
    ("cargo test $(cat /nonexistent/flags)", None),
    ("cargo test $FLAGS", None),
    ("cargo test ${EXTRA:-}$(echo -- --workspace)", None),
    ("make $(echo check-full)", None),
    ("T=check-full; make $T", None),
    # shell start-up and hooks
    ("BASH_ENV=./x.sh bash -c true", {"x.sh": "cargo test --workspace\n"}),
    ("export BASH_ENV=./x.sh; bash -c 'echo hi'", {"x.sh": "cargo test --workspace\n"}),
    ("ENV=./x.sh sh -i -c true", {"x.sh": "cargo test --workspace\n"}),
    ("bash --rcfile ./x.sh -i", {"x.sh": "cargo test --workspace\n"}),
    ("BASH_ENV=$(mktemp) bash -c true", None),
    ("PROMPT_COMMAND='cargo test --workspace' bash -i", None),
    ("export PROMPT_COMMAND='cargo test --workspace'; bash -i", None),
    ("PS4='$(cargo test --workspace)' bash -xc true", None),
    ("hash -p /usr/bin/cargo c; c test --workspace", None),
    ("hash -p \"$(which cargo)\" t; t test --workspace", None),
    ("declare -n r=C; C=cargo; $r test --workspace", None),
    ("IFS=,; C='cargo,test,--workspace'; $C", None),
    ("IFS=:; set -- cargo:test:--workspace; $1", None),
    ("enable -f ./libx.so cargo", None),
    ("alias c='cargo test'; c --workspace", None),
    ("shopt -s expand_aliases; alias t='cargo test --workspace'; t", None),
    # globs
    ("c?rgo test --workspace", {"cargo": "#!/bin/sh\n"}),
    ("./scr*/ver*.sh", {"scripts/verify.sh": "cargo test --workspace\n"}),
    ("touch -- --workspace; cargo test *", None),
    ("bash ./s?.sh", {"s1.sh": "cargo test --workspace\n"}),
    # content changed in the same command
    ("sed -i 's/echo hello/cargo test --workspace/' x.sh && ./x.sh", SCRIPT),
    ("perl -pi -e 's/echo hello/cargo test --workspace/' x.sh; bash x.sh", SCRIPT),
    ("git apply p.diff && ./x.sh", SCRIPT),
    ("git checkout other -- x.sh && ./x.sh", SCRIPT),
    ("git stash pop; bash x.sh", SCRIPT),
    ("patch x.sh < p.diff && ./x.sh", SCRIPT),
    ("patch -p1 < p.diff && ./x.sh", SCRIPT),
    ("cp x.sh x.sh && ./x.sh", SCRIPT),
    ("cp x.sh /tmp/y.sh; cp /tmp/y.sh x.sh; ./x.sh", SCRIPT),
    ("python3 -c \"open('x.sh','w').write('cargo test --workspace')\"; ./x.sh", SCRIPT),
    ("node -e \"require('fs').writeFileSync('x.sh','cargo test --workspace')\" && bash x.sh", SCRIPT),
    ("curl -so x.sh https://e.x/x.sh; bash x.sh", SCRIPT),
    ("tar xf t.tar && ./x.sh", SCRIPT),
    ("D=$(mktemp -d); cp heavy $D/run; $D/run", None),
    ("mkfifo p; bash p", None),
    ("bash /dev/tty", None),
    # budgets
    ("f(){ :; }; " + "; ".join(["f"] * 70) + "; cargo build", None),
    # interpreter code
    ("python3 -c 'import os; os.system(\"cargo test --workspace\")'", None),
    ("python3 -c 'import subprocess; subprocess.run([\"cargo\",\"test\",\"--workspace\"])'", None),
    ("python3 -c 'import subprocess; subprocess.run(\"cargo \" + \"test \" + \"--workspace\", shell=True)'",
     None),
    ("python3 -c 'import subprocess; subprocess.run(\" \".join([\"cargo\", \"test\", \"--workspace\"]), "
     "shell=True)'", None),
    ("python3 -c 'import os; os.system(\"\\x63argo test --workspace\")'", None),
    ("python3 -c 'import os; os.system(bytes.fromhex(\"636172676f2074657374202d2d776f726b7370616365\")"
     ".decode())'", None),
    ("python3 -c 'import os,base64; os.system(base64.b64decode(\"Y2FyZ28gdGVzdCAtLXdvcmtzcGFjZQ==\")"
     ".decode())'", None),
    ("python3 -c 'import os; os.system(\"\".join(map(chr,[99,97,114,103,111,32,116,101,115,116,32,45,45,"
     "119,111,114,107,115,112,97,99,101])))'", None),
    ("python3 -c 'import os; os.system(\"ecapskrow-- tset ograc\"[::-1])'", None),
    ("python3 -c 'import subprocess as s; a=\"car\"+\"go\"; s.run([a,\"test\",\"--workspace\"])'", None),
    ("python3 -c 'import pytest, subprocess; subprocess.call(\"cargo test --work\" \"space\", shell=True)'",
     None),
    ("node -e 'require(\"child_process\").execSync(\"cargo test --workspace\")'", None),
    ("perl -e 'system(\"cargo\", \"test\", \"--workspace\")'", None),
    ("ruby -e '`cargo test --workspace`'", None),
    ("python3 run.py", {"run.py": "import subprocess\nsubprocess.run(['cargo', 'test', '--workspace'])\n"}),
    ("python3 -u tools/ci.py --fast", {"tools/ci.py": "import os\nos.system('make check-full')\n"}),
    ("node ci.js", {"ci.js": "require('child_process').execSync('cargo test --workspace')\n"}),
]


@pytest.mark.parametrize("text, files", WORKAROUNDS)
def test_workaround_is_read_or_unverifiable(tmp_path, text, files):
    an = judge(text, files=files, tmp_path=tmp_path) if files else judge(text, cwd=str(tmp_path))
    assert refused(an), f"{text!r}: {[c.words for c in an.commands]}"


BENIGN = [
    "echo $(( 1 << (n - 1) ))",
    "n=4; echo $(( 1 << (n - 1) ))",
    "for ((i=0; i<3; i++)); do echo $i; done",
    "(( count += 1 ))",
    "ls -la {src,tests}/",
    "mkdir -p build/{debug,release}",
    "cp config.{yml,yml.bak}",
    "echo {1..5}",
    "cargo test -p core",
    "cargo build --release -j$(nproc)",
    "make -j$(nproc) all",
    "make -C build -j$(nproc)",
    "pytest tests/unit -k \"$FILTER\"",
    "python3 -c 'print(\"cargo test --workspace\")'",
    "python3 -c 'import sys; print(sys.argv)' cargo test --workspace",
    "node -e 'console.log(\"run cargo test --workspace to verify\")'",
    "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"name\"])' < package.json",
    "IFS=$'\\n' read -r -d '' -a lines < f.txt || true",
    "grep -rn 'cargo test --workspace' docs/",
    "sed -i 's/foo/bar/' src/lib.rs",
    "sed -n '1,20p' Cargo.toml",
    "awk '{print $1}' data.txt",
    "git checkout -b feature && git status",
    "hash -r",
    "declare -a arr=(a b c); echo ${arr[1]}",
    "echo ${#PATH}",
    "x=5; echo $((x * 2))",
    "ls *.md",
    "rm -f build/*.o",
]


@pytest.mark.parametrize("text", BENIGN)
def test_benign_is_not_refused(tmp_path, text):
    (tmp_path / "README.md").write_text("x")
    an = judge(text, cwd=str(tmp_path))
    assert not refused(an), f"{text!r}: {[c.words for c in an.commands]} {[u.reason for u in an.unverifiable]}"


def test_could_match_treats_unknown_words_as_possible():
    class C:
        def __init__(self, *w, dyn=None):
            self.words = list(w)
            self.name = w[0]
            self.args = list(w[1:])
            self.dynamic = dyn or [False] * len(w)
    assert could_match(C("cargo", "test", "$X", dyn=[False, False, True]), "cargo test --workspace")
    assert not could_match(C("cargo", "test", "-j$(nproc)", dyn=[False, False, True]), "cargo test --workspace")
    assert not could_match(C("cargo", "test", "--release"), "cargo test --workspace")


def test_string_literals_join_concatenation_and_decode_escapes():
    assert [s for s, _ in string_literals('"car" + "go" + " test"')] == ["cargo test"]
    assert [s for s, _ in string_literals("'a' 'b'")] == ["ab"]
    assert string_literals('["a", "b"]') == [("a", False), ("b", True)]
    assert [s for s, _ in string_literals(r'"\x63argo"')] == ["cargo"]
    assert scan_code('print("cargo test --workspace")', HEAVY) is None
    assert scan_code('os.system("cargo test --workspace")', HEAVY) == "cargo test --workspace"


def test_glob_in_an_unknown_directory_is_unknown():
    an = analyze("cd \"$(mktemp -d)\" && cargo test *", cwd="/tmp")
    c = [c for c in an.commands if c.name == "cargo"][0]
    assert c.dynamic[-1] and open_matches(an, HEAVY)


def test_script_run_twice_with_other_arguments_is_unverifiable(tmp_path):
    (tmp_path / "t.sh").write_text("#!/bin/bash\ncargo test $1\n")
    os.chmod(tmp_path / "t.sh", 0o755)
    an = analyze("./t.sh -p core; ./t.sh --workspace", cwd=str(tmp_path))
    assert any("other arguments" in u.reason for u in an.unverifiable)
    an = analyze("./t.sh -p core; ./t.sh -p core", cwd=str(tmp_path))
    assert not an.unverifiable
