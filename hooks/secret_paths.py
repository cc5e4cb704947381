"""Which files hold secrets (K01, K02 in hooks/secret_guards.py): the keys, tokens and credentials an
agent is not given. Pure facts about paths; the one reader of file contents is for the files that
are secret only when they hold a token (.npmrc).

``secret_kind(full, home, extra)`` names what the file at absolute ``full`` is, or None:

- under the home: ~/.ssh (not the public halves `*.pub`, known_hosts, authorized_keys), ~/.aws,
  ~/.config/gcloud, ~/.azure, ~/.gnupg, ~/.password-store, ~/.kube/config, ~/.docker/config.json,
  ~/.git-credentials, ~/.config/gh/hosts.yml, ~/.pgpass;
- anywhere, by name: `.env` and `.env.*` (not `.env.example`, `.sample`, `.template`, `.dist`,
  `.defaults`, `.schema`), `*.pem`, `*.key`, `*.p12`, `*.pfx`, private keys `id_*` (no extension),
  `.netrc`, `.pypirc`, `.npmrc` holding a token, /etc/shadow, /proc/PID/environ;
- ``extra``: `[secrets] paths` (globs; `~/` is the home, a pattern with no `/` matches a file's name
  anywhere).

``MARKERS``: substrings one of which every built-in secret's path holds (the gate's test: a command
holding none of them names no secret, unless the config adds some).
"""
from __future__ import annotations

HOME_TREES = (".ssh", ".aws", ".config/gcloud", ".azure", ".gnupg", ".password-store")
HOME_FILES = (".kube/config", ".docker/config.json", ".git-credentials", ".config/gh/hosts.yml", ".pgpass",
              ".netrc", ".pypirc", ".npmrc")
PUBLIC_IN_SSH = ("known_hosts", "known_hosts.old", "authorized_keys", "authorized_keys2")
ENV_NOT_SECRET = ("example", "sample", "template", "dist", "defaults", "schema", "tmpl", "md")
KEY_SUFFIXES = (".pem", ".key", ".p12", ".pfx")
MARKERS = (".env", ".ssh", ".aws", "gcloud", ".azure", ".gnupg", ".password-store", ".kube", ".docker",
           "credentials", ".pem", ".key", ".p12", ".pfx", "id_", ".netrc", ".npmrc", ".pypirc", ".pgpass",
           "shadow", "hosts.yml", "environ")


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _npmrc_has_token(full: str) -> bool:
    try:
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return False
    return any(k in text for k in ("_authToken", "_auth", "_password"))


def secret_kind(full: str, home: str, extra: tuple | list = ()) -> str | None:
    """What secret the file at ``full`` holds (module doc), or None."""
    if not full or not full.startswith("/"):
        return None
    full = full.rstrip("/") or "/"
    name = full.rsplit("/", 1)[-1]
    if home and home != "/":
        for t in HOME_TREES:
            top = f"{home}/{t}"
            if _under(full, top):
                if t == ".ssh" and (name.endswith(".pub") or name in PUBLIC_IN_SSH):
                    return None
                return f"~/{t}"
        for f in HOME_FILES:
            if full == f"{home}/{f}":
                if f == ".npmrc" and not _npmrc_has_token(full):
                    return None
                return f"~/{f}"
    if name == ".env" or (name.startswith(".env.") and name[5:].lower() not in ENV_NOT_SECRET
                          and not name.lower().endswith(tuple("." + s for s in ENV_NOT_SECRET))):
        return "an environment file (.env)"
    low = name.lower()
    if low.endswith(KEY_SUFFIXES) and len(name) > 4:
        return f"a key file (*{low[low.rfind('.'):]})"
    if name.startswith("id_") and "." not in name and len(name) > 3:
        return "a private key (id_*)"
    if name in (".netrc", ".pypirc", "_netrc"):
        return f"a credentials file ({name})"
    if name == ".npmrc" and _npmrc_has_token(full):
        return "an .npmrc with a token"
    if full in ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"):
        return f"the password hashes ({full})"
    if full.startswith("/proc/") and name == "environ":
        return "a process's environment (its tokens and keys)"
    if extra:
        from fnmatch import fnmatchcase
        for pat in extra:
            p = pat
            if p.startswith("~/"):
                p = home.rstrip("/") + p[1:]
            if "/" not in p:
                if fnmatchcase(name, p):
                    return f"[secrets] paths: {pat}"
            elif fnmatchcase(full, p) or (p.endswith("/**") and _under(full, p[:-3])) or _under(full, p.rstrip("/")):
                return f"[secrets] paths: {pat}"
    return None


def may_name_secret(text: str, extra: tuple | list = ()) -> bool:
    """Whether ``text`` holds a marker of a secret's path (the gate's cheap test)."""
    if any(m in text for m in MARKERS):
        return True
    for pat in extra or ():
        stem = pat.replace("~/", "").strip("*/")
        stem = stem.rsplit("/", 1)[-1].split("*", 1)[0]
        if not stem or stem in text:
            return True
    return False
