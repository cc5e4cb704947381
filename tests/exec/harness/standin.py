#!/usr/bin/env python3
"""Stand-ins for the programs the execution harness cannot (or must not) run for real, dispatched
by the name they are called by (one file, many links in the sandbox's stand-in directory).

- ``cargo``: the heavy target. It resolves its aliases as cargo does (t, .cargo/config.toml
  [alias], CARGO_ALIAS_*, --config alias.X=...), and when the subcommand is `test` over the whole
  workspace (--workspace / --all, not --no-run) it leaves the marker ``cargo-test-workspace`` in
  $EXEC_MARKERS. It is also mounted over every real cargo of the machine inside the sandbox, so an
  absolute path reaches it too.
- ``rustup``: `rustup run TOOLCHAIN CMD...` execs the toolchain's binary by absolute path, as the
  real one does (past PATH and its shims).
- wrappers this machine lacks (firejail, bwrap, numactl, unbuffer, chronic, xvfb-run, uvx, pipx,
  conda, docker, ...): skip their options, exec the operand; shell-string ones (hyperfine,
  expect -c, watchexec, entr) run it with sh -c.
- task runners this machine lacks (just, task, tox, nox, yarn, pnpm, pre-commit): read their file
  in the smallest useful way and run the recipe's lines with sh -c.

Nothing here is swarmgate's: it is the world the corpus runs in.
"""
import configparser
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib

MARKERS = os.environ.get("EXEC_MARKERS", "/tmp/exec/markers")
TOOLCHAINS = os.environ.get("EXEC_TOOLCHAINS", "")


def marker(name: str) -> None:
    os.makedirs(MARKERS, exist_ok=True)
    with open(os.path.join(MARKERS, name), "a") as f:
        f.write(f"{os.getpid()} {' '.join(sys.argv)}\n")


def _toml(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, ValueError):
        return {}


def cargo(args: list) -> int:
    builtin = {"t": "test", "b": "build", "c": "check", "r": "run", "d": "doc"}
    known = {"test", "build", "check", "run", "doc", "clean", "fmt", "clippy", "metadata", "tree", "version",
             "help", "bench", "update", "fetch", "new", "init", "add", "remove", "install", "nextest"}
    inline = {}
    rest = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--config",) and i + 1 < len(args):
            val = args[i + 1]
            i += 2
        elif a.startswith("--config="):
            val = a[len("--config="):]
            i += 1
        else:
            rest.append(a)
            i += 1
            continue
        if val.startswith("alias."):
            k, _, v = val[len("alias."):].partition("=")
            try:
                inline[k.strip()] = tomllib.loads(f"x = {v}")["x"]
            except Exception:  # noqa: BLE001
                inline[k.strip()] = v.strip().strip("'\"")
    args = rest
    files = {}
    d = os.getcwd()
    chain = []
    while True:
        chain.append(d)
        p = os.path.dirname(d)
        if p == d:
            break
        d = p
    for d in reversed(chain):
        for n in ("config", "config.toml"):
            files.update(_toml(os.path.join(d, ".cargo", n)).get("alias", {}) or {})
    for _ in range(10):
        idx = next((k for k, a in enumerate(args) if not a.startswith(("-", "+"))), None)
        if idx is None:
            break
        sub = args[idx]
        if sub in builtin:
            args = args[:idx] + [builtin[sub]] + args[idx + 1:]
            break
        if sub in known:
            break
        val = os.environ.get("CARGO_ALIAS_" + sub.upper().replace("-", "_")) or inline.get(sub) or files.get(sub)
        if val is None:
            print(f"error: no such command: `{sub}`", file=sys.stderr)
            return 101
        words = val.split() if isinstance(val, str) else list(val)
        args = args[:idx] + words + args[idx + 1:]
    print("stand-in cargo " + " ".join(args))
    idx = next((k for k, a in enumerate(args) if not a.startswith(("-", "+"))), None)
    if idx is not None and args[idx] == "test":
        tail = args[idx + 1:]
        before = tail[:tail.index("--")] if "--" in tail else tail
        if ("--workspace" in before or "--all" in before) and "--no-run" not in before:
            marker("cargo-test-workspace")
    return 0


def rustup(args: list) -> int:
    if args[:1] == ["run"] and len(args) >= 3:
        tc, cmd = args[1], args[2:]
        for d in TOOLCHAINS.split(":"):
            if os.path.basename(d).startswith(tc):
                path = os.path.join(d, "bin", cmd[0])
                if os.path.exists(path):
                    os.execv(path, [path, *cmd[1:]])
        print(f"error: toolchain '{tc}' is not installed", file=sys.stderr)
        return 1
    print("stand-in rustup " + " ".join(args))
    return 0


def _exec(argv: list) -> int:
    if not argv:
        return 0
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        print(f"{argv[0]}: {e.strerror}", file=sys.stderr)
        return 127


def _after_opts(args: list, takes: tuple = ()) -> list:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[i + 1:]
        if a in takes:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return args[i:]
    return []


def _recipes(path: str, header) -> dict:
    """name -> lines, for make-like files whose recipe lines are indented under `name:`."""
    out, cur = {}, None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    for line in lines:
        if line and not line[0].isspace() and ":" in line and not line.startswith("#"):
            cur = header(line)
            out[cur] = []
        elif cur and line.strip() and line[0].isspace():
            out[cur].append(line.strip().lstrip("@"))
    return out


def _run_lines(lines: list) -> int:
    rc = 0
    for line in lines:
        rc = subprocess.call(["sh", "-c", line])
        if rc:
            return rc
    return rc


def _package_script(name: str) -> list:
    try:
        scripts = json.load(open("package.json")).get("scripts", {})
    except (OSError, ValueError):
        return []
    return [x for x in (scripts.get("pre" + name), scripts.get(name), scripts.get("post" + name)) if x]


MARKER_PROGRAMS = {"qemu-system-x86_64": "qemu", "herd7": "herd7", "playwright": "playwright"}


def main() -> int:
    name = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    if name in MARKER_PROGRAMS:   # heavy targets of the reader's corpus: running them is the heavy run
        if name != "playwright" or "test" in args:
            marker(MARKER_PROGRAMS[name])
        print(f"stand-in {name} {' '.join(args)}")
        return 0
    if name == "cargo":
        return cargo(args)
    if name == "rustup":
        return rustup(args)
    if name in ("firejail", "bwrap", "numactl", "unbuffer", "chronic", "xvfb-run", "catchsegv", "nocache",
                "faketime", "proot", "fakeroot", "eatmydata", "ltrace"):
        takes = {"numactl": ("-C", "-m", "-N", "--cpunodebind", "--membind"), "xvfb-run": ("-s", "-n", "-e"),
                 "bwrap": ("--bind", "--ro-bind", "--dev", "--proc", "--tmpfs", "--chdir")}.get(name, ())
        if name == "bwrap":   # bwrap's binds take two values
            out, i = [], 0
            while i < len(args):
                if args[i] in ("--bind", "--ro-bind", "--dev-bind"):
                    i += 3
                elif args[i] in ("--dev", "--proc", "--tmpfs", "--chdir"):
                    i += 2
                elif args[i].startswith("-"):
                    i += 1
                else:
                    out = args[i:]
                    break
            return _exec(out)
        if name == "faketime":
            return _exec(args[1:])
        return _exec(_after_opts(args, takes))
    if name in ("uvx", "pipx", "conda", "mamba", "uv", "pdm", "hatch", "poetry"):
        rest = args
        if name == "pipx" and rest[:1] == ["run"]:
            rest = rest[1:]
        if name in ("conda", "mamba") and rest[:1] == ["run"]:
            rest = _after_opts(rest[1:], ("-n", "--name", "-p", "--prefix"))
        if name in ("uv", "pdm", "hatch", "poetry") and rest[:1] == ["run"]:
            rest = rest[1:]
        return _exec(_after_opts(rest, ("--from", "--with", "-n", "--name", "-p", "--python")))
    if name == "docker":
        if args[:1] == ["run"]:
            rest = _after_opts(args[1:], ("-v", "--volume", "-w", "--workdir", "-e", "--env", "--name",
                                          "--entrypoint", "-u", "--user", "--network"))
            return _exec(rest[1:])   # drop the image name
        return 1
    if name in ("hyperfine", "watchexec", "entr"):
        cmds = list(_after_opts(args, ("-r", "--runs", "-w", "--warmup", "-e", "--exts", "-w",
                                             "--watch")))
        if name == "entr":
            return _exec(cmds)
        return _run_lines([" ".join(shlex.quote(c) for c in cmds)] if name == "watchexec" else cmds[:1])
    if name == "expect":
        if args[:1] == ["-c"] and len(args) > 1:
            m = re.search(r"spawn\s+(.+?)(;|$|\n)", args[1])
            return subprocess.call(shlex.split(m.group(1))) if m else 0
        return 0
    if name == "just":
        recipes = _recipes("justfile", lambda line: line.split(":", 1)[0].split()[0])
        if any(a in ("--list", "-l", "--summary", "--show", "-s", "--dry-run", "-n") for a in args):
            print(" ".join(recipes))
            return 0
        target = next((a for a in args if not a.startswith("-")), None) or next(iter(recipes), None)
        return _run_lines(recipes.get(target, []))
    if name == "task":
        try:
            text = open("Taskfile.yml").read()
        except OSError:
            return 1
        target = next((a for a in args if not a.startswith("-")), "default")
        m = re.search(rf"^  {re.escape(target)}:\n(.*?)(?=^  \S|\Z)", text, re.S | re.M)
        lines = re.findall(r"^\s+- (.+)$", m.group(1), re.M) if m else []
        return _run_lines([x.strip("'\"") for x in lines])
    if name == "tox":
        cp = configparser.ConfigParser()
        cp.read("tox.ini")
        env = args[args.index("-e") + 1] if "-e" in args else None
        sec = f"testenv:{env}" if env and cp.has_section(f"testenv:{env}") else "testenv"
        return _run_lines([x for x in cp.get(sec, "commands", fallback="").splitlines() if x.strip()])
    if name == "nox":
        text = open("noxfile.py").read() if os.path.exists("noxfile.py") else ""
        sess = args[args.index("-s") + 1] if "-s" in args else None
        blocks = re.split(r"@nox\.session", text)
        for b in blocks[1:]:
            m = re.search(r"def (\w+)\(", b)
            if m and (sess is None or m.group(1) == sess):
                for call in re.findall(r"session\.run\(([^)]*)\)", b):
                    words = [w.strip().strip("'\"") for w in call.split(",") if w.strip()]
                    rc = subprocess.call(words)
                    if rc:
                        return rc
        return 0
    if name in ("yarn", "pnpm"):
        sub = args[0] if args else "install"
        script = args[1] if sub == "run" and len(args) > 1 else sub
        lines = _package_script(script)
        if not lines and sub not in ("install", "run"):
            return _exec(["npx", *args])
        return _run_lines(lines)
    if name == "pre-commit":
        text = open(".pre-commit-config.yaml").read() if os.path.exists(".pre-commit-config.yaml") else ""
        hooks = re.findall(r"-\s*id:\s*(\S+)(?:.|\n)*?entry:\s*(.+)$", text, re.M)
        wanted = [a for a in args[1:] if not a.startswith("-")] if args[:1] == ["run"] else []
        return _run_lines([entry for hid, entry in hooks if not wanted or hid in wanted])
    print(f"stand-in {name}: nothing to do", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
