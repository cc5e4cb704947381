"""The one wrapper table: every program that runs an operand is followed to the command it runs."""
from __future__ import annotations

import dis
import os
import tomllib
from importlib import resources

import pytest

import swarmgate
from swarmgate.config import ConfigError, validate
from swarmgate.hooks import bash_programs, bash_walker
from swarmgate.hooks import bash_wrappers as bw
from swarmgate.hooks import shell_event
from swarmgate.hooks.bash_tree import analyze
from swarmgate.hooks.command_patterns import matches_words, views

HEAVY = ["cargo", "test", "--workspace"]


def inner(text, **kw):
    an = analyze(text, cwd="/", **kw)
    return [c for c in an.commands if c.name == "cargo" and c.args[:1] == ["test"]], an


# (command, via label expected on the inner command or None)
ARGV_WRAPPERS = [
    "strace -f -o /tmp/t.log cargo test --workspace",
    "strace -e trace=process -s 200 cargo test --workspace",
    "ltrace -o /tmp/l -e malloc cargo test --workspace",
    "valgrind --tool=memcheck --leak-check=full cargo test --workspace",
    "gdb -q -batch -ex run --args cargo test --workspace",
    "chroot / cargo test --workspace",
    "chroot --userspec=1000:1000 / cargo test --workspace",
    "bwrap --ro-bind / / --dev /dev --proc /proc --bind /tmp /tmp --chdir /tmp cargo test --workspace",
    "firejail --noprofile --net=none cargo test --workspace",
    "prlimit --as=8000000000 --nofile=1024 cargo test --workspace",
    "numactl --cpunodebind=0 --membind=0 cargo test --workspace",
    "numactl -N 0 -m 0 cargo test --workspace",
    "taskset -c 0-3 cargo test --workspace",
    "taskset 0x3 cargo test --workspace",
    "unbuffer -p cargo test --workspace",
    "stdbuf -oL -eL cargo test --workspace",
    "rustup run stable cargo test --workspace",
    "rustup run nightly-2024-01-01 cargo test --workspace",
    "uvx --from cargo-wrapper cargo test --workspace",
    "pipx run --spec x cargo test --workspace",
    "conda run -n rust --no-capture-output cargo test --workspace",
    "mamba run -n env cargo test --workspace",
    "micromamba run -n env cargo test --workspace",
    "poetry run cargo test --workspace",
    "uv run --with pytest cargo test --workspace",
    "pdm run cargo test --workspace",
    "hatch run cargo test --workspace",
    "rye run cargo test --workspace",
    "docker run --rm -v $PWD:/w -w /w rust:1 cargo test --workspace",
    "docker run -it --rm --name x -e A=1 rust:1 cargo test --workspace",
    "docker exec -it builder cargo test --workspace",
    "docker compose run --rm app cargo test --workspace",
    "podman run --rm -v .:/src:Z rust cargo test --workspace",
    "podman exec ctr cargo test --workspace",
    "docker run --rm --entrypoint cargo rust:1 test --workspace",
    "chronic cargo test --workspace",
    "entr -r cargo test --workspace",
    "xvfb-run -a cargo test --workspace",
    "xvfb-run -s '-screen 0 1024x768x24' cargo test --workspace",
    "flock /tmp/lock cargo test --workspace",
    "flock -w 10 /tmp/lock cargo test --workspace",
    "ionice -c 3 cargo test --workspace",
    "chrt -i 0 cargo test --workspace",
    "cgexec -g memory:box cargo test --workspace",
    "systemd-run --user --scope -p MemoryMax=2G cargo test --workspace",
    "runuser -u nobody -- cargo test --workspace",
    "doas -u root cargo test --workspace",
    "sudo -u builder cargo test --workspace",
    "sudo -E RUSTFLAGS=-g cargo test --workspace",
    "nohup cargo test --workspace",
    "setsid cargo test --workspace",
    "nice -n 19 cargo test --workspace",
    "nice -19 cargo test --workspace",
    "timeout 3600 cargo test --workspace",
    "timeout -k 10 -s INT 1h cargo test --workspace",
    "time cargo test --workspace",
    "dbus-run-session -- cargo test --workspace",
    "mpirun -np 4 --mca btl self cargo test --workspace",
    "srun -n 1 --mem 8G cargo test --workspace",
    "env -i PATH=/usr/bin cargo test --workspace",
    "npx cargo test --workspace",
    "npm exec -- cargo test --workspace",
    "pnpm exec cargo test --workspace",
    "pnpm dlx cargo test --workspace",
    "bunx cargo test --workspace",
    "perf stat -e cycles cargo test --workspace",
    "perf record -g -o /tmp/p.data cargo test --workspace",
    "nix develop --command cargo test --workspace",
    "nix shell nixpkgs#cargo -c cargo test --workspace",
    "kubectl exec -it pod -- cargo test --workspace",
    "screen -dmS build cargo test --workspace",
    "faketime '2024-01-01' cargo test --workspace",
    "eatmydata cargo test --workspace",
    "direnv exec . cargo test --workspace",
    "setarch x86_64 cargo test --workspace",
    "fakeroot cargo test --workspace",
    "unshare -r cargo test --workspace",
    "catchsegv cargo test --workspace",
    "busybox time cargo test --workspace",
    "dtach -n /tmp/s cargo test --workspace",
    "tini -s -- cargo test --workspace",
    "gosu user cargo test --workspace",
    "py-spy record -o p.svg -- cargo test --workspace",
    "heaptrack cargo test --workspace",
    "rr record cargo test --workspace",
    "lldb -- cargo test --workspace",
    "retry -t 3 -- cargo test --workspace",
    "sem -j 2 cargo test --workspace",
    "op run --env-file .env -- cargo test --workspace",
    "cpulimit -l 50 cargo test --workspace",
    "proxychains4 -f p.conf cargo test --workspace",
    "trickle -d 100 cargo test --workspace",
    "pkexec cargo test --workspace",
    "corepack cargo test --workspace",
    "distrobox enter -n box -- cargo test --workspace",
    "toolbox run -c dev cargo test --workspace",
]

SHELL_TEXT_WRAPPERS = [
    "sg wheel -c 'cargo test --workspace'",
    "sg wheel cargo test --workspace",
    "su -c 'cargo test --workspace'",
    "su - builder -c 'cargo test --workspace'",
    "su -lc 'cargo test --workspace' builder",
    "runuser builder -c 'cargo test --workspace'",
    "env -S 'cargo test --workspace'",
    "env -S'cargo test' --workspace",
    "npx -c 'cargo test --workspace'",
    "npm exec -c 'cargo test --workspace'",
    "npm x --call 'cargo test --workspace'",
    "expect -c 'spawn cargo test --workspace; expect eof'",
    "expect -c 'spawn bash; send \"cargo test --workspace\\r\"; expect eof'",
    "hyperfine 'cargo test --workspace'",
    "hyperfine --warmup 1 --prepare 'cargo test --workspace' 'sleep 1'",
    "hyperfine -r 3 -n t 'cargo build' 'cargo test --workspace'",
    "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='cargo test --workspace' src",
    "tar -cf x.tar --use-compress-program='cargo test --workspace' src",
    "tar -xf x.tar --to-command='cargo test --workspace'",
    "awk 'BEGIN { system(\"cargo test --workspace\") }'",
    "gawk 'BEGIN{system(\"cargo test --workspace\")}' /dev/null",
    "sed -n '1e cargo test --workspace' /etc/hostname",
    "sed '1 e cargo test --workspace' /etc/hostname",
    "xargs -I{} sh -c '{}' <<< 'cargo test --workspace'",
    "echo 'cargo test --workspace' | xargs -I % bash -c %",
    "parallel ::: 'cargo test --workspace'",
    "parallel cargo test ::: --workspace",
    "find . -maxdepth 0 -exec cargo test --workspace \\;",
    "find . -maxdepth 0 -exec sh -c 'cargo test --workspace' \\;",
    "script -qc 'cargo test --workspace' /dev/null",
    "script -q -c 'cargo test --workspace' /dev/null",
    "ssh peer 'cargo test --workspace'",
    "ssh -p 2222 -i key peer cargo test --workspace",
    "tmux new -d 'cargo test --workspace'",
    "tmux new-session -d -s build cargo test --workspace",
    "tmux send-keys -t build 'cargo test --workspace' Enter",
    "screen -S build -X stuff 'cargo test --workspace\\n'",
    "watch -n 60 cargo test --workspace",
    "watchexec -e rs cargo test --workspace",
    "watchexec -e rs -- cargo test --workspace",
    "vim -es -c ':!cargo test --workspace' -c q",
    "nvim --headless -c '!cargo test --workspace' -c qa",
    "vim -c 'terminal cargo test --workspace'",
    "vim '+!cargo test --workspace' +q",
    "gdb -batch -ex 'shell cargo test --workspace'",
    "gdb -batch -ex '!cargo test --workspace'",
    "nix-shell -p cargo --run 'cargo test --workspace'",
    "flock /tmp/lock -c 'cargo test --workspace'",
    "flock -c 'cargo test --workspace' /tmp/lock",
    "sbatch --wrap 'cargo test --workspace'",
    "pueue add -- cargo test --workspace",
    "nodemon -x 'cargo test --workspace'",
    "vagrant ssh -c 'cargo test --workspace'",
    "bash -lc 'cargo test --workspace'",
    "eval 'cargo test --workspace'",
]


@pytest.mark.parametrize("text", ARGV_WRAPPERS)
def test_argv_wrappers_reach_the_command(text):
    got, an = inner(text)
    assert got, f"{text!r}: the wrapped cargo was not found among {[c.words for c in an.commands]}"
    assert "--workspace" in got[0].args
    assert not an.unverifiable, an.unverifiable


@pytest.mark.parametrize("text", SHELL_TEXT_WRAPPERS)
def test_shell_text_wrappers_reach_the_command(text):
    got, an = inner(text)
    assert got, f"{text!r}: the cargo in the shell text was not found among {[c.words for c in an.commands]}"
    assert "--workspace" in got[0].args


@pytest.mark.parametrize("text, why", [
    ("awk '{ system($0) }' cmds.txt", None),
    ("sed 's/^/cargo test /e' flags.txt", "e flag"),
    ("xargs -I{} sh -c '{}' < cmds.txt", "dynamic"),
    ("tmux send-keys -t x \"$CMD\" Enter", "send-keys"),
])
def test_text_that_runs_unknown_commands_is_not_silently_allowed(text, why):
    an = analyze(text, cwd="/")
    reasons = " | ".join(u.reason for u in an.unverifiable)
    if text.startswith("awk"):
        assert an.programs and an.programs[0].interpreter == "awk"
    else:
        assert an.unverifiable, [c.words for c in an.commands]
        if why and why != "dynamic":
            assert why in reasons


@pytest.mark.parametrize("text", [
    "command -v cargo",
    "strace -p 1234",
    "taskset -p 1234",
    "taskset -cp 0 1234",
    "ionice -p 1234",
    "numactl --hardware",
    "sudo -l",
    "docker ps",
    "docker run --rm alpine",
    "uv pip install cargo",
    "conda list",
    "su builder",
    "script /tmp/typescript",
    "sed -n 1,5p Cargo.toml",
    "sed -i 's/a/b/' src/lib.rs",
    "tar -czf out.tar.gz src",
    "awk '{print $1}' f",
    "vim -c 'set nu' src/lib.rs",
    "gdb -p 1234",
    "hyperfine --help",
])
def test_nothing_runs_through(text):
    an = analyze(text, cwd="/")
    assert [c.name for c in an.commands] == [text.split()[0]], [c.words for c in an.commands]
    assert not an.unverifiable, an.unverifiable


def test_via_labels_say_how_it_was_reached():
    got, _ = inner("ssh -p 2 peer cargo test --workspace")
    assert "ssh:peer" in got[0].via
    got, _ = inner("strace -f cargo test --workspace")
    assert got[0].via[-1] == "strace" and got[0].wrappers == ("strace",)
    got, _ = inner("uv run cargo test --workspace")
    assert "uv run" in got[0].via


def test_detaching_wrappers_count_as_background():
    an = analyze("setsid -f cargo build", cwd="/")
    assert [c.background for c in an.commands if c.name == "cargo"] == [1]
    an = analyze("( sudo -b cargo build ) &", cwd="/")
    assert an.nested_background


# ---------------------------------------------------------------- the table as data

def test_find_command_on_the_table():
    f = bw.find_command(bw.TABLE["docker"], ["run", "--rm", "-e", "A=1", "img", "cargo", "test"])
    assert (f.kind, f.index) == ("argv", 5)
    f = bw.find_command(bw.TABLE["su"], ["-", "u", "-c", "make"])
    assert (f.kind, f.text) == ("shell", "make")
    assert bw.find_command(bw.TABLE["command"], ["-v", "cargo"]).kind == "none"
    f = bw.find_command(bw.TABLE["bwrap"], ["--bind", "/a", "/b", "--overlay", "x", "y", "z", "cargo"])
    assert (f.kind, f.index) == ("argv", 7)


def test_views_follow_runners_by_default_and_every_wrapper_on_request():
    assert views("uv", ["run", "cargo", "test"])[-1] == ("cargo", ["test"])
    assert views("timeout", ["60", "cargo", "test"]) == [("timeout", ["60", "cargo", "test"])]
    assert views("timeout", ["60", "nice", "cargo", "test"], through="all")[-1] == ("cargo", ["test"])
    assert matches_words("python3", ["-m", "pytest", "-q"], "pytest")
    assert matches_words("strace", ["-f", "cargo", "test", "--workspace"], "cargo test --workspace",
                         through="all")
    assert not matches_words("strace", ["-f", "cargo", "test", "--workspace"], "cargo test --workspace")


def test_launchers_come_from_the_table():
    assert shell_event.LAUNCHERS is bw.LAUNCHERS
    for name in ("strace", "docker", "timeout", "run-with-memory-cap", "bash", "xargs"):
        assert name in bw.LAUNCHERS


# ---------------------------------------------------------------- [bash] wrappers

def test_config_wrappers_extend_the_table():
    data = validate({"bash": {"wrappers": {"mywrap": {"options": ["-x", "--name"], "operands": 1},
                                           "myshell": {"shell_options": ["-e"]},
                                           "mytool": {"subcommands": ["exec"], "shell": True}}}})
    w = data["bash"]["wrappers"]
    assert not inner("mywrap -x 1 --name n TARGET cargo test --workspace")[0]
    got, _ = inner("mywrap -x 1 --name n TARGET cargo test --workspace", wrappers=w)
    assert got and got[0].wrappers == ("mywrap",)
    assert inner("myshell -e 'cargo test --workspace'", wrappers=w)[0]
    assert inner("mytool exec cargo test --workspace", wrappers=w)[0]
    assert not inner("mytool list cargo test --workspace", wrappers=w)[0]


@pytest.mark.parametrize("value, says", [
    ({"w": {"options": "-x"}}, "options must be a list of strings"),
    ({"w": {"operands": -1}}, "operands must be an integer 0-8"),
    ({"w": {"operand": 1}}, "unknown field 'operand'"),
    ({"w": {"shell": "yes"}}, "shell must be true or false"),
    ({"a b": {}}, "expected a command name"),
    ({"w": ["-x"]}, "expected a table"),
    (["w"], "expected a table of wrapper name"),
])
def test_config_wrappers_are_validated_with_the_key_named(value, says):
    with pytest.raises(ConfigError) as e:
        validate({"bash": {"wrappers": value}}, "/repo/.claude/swarmgate.toml")
    msg = str(e.value)
    assert "/repo/.claude/swarmgate.toml" in msg and "[bash] wrappers" in msg and says in msg, msg


def test_shipped_config_parses_and_documents_the_key():
    path = os.path.join(os.path.dirname(swarmgate.__file__), "..", "rules", "swarmgate.toml")
    if not os.path.exists(path):
        path = str(resources.files("swarmgate.rules") / "swarmgate.toml")
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    validate(raw, path)
    assert "wrappers" in open(path).read()


def test_lazy_reader_names_match_the_readers():
    """The walker imports bash_programs only for the names it reads (kept apart to stay off the
    hook's hot path): the two lists must say the same."""
    assert set(bash_programs.READERS) == bash_walker.PROGRAM_READERS
    assert all(isinstance(bw.TABLE[n], bw.Wrapper) for n in list(bw.TABLE)[:5])


def test_the_builtin_table_is_one_constant_and_every_entry_builds():
    """The hook imports this module before every Bash call: the table is one constant the compiler
    builds, not ~150 calls and dicts the module's body would make on every import; each entry
    still builds its Wrapper (known fields, shared option lists that exist) when first looked up."""
    with open(bw.__file__, encoding="utf-8") as f:
        code = compile(f.read(), bw.__file__, "exec")
    ins = list(dis.get_instructions(code))
    k = next(i for i, x in enumerate(ins) if x.opname == "STORE_NAME" and x.argval == "_BUILTIN")
    assert ins[k - 1].opname == "LOAD_CONST" and ins[k - 1].argval == bw._BUILTIN
    assert list(bw.TABLE) == [name for name, _ in bw._BUILTIN]
    for name, fields in bw._BUILTIN:
        assert {f for f, _ in fields} <= set(bw.FIELDS), name
        w = bw.TABLE[name]
        assert isinstance(w, bw.Wrapper) and w.name == name
        assert all(isinstance(o, str) and type(n) is int and n > 0 for o, n in w.options.items()), name
    assert bw.TABLE["bwrap"].options["--overlay"] == 3 and bw.TABLE["mpirun"].options["--mca"] == 2
    assert bw.TABLE["docker"].options == bw.TABLE["podman"].options and "--entrypoint" in bw.TABLE["docker"].options
