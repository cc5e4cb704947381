"""The writer table as data: the programs that write, move or remove files, by name. The one list of
those names: hooks/shell_writes.py asks ``writes_files`` before it loads the writers' dispatch
(hooks/shell_writers.py), so a command that names no writer (ls, grep, pytest) loads no parser.

- ``TABLE``: program -> the fields of a ``shell_writers.Writer`` (operands, leading, options,
  read_only, recursive, needs, verb, trees; the module doc of hooks/shell_writers.py says what each
  means); built into a ``Writer`` on first lookup;
- ``SPECIAL``: program -> the parser for programs whose semantics no entry can say (git, tar,
  cp/mv/ln/rsync, sed -i ...); it wins over ``TABLE`` (ln, install, curl, wget have both: the parser
  reads the entry). hooks/shell_writers.py's ``_PARSERS`` maps each parser to its function in one
  family module (hooks/writers_git.py, writers_archives, writers_copies, writers_text, writers_fetch,
  writers_find, writers_installers), imported on the first use of one of its parsers: ``git status``
  loads the dispatch and hooks/writers_git.py, no other family;
- ``python3.N`` is read as ``python`` (``-m pip install``).

- ``Target``: one write, what every parser yields (hooks/shell_writes.py makes those of the
  redirections; the families and the dispatch import it from here, below them all).

Plain literals, two lookups and one small class: this module is imported on every Bash call.
"""

from __future__ import annotations

TABLE: dict[str, dict] = {
    "tee": {"options": {"--output-error": "value"}},
    "truncate": {"options": {"-s": "value", "--size": "value", "-r": "value", "--reference": "value"}},
    "touch": {"options": {"-d": "value", "--date": "value", "-r": "value", "--reference": "value", "-t": "value"}},
    "rm": {"recursive": ("-r", "-R", "--recursive"), "verb": "rm"},
    "rmdir": {"trees": True},
    "unlink": {},
    "shred": {
        "options": {
            "-n": "value",
            "--iterations": "value",
            "-s": "value",
            "--size": "value",
            "--random-source": "value",
        }
    },
    "chmod": {"leading": 1, "recursive": ("-R", "--recursive"), "options": {"--reference": "value"}},
    "chown": {"leading": 1, "recursive": ("-R", "--recursive"), "options": {"--reference": "value", "--from": "value"}},
    "chgrp": {"leading": 1, "recursive": ("-R", "--recursive"), "options": {"--reference": "value"}},
    "chattr": {"leading": 1, "recursive": ("-R",)},
    "setfacl": {
        "operands": "all",
        "recursive": ("-R", "--recursive"),
        "options": {
            "-m": "value",
            "-M": "value",
            "-x": "value",
            "-X": "value",
            "--set": "value",
            "--set-file": "value",
            "--modify": "value",
            "--remove": "value",
        },
    },
    "mkfifo": {"options": {"-m": "value", "--mode": "value"}},
    "mknod": {"operands": "first", "options": {"-m": "value", "--mode": "value"}},
    "ssh-keygen": {
        "operands": "none",
        "read_only": ("-l", "-y", "-B", "-F", "-Q", "-D", "-k"),
        "options": {
            "-f": "file",
            "-t": "value",
            "-b": "value",
            "-C": "value",
            "-N": "value",
            "-P": "value",
            "-O": "value",
            "-n": "value",
            "-I": "value",
            "-V": "value",
            "-Z": "value",
            "-a": "value",
            "-E": "value",
            "-m": "value",
            "-s": "value",
            "-w": "value",
            "-z": "value",
            "-R": "value",
            "-r": "value",
        },
    },
    "sort": {
        "operands": "none",
        "options": {
            "-o": "file",
            "--output": "file",
            "-k": "value",
            "--key": "value",
            "-t": "value",
            "--field-separator": "value",
            "-S": "value",
            "--buffer-size": "value",
            "-T": "value",
            "--temporary-directory": "value",
        },
    },
    "shuf": {
        "operands": "none",
        "options": {
            "-o": "file",
            "--output": "file",
            "-n": "value",
            "--head-count": "value",
            "-i": "value",
            "--input-range": "value",
            "--random-source": "value",
        },
    },
    "iconv": {
        "operands": "none",
        "options": {
            "-o": "file",
            "--output": "file",
            "-f": "value",
            "--from-code": "value",
            "-t": "value",
            "--to-code": "value",
        },
    },
    "split": {"operands": "none"},
    "sponge": {"options": {}},
    "ln": {"operands": "last", "verb": "ln"},
    "mount": {
        "operands": "last",
        "needs": ("--bind", "--rbind", "-B", "-R", "--move", "-M"),
        "recursive": ("--bind", "--rbind", "-B", "-R", "--move", "-M"),
        "options": {"-o": "value", "--options": "value", "-t": "value", "--types": "value"},
    },
    "install": {"operands": "last"},
    "wget": {"operands": "none"},
    "curl": {"operands": "none"},
}

# gzip & co: the suffix each adds or removes (read by writers_archives.compress)
COMPRESS_SUFFIX = {
    "gzip": ".gz",
    "gunzip": ".gz",
    "bzip2": ".bz2",
    "bunzip2": ".bz2",
    "xz": ".xz",
    "unxz": ".xz",
    "zstd": ".zst",
    "unzstd": ".zst",
    "lzma": ".lzma",
    "lz4": ".lz4",
    "compress": ".Z",
    "uncompress": ".Z",
}

SPECIAL: dict[str, str] = {
    "git": "git",
    "tar": "tar",
    "bsdtar": "tar",
    "gtar": "tar",
    "unzip": "unzip",
    "7z": "7z",
    "7za": "7z",
    "7zr": "7z",
    "cpio": "cpio",
    "patch": "patch",
    "curl": "curl",
    "wget": "wget",
    "sed": "sed",
    "gsed": "sed",
    "perl": "perl",
    "awk": "awk",
    "gawk": "awk",
    "dd": "dd",
    "sqlite3": "sqlite",
    "find": "find",
    "apply_patch": "apply_patch",
    "applypatch": "apply_patch",
    "cp": "copy",
    "mv": "copy",
    "ln": "copy",
    "install": "copy",
    "rsync": "copy",
    "ex": "editor",
    "vim": "editor",
    "vi": "editor",
    "nvim": "editor",
    "ed": "editor",
    "view": "editor",
    "pip": "installer",
    "pip3": "installer",
    "npm": "installer",
    "pnpm": "installer",
    "yarn": "installer",
    "python": "python_pip",
    "python3": "python_pip",
}
SPECIAL.update(dict.fromkeys(COMPRESS_SUFFIX, "compress"))


def parser_of(name: str) -> str | None:
    """The parser (a key of ``SPECIAL``'s values) that reads what ``name`` writes, or None."""
    found = SPECIAL.get(name)
    if found is None and name.startswith("python3."):
        return "python_pip"
    return found


def writes_files(name: str) -> bool:
    """Whether the program ``name`` is in the table (its arguments may name files it writes); a
    program ``[bash] writers`` adds is asked about by the caller."""
    return name in TABLE or parser_of(name) is not None


class Target:
    """One write: ``path`` as written (relative to the command's directory unless absolute),
    ``how`` (for the refusal), ``tree`` (the whole directory may be written), ``link``: for ``ln``/
    ``cp -l/-s``, (what the new link points at, whether it is symbolic): the walk records it."""
    __slots__ = ("path", "how", "tree", "link")

    def __init__(self, path: str, how: str, tree: bool = False, link: str | None = None) -> None:
        self.path = path
        self.how = how
        self.tree = tree
        self.link = link

    def __repr__(self) -> str:
        return f"Target({self.path!r}, tree={self.tree})"
