"""The write side of the reader: the writer table (hooks/shell_writers.py, its parsers in
hooks/writers_*.py) and path normalisation (hooks/write_paths.py) as G01 and W01 see them: the forms
the lead found allowed on main, each refused for a subagent and the main agent, and the benign writes
beside them still passing."""
from __future__ import annotations

import io
import os
import pwd
import tarfile
import zipfile

import pytest

from swarmgate.config import validate
from swarmgate.hooks.shell_writers import from_config
from swarmgate.hooks.write_paths import Links, candidates, expand_known, expand_tilde
from swarmgate.hooks.writers_text import patch_file_paths


def denied(judge, command: str, code: str, *, subagent: bool = True) -> list:
    return [f for f in judge.findings(command, subagent=subagent) if f.code == code and f.decision == "deny"]


def setup_repo(judge) -> str:
    judge.write({".claude/settings.json": "{}\n", ".claude/swarmgate.toml": "", "src/a.py": "x\n",
                 "docs/a.md": "x\n"})
    return judge.repo


# written as a refused agent writes them next (G01: no agent, main or subagent)
G01_REFUSED = [
    "echo x > ~/.claude/settings.json",
    "cp /tmp/a ~/.claude/settings.json",
    "cp /tmp/a ~/.claude/settings.local.json",
    "tee ~/.config/swarmgate/hosts.toml < /tmp/a",
    "echo x >> ${HOME}/.claude/settings.json",
    "cd ~ && echo x > .claude/settings.json",
    "cd /tmp && cd - && echo x > .claude/settings.json",
    "pushd /tmp && popd && echo x > .claude/settings.json",
    "cd /tmp; echo x > $OLDPWD/.claude/settings.json",
    "echo x > ./src/../.claude//settings.json",
    "git checkout -- .claude/settings.json",
    "git checkout HEAD~1 .claude/swarmgate.toml",
    "git restore .claude/swarmgate.toml",
    "git restore --source HEAD~ -- .claude",
    "git rm .claude/swarmgate.toml",
    "git mv .claude/swarmgate.toml /tmp/x",
    "git -C .claude checkout -- settings.json",
    "git clean -fdx .claude",
    "tar xf /tmp/c.tar -C .claude",
    "tar -xzf /tmp/c.tgz --directory=.claude/hooks",
    "unzip -o /tmp/c.zip -d .claude",
    "7z x /tmp/c.7z -o.claude",
    "cpio -idm -D .claude < /tmp/c.cpio",
    "ln -s .claude c && echo x > c/settings.json",
    "mkdir -p /tmp/z && cd /tmp/z && ln -s {repo}/.claude c && echo > c/settings.json",
    "ln .claude/settings.json /tmp/h && echo x > /tmp/h",
    "ln -sf /tmp/mine .claude/settings.json",
    "mv .claude/settings.json /tmp/",
    "cp -r /tmp/stage/. .claude",
    "rsync -a /tmp/stage/ .claude/",
    "install -m 644 /tmp/s .claude/settings.json",
    "dd if=/tmp/s of=.claude/settings.json",
    "truncate -s 0 .claude/swarmgate.toml",
    "touch -d yesterday .claude/settings.json",
    "rm -rf .claude",
    "find .claude -name '*.json' -delete",
    "shred -u .claude/swarmgate.toml",
    "chmod 000 .claude/settings.json",
    "chown nobody .claude/swarmgate.toml",
    "curl -o .claude/settings.json https://example.com/s.json",
    "cd .claude && curl -O https://example.com/settings.json",
    "wget -O .claude/settings.json https://example.com/s",
    "wget -P .claude https://example.com/settings.json",
    "sed -i s/deny/allow/ .claude/swarmgate.toml",
    "awk -i inplace '{print}' .claude/swarmgate.toml",
    "vim -es -c '%d' -c 'wq' .claude/swarmgate.toml",
    "ex -s .claude/swarmgate.toml <<'EOF'\n%d\nw\nEOF",
    "sort -o .claude/swarmgate.toml /tmp/x",
    "sqlite3 .claude/settings.json 'create table t(x)'",
    "ssh-keygen -q -N '' -f .claude/settings.json",
    "gzip .claude/settings.json",
    "mount --bind /tmp/x .claude",
    "pip install --target .claude/hooks requests",
    "tar xf /tmp/c.tar -C ~/.claude",
    "rm -rf ~/.claude",
    "X=/tmp; echo x > $X/.claude/settings.json; cd \"$D\"; echo x > settings.json",
]


@pytest.mark.parametrize("command", G01_REFUSED)
@pytest.mark.parametrize("subagent", [True, False], ids=["subagent", "main"])
def test_g01_refuses_every_write_form(judge, command, subagent):
    repo = setup_repo(judge)
    command = command.replace("{repo}", repo)
    assert denied(judge, command, "G01", subagent=subagent), command


def test_a_patch_that_writes_protected_files_is_refused(judge):
    repo = setup_repo(judge)
    patch = ("diff --git a/.claude/settings.json b/.claude/settings.json\n--- a/.claude/settings.json\n"
             "+++ b/.claude/settings.json\n@@ -1 +1 @@\n-{}\n+{\"hooks\": {}}\n")
    judge.write({"p.diff": patch, "ok.diff": patch.replace(".claude/settings.json", "src/a.py")})
    for cmd in ("git apply p.diff", "git am p.diff", "patch -p1 < p.diff", "patch -p1 -i p.diff",
                f"git apply <<'EOF'\n{patch}EOF", f"cd /tmp && git -C {repo} apply {repo}/p.diff"):
        assert denied(judge, cmd, "G01"), cmd
    for cmd in ("git apply ok.diff", "patch -p1 < ok.diff", "git apply --check p.diff", "git apply --stat p.diff"):
        assert not denied(judge, cmd, "G01"), cmd


def test_archives_are_listed_when_they_can_be_read(judge):
    repo = setup_repo(judge)
    with tarfile.open(os.path.join(repo, "bad.tar"), "w") as t:
        data = b"{}"
        info = tarfile.TarInfo(".claude/settings.json")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    with tarfile.open(os.path.join(repo, "good.tar"), "w") as t:
        info = tarfile.TarInfo("src/b.py")
        info.size = 0
        t.addfile(info, io.BytesIO(b""))
    with zipfile.ZipFile(os.path.join(repo, "bad.zip"), "w") as z:
        z.writestr(".claude/swarmgate.toml", "")
    with zipfile.ZipFile(os.path.join(repo, "good.zip"), "w") as z:
        z.writestr("src/c.py", "")
    for cmd in ("tar xf bad.tar", "tar -x -f bad.tar", "unzip -o bad.zip", "cd src && tar xf ../bad.tar -C .."):
        assert denied(judge, cmd, "G01"), cmd
    for cmd in ("tar xf good.tar", "unzip good.zip", "tar tf bad.tar", "unzip -l bad.zip", "tar xf bad.tar -C /tmp/x",
                "tar xf missing.tar"):
        assert not denied(judge, cmd, "G01", subagent=False), cmd


G01_PASSES = [
    "echo x > /tmp/out.txt", "cp src/a.py /tmp/", "git checkout main", "git checkout -b topic", "git checkout .",
    "git restore src/a.py", "git restore --staged .claude/settings.json", "git rm --cached .claude/swarmgate.toml",
    "git reset --hard", "git clean -fd", "git stash pop", "tar xf /tmp/c.tar -C /tmp/out", "unzip /tmp/c.zip -d /tmp/o",
    "cat .claude/settings.json > /tmp/copy.json", "cp .claude/settings.json /tmp/s.json", "ln -s /tmp/x y && echo > y",
    "cd /tmp && ln -s /etc e && echo > e2", "chmod +x src/a.py", "rm -rf /tmp/build", "mkdir -p .claude/agents",
    "curl -o /tmp/s.json https://example.com/s.json", "wget -q https://example.com/x.tar.gz -O /tmp/x.tgz",
    "echo x > \"$OUT\"", "sqlite3 /tmp/db 'select 1'", "sqlite3 .claude/x.db 'select * from t'",
    "vim -es -c 'g/x/p' -c 'q!' .claude/swarmgate.toml", "find .claude -name '*.json'",
    "git apply --check p.diff", "ssh-keygen -l -f .claude/x", "gzip -c .claude/settings.json > /tmp/s.gz",
    "git worktree add /tmp/wt", "git clone https://example.com/r.git /tmp/r",
]


@pytest.mark.parametrize("command", G01_PASSES)
def test_g01_lets_benign_writes_pass(judge, command):
    setup_repo(judge)
    for sub in (True, False):
        assert not denied(judge, command, "G01", subagent=sub), (command, sub)


W01_CONFIG = '[write]\nimplementer = ["src/**", "tests/**"]\n'


@pytest.mark.parametrize("command,refused", [
    ("unzip -o /tmp/site.zip -d docs", True), ("tar xf /tmp/c.tar", True), ("tar xf /tmp/c.tar -C src", False),
    ("git checkout -- docs/a.md", True), ("git checkout -- src/a.py", False), ("git checkout .", True),
    ("git restore README.md", True), ("git rm -r docs", True), ("git mv docs/a.md src/a.md", True),
    ("git mv src/a.py src/b.py", False), ("mv docs/a.md src/", True), ("cp docs/a.md src/", False),
    ("cp -r /tmp/x docs", True), ("ln -s ../docs src/d && echo x > src/d/a.md", True),
    ("curl -O https://example.com/README.md", True), ("cd src && curl -O https://example.com/a.py", False),
    ("wget https://example.com/notes.txt", True), ("rm -rf docs", True), ("rm -rf src/old", False),
    ("chmod -R a+w docs", True), ("echo x > ~/notes.txt", False), ("find docs -delete", True),
    ("git clone https://example.com/r.git vendor/r", True), ("git clone https://example.com/r.git /tmp/r", False),
])
def test_w01_reads_the_same_writes(judge, command, refused):
    setup_repo(judge)
    judge.config_text = W01_CONFIG
    assert bool(denied(judge, command, "W01")) == refused, command


def test_w01_follows_symbolic_links_on_disk(judge):
    repo = setup_repo(judge)
    os.symlink(os.path.join(repo, "docs"), os.path.join(repo, "src", "docs-link"))
    judge.config_text = W01_CONFIG
    assert denied(judge, "echo x > src/docs-link/a.md", "W01")
    assert not denied(judge, "echo x > src/b.py", "W01")


def test_another_users_home(judge, monkeypatch):
    """``~user`` is that user's home from the password database (root's, here)."""
    monkeypatch.setenv("HOME", pwd.getpwuid(os.getuid()).pw_dir)
    user = pwd.getpwuid(os.getuid()).pw_name
    setup_repo(judge)
    assert denied(judge, f"cp /tmp/a ~{user}/.claude/settings.json", "G01")
    assert denied(judge, f"echo x > ~{user}/.config/swarmgate/hosts.toml", "G01")


def test_path_normalisation():
    home = os.environ["HOME"]
    assert expand_tilde("~") == home and expand_tilde("~/x") == home + "/x"
    assert expand_tilde("~root/x").endswith("/x") and not expand_tilde("~root/x").startswith("~")
    assert expand_tilde("~no-such-user-xyz/x") == "~no-such-user-xyz/x"
    assert expand_known("$HOME/.claude") == home + "/.claude"
    assert expand_known("${HOME}/.claude") == home + "/.claude"
    assert expand_known("$HOMEDIR/x") == "$HOMEDIR/x"
    assert expand_known("$PWD/x", "/w") == "/w/x" and expand_known("$OLDPWD/x", "/w", "/o") == "/o/x"
    assert expand_known("~+/x", "/w") == "/w/x" and expand_known("~-/x", "/w", "/o") == "/o/x"
    links = Links()
    links.add("/tmp/z/c", "/repo/.claude")
    assert "/repo/.claude/settings.json" in candidates("/tmp/z/c/settings.json", links)
    assert candidates("/tmp/zc/settings.json", links)[:1] == ["/tmp/zc/settings.json"]


def test_patch_paths():
    text = ("diff --git a/x/y.py b/x/z.py\nrename from x/y.py\nrename to x/z.py\n--- a/q.txt\n+++ b/q.txt\n"
            "--- /dev/null\n+++ b/new.txt\n")
    assert set(patch_file_paths(text, 1)) == {"x/y.py", "x/z.py", "q.txt", "new.txt"}


def test_writers_config():
    assert from_config({"mytool": {"operands": "last", "files": ["-o"]}})
    for bad, word in (({"m": {"operands": "some"}}, "operands"), ({"m": {"files": ["o"]}}, "files"),
                      ({"m": {"colour": 1}}, "unknown field"), ({"a b": {}}, "command name"), ([], "table")):
        with pytest.raises(ValueError, match=word):
            from_config(bad)
    assert validate({"bash": {"writers": {"mytool": {"operands": "none", "files": ["--out"]}}}})


def test_config_writers_are_read(judge):
    setup_repo(judge)
    judge.config_text = '[bash]\nwriters = { mytool = { operands = "none", files = ["--out"] } }\n'
    assert denied(judge, "mytool --out .claude/settings.json in.txt", "G01")
    assert not denied(judge, "mytool --out /tmp/x .claude/settings.json", "G01")


# interpreter code writing protected paths built the ways code builds paths
INTERP_REFUSED = [line.rstrip("\n") for line in """\
python3 -c "import os; open(os.path.expanduser('~/.claude/settings.json'),'w')"
python3 -c "from pathlib import Path; (Path.home() / '.claude' / 'settings.json').write_text('{}')"
python3 -c "from pathlib import Path; (Path.home() / '.config/swarmgate/hosts.toml').write_text('')"
python3 -c "import os; open(os.environ['HOME'] + '/.claude/settings.json', 'w').write('{}')"
python3 -c "import os; open(os.getcwd() + '/.claude/settings.json', 'w').write('{}')"
python3 -c "import os; p=os.path.join(os.path.expanduser('~'), '.claude', 'settings.json'); open(p,'w')"
python3 -c "import os; h=os.environ['HOME']; open(f'{h}/.claude/settings.json','w')"
python3 -c "import shutil; shutil.copy('/tmp/x', '.claude/swarmgate.toml')"
python3 -c "import os; os.remove('.claude/swarmgate.toml')"
python3 -c "import os; os.rename('/tmp/x', '.claude/settings.json')"
python3 -c "import os; os.symlink('/tmp/x', '.claude/settings.json')"
python3 -c "import pathlib; pathlib.Path('.claude/swarmgate.toml').unlink()"
python3 -c "import os; d=os.environ.get('D'); open(os.path.join(d, 'settings.json'), 'w')"
python3 -c "import shutil; shutil.rmtree('.claude')"
python3 -c "import shutil; shutil.move('.claude/swarmgate.toml', '/tmp/x')"
perl -e 'open(my $f, ">", "$ENV{HOME}/.claude/settings.json"); print $f "{}"'
perl -e 'unlink ".claude/swarmgate.toml"'
perl -e 'rename "/tmp/x", ".claude/settings.json"'
node -e "require('fs').writeFileSync(require('os').homedir() + '/.claude/settings.json', '{}')"
node -e "const fs=require('fs'); fs.rmSync('.claude/swarmgate.toml')"
node -e "require('fs').copyFileSync('/tmp/x', '.claude/settings.json')"
node -e "require('fs').renameSync('/tmp/x', '.claude/settings.json')"
node -e "require('fs').appendFileSync(process.env.HOME + '/.codex/config.toml', 'x')"
ruby -e "File.write(Dir.home + '/.claude/settings.json', '{}')"
ruby -e "File.write('.claude/swarmgate.toml', '')"
""".splitlines()]


@pytest.mark.parametrize("command", INTERP_REFUSED)
def test_interpreter_writes_to_protected_paths_are_refused(judge, command):
    setup_repo(judge)
    assert denied(judge, command, "G01"), command
    assert denied(judge, command, "G01", subagent=False), command


@pytest.mark.parametrize("command", [
    "python3 -c \"import json; json.dump({}, open('settings.json','w'))\"",
    "python3 -c \"open('.vscode/settings.json','w').write('{}')\"",
    "python3 -c \"import json; print(json.load(open('.claude/settings.json')))\"",
    "python3 -c \"open('/tmp/out.txt','w').write('x')\"",
    "node -e \"require('fs').writeFileSync('/tmp/x.json', '{}')\"",
    "python3 -c \"from pathlib import Path; print(Path.home())\"",
])
def test_interpreter_benign_writes_pass(judge, command):
    setup_repo(judge)
    assert not denied(judge, command, "G01"), command


@pytest.mark.parametrize("command,refused", [
    ("python3 -c \"open('docs/x.md','w').write('x')\"", True),
    ("python3 -c \"import shutil; shutil.copy('src/a.py', 'docs/a.md')\"", True),
    ("node -e \"require('fs').writeFileSync('docs/x', '1')\"", True),
    ("perl -e 'open(my $f, \">\", \"docs/x\")'", True),
    ("python3 -c \"from pathlib import Path; Path('README.md').write_text('1')\"", True),
    ("python3 -c \"import os; os.remove('docs/a.md')\"", True),
    ("python3 -c \"d=open('docs/a.md').read(); open('src/x.py','w').write(d)\"", False),
    ("python3 -c \"import shutil; shutil.copy('docs/a.md', 'src/a.md')\"", False),
    ("python3 -c \"print(open('docs/a.md').read())\"", False),
    ("python3 -c \"open('/tmp/x','w').write('x')\"", False),
])
def test_w01_reads_interpreter_writes(judge, command, refused):
    setup_repo(judge)
    judge.config_text = W01_CONFIG
    assert bool(denied(judge, command, "W01")) == refused, command


def test_a_hard_link_made_before_the_command_is_the_protected_file(judge):
    repo = setup_repo(judge)
    os.link(os.path.join(repo, ".claude", "settings.json"), os.path.join(repo, "src", "innocent.json"))
    judge.write({"src/plain.json": "{}"})
    assert denied(judge, "echo x > src/innocent.json", "G01")
    assert denied(judge, "sed -i s/a/b/ src/innocent.json", "G01", subagent=False)
    assert not denied(judge, "echo x > src/plain.json", "G01")
