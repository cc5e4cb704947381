"""Which files a shell command reads or sends away, read from the parsed command tree (K01, K02 in
hooks/secret_guards.py). Parsing only: whether a file is a secret is hooks/secret_paths.py's.

- ``reads(cmd)``: [(word, how)] of the files a simple command reads: its operands (programs that
  only look at names, modes or sizes excepted: ls, stat, rm, chmod, touch, mv ...), the copies'
  sources (cp, rsync, scp, install, ln: not the destination), `dd if=`, `source FILE`, and its input
  redirections (`< FILE`); `ssh -i KEY` and the like use a key without showing it and are not reads,
  nor is `openssl ... -out FILE` (its result goes to the file, not to the screen);
- ``sends(cmd)``: [(word, how)] of the files a simple command sends over the network: curl's
  `-F name=@FILE`, `-d @FILE`, `--data-binary @FILE`, `-T FILE`, wget's `--post-file`, scp's and
  rsync's sources towards a remote, a network program's input redirection (`nc host 80 < FILE`),
  and `git add FILE` (committed, a file leaves with the next push);
- ``NETWORK``: the programs that send; a command that reads a secret and, in the same call, runs
  one of them (a pipe, `$(cat .env)` in curl's arguments) sends it.
"""
from __future__ import annotations

NON_READERS = frozenset((
    "ls", "stat", "test", "[", "[[", "touch", "rm", "rmdir", "mkdir", "chmod", "chown", "chgrp", "du",
    "realpath", "readlink", "dirname", "basename", "echo", "printf", "ssh-add", "mv", "find", "locate",
    "which", "type", "export", "unset", "cd", "pushd", "popd", "sha256sum", "sha1sum", "md5sum", "sha512sum",
    "b2sum", "cksum", "shred", "unlink", "truncate", "true", ":", "git", "exit", "file", "wc", "lsattr",
    "chattr", "setfacl", "getfacl", "namei", "tree", "mktemp", "install", "trash", "gio", "ssh-keygen",
    "ssh", "sftp", "command", "builtin", "exec", "eval", "timeout", "nice", "env", "sudo", "xargs",
    "swarmgate", "remind", "run-with-memory-cap", "cmp", "df", "mount", "umount", "sync", "fuser", "lsof",
    "docker", "kubectl", "aws", "gcloud", "az", "npm", "pip", "uv", "cargo", "make",
))
# programs whose last operand is where they copy to (not read)
# (ln: a link to a secret is a way to read it under another name, so its source counts as read)
COPIERS = frozenset(("cp", "rsync", "scp", "install", "rclone", "ln"))
# options whose value is a key the program uses without showing it
KEY_OPTIONS = {"ssh": ("-i", "-F"), "scp": ("-i", "-F"), "sftp": ("-i", "-F"), "rsync": (),
               "git": (), "ssh-keygen": ("-f",), "curl": ("--key", "--cert", "-E", "--cacert", "--netrc-file"),
               "openssl": ()}
NETWORK = frozenset(("curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "rsync", "ssh",
                     "http", "https", "xh", "httpie", "ftp", "lftp", "sendmail", "mail", "mailx", "mutt",
                     "rclone", "gsutil", "s3cmd", "aria2c", "openssl", "gh", "ncftp", "tftp", "smbclient",
                     "rcp", "nsupdate", "dig", "python-requests"))
_CURL_DATA = ("-d", "--data", "--data-binary", "--data-urlencode", "--data-ascii", "--json")
_CURL_FORM = ("-F", "--form", "--form-string")
_CURL_UPLOAD = ("-T", "--upload-file")
_REDIRECT_READS = ("<", "<>")


def _operands(cmd) -> list:
    """The words of ``cmd`` that are not options (values of `-x VALUE` options are kept: a reader
    reads what `grep -f FILE` names too), after `--` all of them."""
    out = []
    skip_next = False
    keys = KEY_OPTIONS.get(cmd.name, ())
    after = False
    for a in cmd.args:
        if skip_next:
            skip_next = False
            continue
        if after:
            out.append(a)
            continue
        if a == "--":
            after = True
            continue
        if a in keys:
            skip_next = True
            continue
        if a.startswith("-") and len(a) > 1:
            if "=" in a:
                out.append(a.split("=", 1)[1])
            continue
        out.append(a)
    return out


# commands that print a credential they hold (program, words that must all be among its arguments)
PRINTERS = (
    ("gh", ("auth", "token")), ("gh", ("--show-token",)), ("aws", ("configure", "export-credentials")),
    ("aws", ("configure", "get", "aws_secret_access_key")), ("aws", ("configure", "get", "aws_session_token")),
    ("gcloud", ("print-access-token",)), ("gcloud", ("print-identity-token",)),
    ("gcloud", ("print-refresh-token",)), ("az", ("get-access-token",)), ("gpg", ("--export-secret-keys",)),
    ("gpg", ("--export-secret-subkeys",)), ("git", ("credential", "fill")), ("kubectl", ("view", "--raw")),
    ("security", ("find-generic-password", "-w")), ("security", ("find-internet-password", "-w")),
    ("heroku", ("auth:token",)), ("doctl", ("auth", "token")),
)
# words one of which a printer's command holds (the gate's cheap test: hooks/guard_gates.py keeps a copy)
PRINTER_MARKERS = ("token", "credential", "export-secret", "--raw", "-password", "secret_access_key")


def printed_secret(cmd) -> str | None:
    """What credential ``cmd`` prints (`gh auth token`, `gcloud auth print-access-token`), or None."""
    args = set(cmd.args)
    for name, words in PRINTERS:
        if cmd.name == name and all(w in args for w in words):
            return f"`{name} {' '.join(words)}` prints a credential"
    return None


def redirect_reads(cmd) -> list:
    out = []
    for r in getattr(cmd, "redirects", ()) or ():
        if getattr(r, "op", "") in _REDIRECT_READS and isinstance(r.target, str) and r.target:
            out.append((r.target, f"redirection `{r.op} {r.target}`"))
    return out


def reads(cmd) -> list:
    """[(word, how)] of the files ``cmd`` reads (module doc)."""
    out = redirect_reads(cmd)
    name = cmd.name
    if name == "xargs":   # -a FILE: its lines become the arguments of what it runs
        return out + [(v, f"`xargs -a {v}`") for v in _values(cmd.args, ("-a", "--arg-file"))]
    if not cmd.words or name in NON_READERS and name not in COPIERS:
        return out
    if name == "dd":
        return out + [(a[3:], f"`dd {a}`") for a in cmd.args if a.startswith("if=")]
    ops = _operands(cmd)
    if name in COPIERS and len(ops) > 1:
        ops = ops[:-1]
    if name == "curl":
        return out + [(w, f"`curl {how}`") for w, how in _curl_files(cmd)]
    if name == "openssl" and any(a in ("-out", "-noout") or a.startswith("-out=") for a in cmd.args):
        return out   # it uses the key and writes its result to a file: nothing of the key is shown
    return out + [(w, f"`{name} {w}`") for w in ops]


def _values(args: list, options: tuple) -> list:
    """The values of ``options`` in ``args`` (`-a F`, `--arg-file=F`, `-aF`)."""
    out = []
    for k, a in enumerate(args):
        for o in options:
            if a == o and k + 1 < len(args):
                out.append(args[k + 1])
            elif o.startswith("--") and a.startswith(o + "="):
                out.append(a[len(o) + 1:])
            elif not o.startswith("--") and a.startswith(o) and len(a) > len(o):
                out.append(a[len(o):])
    return out


def _curl_files(cmd) -> list:
    """[(file, how)] curl sends: `-F name=@FILE`/`<FILE`, `-d @FILE`, `-T FILE`, `file://` URLs."""
    out = []
    args = cmd.args
    for k, a in enumerate(args):
        opt, val = a, None
        if "=" in a and a.startswith("--"):
            opt, val = a.split("=", 1)
        elif a[:2] in ("-d", "-F", "-T") and len(a) > 2:
            opt, val = a[:2], a[2:]
        if val is None and opt in (*_CURL_DATA, *_CURL_FORM, *_CURL_UPLOAD) and k + 1 < len(args):
            val = args[k + 1]
        if val is None:
            if a.startswith("file://"):
                out.append((a[7:], a))
            continue
        if opt in _CURL_UPLOAD:
            out.append((val, f"{opt} {val}"))
        elif opt in _CURL_FORM:
            v = val.split("=", 1)[1] if "=" in val else val
            if v[:1] in ("@", "<"):
                out.append((v[1:].split(";", 1)[0], f"{opt} {val}"))
        elif opt in _CURL_DATA:
            v = val
            if opt == "--data-urlencode" and "@" in v and not v.startswith("@"):
                v = "@" + v.split("@", 1)[1]
            if v.startswith("@") and v != "@-":
                out.append((v[1:], f"{opt} {val}"))
    return out


def _remote(word: str) -> bool:
    """An scp/rsync operand on another machine: `host:path`, `user@host:path`, `rsync://`."""
    if word.startswith(("rsync://", "scp://", "sftp://")):
        return True
    k = word.find(":")
    return k > 0 and "/" not in word[:k]


def sends(cmd) -> list:
    """[(word, how)] of the files ``cmd`` sends over the network (module doc)."""
    name = cmd.name
    if name == "git":   # a secret committed leaves with the next push: `git add .env`
        from swarmgate.hooks.git_args import git_subcommand
        sub, rest = git_subcommand(cmd.args)
        if sub in ("add", "stage"):
            return [(w, f"`git {sub} {w}` (committed, it leaves with the next push)")
                    for w in rest if not w.startswith("-")]
        return []
    if not cmd.words or name not in NETWORK:
        return []
    out = [(w, f"`{name}` fed {how}") for w, how in redirect_reads(cmd)]
    if name == "curl":
        out += [(w, f"`curl {how}`") for w, how in _curl_files(cmd)]
    elif name == "wget":
        for k, a in enumerate(cmd.args):
            for opt in ("--post-file", "--body-file"):
                if a.startswith(opt + "="):
                    out.append((a.split("=", 1)[1], f"`wget {a}`"))
                elif a == opt and k + 1 < len(cmd.args):
                    out.append((cmd.args[k + 1], f"`wget {opt} {cmd.args[k + 1]}`"))
    elif name in ("scp", "rsync", "sftp", "rclone"):
        ops = _operands(cmd)
        if len(ops) > 1 and (_remote(ops[-1]) or name in ("scp", "sftp")):
            out += [(w, f"`{name} {w} {ops[-1]}`") for w in ops[:-1] if not _remote(w)]
    return out
