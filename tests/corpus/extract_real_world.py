#!/usr/bin/env python3
"""Extract real-world shell commands for the corpus (not a test; run by hand to refresh
tests/corpus/real_world.json):

- tldr-pages examples of common development commands, placeholders filled;
- `run:` steps of the GitHub Actions workflows of a few public projects, with GitHub
  expressions (`${{ matrix.x }}`) replaced by a plain word.

The fetched repositories are read from their mirrors (git directories); only the
extracted commands are committed, each with its source (repository, commit, path).

    .venv/bin/python tests/corpus/extract_real_world.py /work/.mirror > tests/corpus/real_world.json
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

TLDR_PAGES = """
git git-add git-commit git-status git-log git-diff git-branch git-checkout git-switch git-restore git-reset
git-stash git-rebase git-merge git-pull git-push git-fetch git-clone git-remote git-tag git-show git-blame
git-cherry-pick git-clean git-config git-worktree git-bisect git-grep git-rm git-mv git-init git-describe
git-reflog git-shortlog git-archive git-submodule git-sparse-checkout git-revert git-format-patch git-am
docker docker-run docker-build docker-ps docker-exec docker-compose docker-images docker-logs docker-pull
docker-rm docker-rmi docker-volume docker-network docker-inspect docker-system
npm npm-install npm-run npm-test npm-ci npm-update npm-ls npm-outdated npm-init npm-audit npm-version npx
yarn pnpm bun node
cargo cargo-build cargo-test cargo-run cargo-check cargo-clippy cargo-fmt cargo-doc cargo-add cargo-update
cargo-tree cargo-install cargo-bench cargo-clean cargo-new rustc rustup rustfmt
make cmake ninja just meson
python python3 pip pip3 pytest tox poetry uv pipx virtualenv black ruff mypy
go go-build go-test go-run go-mod go-get go-fmt go-vet
gcc clang ld ar
find grep sed awk tar zip unzip gzip xargs sort uniq cut tr wc head tail cat less diff patch
ls cp mv rm mkdir rmdir ln chmod chown touch du df stat file realpath basename dirname tee
ssh scp rsync curl wget jq yq
ps kill pkill top htop free uptime nproc env export printenv which whereis
systemctl journalctl
sleep date time timeout nice nohup watch crontab
kubectl helm terraform ansible
openssl base64 sha256sum md5sum
""".split()

SUBS = [
    (r"path/to/file_or_directory", "src"), (r"path/to/directory", "src"), (r"path/to/file", "notes.txt"),
    (r"path/to/", "src/"),
]


def fill(cmd: str) -> str:
    def one(m):
        inner = m.group(1)
        if inner.startswith("[") and inner.endswith("]") and "|" in inner:
            alts = inner[1:-1].split("|")
            return alts[-1]
        inner = inner.replace("...", "").strip()
        low = inner.lower()
        if low in ("command", "program", "cmd", "command_to_run", "arguments_source", "executable"):
            return "ls"
        if re.fullmatch(r"[0-9.]+", inner):
            return inner
        words = set(re.split(r"[^a-z]+", low))
        if words & {"count", "number", "seconds", "port", "size", "depth", "jobs", "lines", "minutes",
                    "amount", "pid", "level", "n", "id", "timeout", "percentage", "width"}:
            return "1234" if "pid" in words else "4"
        for pat, rep in SUBS:
            if pat in inner:
                return inner.replace(pat, rep.rstrip("/") + "/" if rep.endswith("/") else rep).replace(" ", "_")
        return re.sub(r"[^A-Za-z0-9_./:=@+-]", "_", inner) or "x"
    return re.sub(r"\{\{(.*?)\}\}", one, cmd)


def tldr(mirror: str) -> list:
    repo = os.path.join(mirror, "tldr-pages+tldr", "repo")
    sha = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = []
    for page in TLDR_PAGES:
        for area in ("common", "linux"):
            path = f"pages/{area}/{page}.md"
            p = subprocess.run(["git", "-C", repo, "show", f"{sha}:{path}"], capture_output=True, text=True)
            if p.returncode != 0:
                continue
            for line in p.stdout.splitlines():
                if line.startswith("`") and line.endswith("`") and len(line) > 2:
                    cmd = fill(line[1:-1])
                    if re.match(r"^[A-Za-z_./$]", cmd):   # key bindings (`<F>`, `:q`) are not commands
                        out.append({"source": f"tldr-pages/tldr@{sha[:12]}:{path}", "command": cmd})
            break
    return out


def workflows(mirror: str) -> list:
    out = []
    for d in sorted(os.listdir(mirror)):
        if d.startswith("tldr-pages"):
            continue
        repo = os.path.join(mirror, d, "repo")
        sha = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        files = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", sha],
                               capture_output=True, text=True).stdout.split()
        for path in files:
            if not re.match(r"^\.github/workflows/.*\.ya?ml$", path):
                continue
            text = subprocess.run(["git", "-C", repo, "show", f"{sha}:{path}"], capture_output=True,
                                  text=True).stdout
            for block in run_blocks(text):
                block = re.sub(r"\$\{\{\s*([^}]*?)\s*\}\}",
                               lambda m: re.sub(r"[^A-Za-z0-9_]", "_", m.group(1).split(".")[-1].split(" ")[0]) or "x",
                               block).strip()
                if block:
                    out.append({"source": f"{d.replace('+', '/')}@{sha[:12]}:{path}", "command": block})
    return out


def run_blocks(text: str) -> list:
    """The `run:` values of a workflow file (block scalars and one-liners)."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(?:-\s+)?run:\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        val = m.group(2).strip()
        if val[:1] in ("|", ">"):
            body = []
            i += 1
            block_indent = None
            while i < len(lines):
                ln = lines[i]
                if ln.strip() == "":
                    body.append("")
                    i += 1
                    continue
                ind = len(ln) - len(ln.lstrip())
                if ind <= indent:
                    break
                if block_indent is None:
                    block_indent = ind
                body.append(ln[block_indent:])
                i += 1
            text_block = "\n".join(body).strip("\n")
            if val[0] == ">":
                text_block = " ".join(x for x in text_block.split("\n") if x.strip())
            out.append(text_block)
            continue
        if val.startswith(("'", '"')) and val.endswith(val[0]) and len(val) > 1:
            val = val[1:-1]
        out.append(val)
        i += 1
    return out


def classify(items: list) -> None:
    """Judge each command as the corpus test does (main agent and subagent, in a session whose
    exec-time shims are on PATH); what a guard refuses is kept with the reason it is refused by
    design, so the test can tell a new refusal (a false positive) from a known one. What passes
    only because reading left it to the shims (refused without them) is marked ``deferred``."""
    import tempfile
    import tomllib

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    from swarmgate.config import Config, validate
    from tests.corpus import session
    from tests.corpus.model import CONFIG

    tmp = tempfile.mkdtemp()
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    os.environ["SWARMGATE_STATE_DIR"] = os.path.join(tmp, "state")
    raw = tomllib.loads(CONFIG)
    cfg = Config(validate(raw), None, repo, raw)
    session.with_shims(cfg, repo, os.path.join(tmp, "env-file.sh"))
    for it in items:
        it["expect"] = "pass"
        it.pop("why", None)
        it.pop("deferred", None)
        got = session.refusal(repo, cfg, it["command"])
        if got is None:
            # passes with the shims on PATH: refused without them? then reading left it to exec time
            got = session.refusal(repo, cfg, it["command"], session.NO_SHIMS_SESSION)
            if got is not None:
                it["deferred"] = "X01"
                it["why"] = _why(got[1])
            continue
        it["expect"] = got[0]
        it["why"] = _why(got[1])


def _why(f) -> str:
    m = f.message
    if "heavy test refused" in m:
        return "a heavy pattern, written out"
    if f.code == "T01":
        return "T01 by design (seeds/003: every crontab is refused): crontab installs a timer table"
    if f.code == "G01":
        return "G01 by design: a subagent clearing the environment clears SWARMGATE_*"
    if "command name is dynamic" in m or "eval" in m:
        return "SPEC 4.3: the command name (or eval text) comes from outside the command"
    if "could make it the heavy pattern" in m:
        return "issue 11: an argument that cannot be read could complete a heavy pattern"
    if "cannot tell which directory" in m:
        return "make in a directory that cannot be named: the Makefile is unknown"
    return "unexpected"


def main() -> int:
    mirror = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"
    items = tldr(mirror) + workflows(mirror)
    seen = set()
    uniq = []
    for it in items:
        if it["command"] in seen:
            continue
        seen.add(it["command"])
        uniq.append(it)
    classify(uniq)
    json.dump(uniq, sys.stdout, indent=1, ensure_ascii=False)
    print()
    print(f"{len(uniq)} commands", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
