"""The verdict cache: a stage whose key did not change reuses its verdict.

The key of a stage is a hash of:
- a schema tag (bumped whenever the key's make-up changes; also the Python
  minor version, since ``ast.dump`` may change between versions);
- the canonical stage definition (name, command, inputs, heavy, timeout,
  cap, env, python_inputs; built-in stages: their name and code version);
- tool versions: the command's program resolved on PATH (real path) and its
  ``--version`` output, remembered across runs per executable identity
  (device, inode, size, mtime: a reinstall or upgrade rewrites the file) and
  asked at most once per run; a program inside the repository
  (``./scripts/check.sh``) is keyed by its blob id instead, never run;
- the values of the allow-listed environment variables (``[gate] env`` and
  the stage's ``env``);
- the inputs: every index entry whose path matches one of the stage's input
  globs, as (path, mode, blob id) -- or, for a Python file, (path, mode,
  per-function fingerprints): each function, method, class body and the
  module-level code is normalised through ``ast`` without docstrings, so a
  change to a comment, a docstring or formatting keeps the key. An input glob
  may name functions: ``src/app.py::parse_*`` keys only the matching
  functions (and the module-level code) of that file, so a change to another
  function keeps the key. ``python_inputs = "content"`` on a stage keys
  Python files by their bytes (for formatters and linters that read
  comments).

Verdicts (passes, and failures with their output to replay) are written
atomically under ``state_paths.gate_cache_dir()``; a corrupt entry is moved
aside and counts as a miss.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

from swarmgate import break_switch, fast_json, state_paths, statefile
from swarmgate.digest import sha256_hex
from swarmgate.gate.tree import GITLINK, Entry, Index, read_blobs

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    import ast
    from collections.abc import Iterable
    from typing import Any

# An all-cached run computes keys from cached fingerprints and tool versions: it imports no ast (a
# fingerprint is computed once per blob), no json package (fast_json writes json.dumps's text),
# no hashlib (OpenSSL's bindings; digest.py), no shutil (which() below).

SCHEMA_TAG = f"swarmgate-gate-key/1 py{sys.version_info[0]}.{sys.version_info[1]}"
FP_VERSION = "fp1"
MAX_OUTPUT = 64 * 1024
KEEP_PER_STAGE = 128
MAX_FINGERPRINTS = 50_000
MODULE_LEVEL = "<module>"


# --- globs ---

def _glob_source(pattern: str) -> str:
    """The regular expression (source) of a git-style glob: ``*`` within a component, ``**`` across."""
    i, out = 0, []
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out) + r"\Z"


@lru_cache(maxsize=512)
def _glob_re(pattern: str) -> re.Pattern:
    return re.compile(_glob_source(pattern))


def _path_source(pattern: str) -> str:
    """glob_match's question as one expression: the glob itself, or a file under it (a directory)."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return f"(?:{_glob_source(pattern)})|(?:{_glob_source(pattern.rstrip('/') + '/**')})"


@lru_cache(maxsize=512)
def _any_path_re(patterns: tuple[str, ...]) -> re.Pattern:
    """One compiled expression that matches a path when any of the globs does (glob_match)."""
    return re.compile("|".join(_path_source(p) for p in patterns))


def glob_match(path: str, pattern: str) -> bool:
    """Git-style glob: ``*`` within a component, ``**`` across; a plain directory matches its files."""
    return bool(_any_path_re((pattern,)).match(path))


def split_selector(pattern: str) -> tuple[str, str | None]:
    """``path_glob::function_glob`` -> (path_glob, function_glob); plain globs -> (glob, None)."""
    if "::" in pattern:
        path, _, func = pattern.partition("::")
        return path, (func or None)
    return pattern, None


def match_inputs(entries: Iterable[Entry], globs: list[str]) -> list[tuple[Entry, tuple[str, ...] | None]]:
    """(entry, function selectors or None for the whole file) for each matching entry.

    A file is whole when a plain glob matches it, or a ``path::function`` glob matches a file that
    is not Python; else the function globs of every ``path::function`` glob that matches it. The
    plain globs are asked as one expression: one match per entry, however many globs there are.
    """
    parsed = [split_selector(g) for g in globs]
    plain = tuple(dict.fromkeys(p for p, f in parsed if f is None))
    whole = _any_path_re(plain).match if plain else None
    partial = [(_any_path_re((p,)).match, f) for p, f in parsed if f is not None]
    out = []
    for e in entries:
        if whole is not None and whole(e.path):
            out.append((e, None))
            continue
        selectors = [f for match, f in partial if match(e.path)]
        if selectors:
            out.append((e, None) if not e.path.endswith(".py") else (e, tuple(sorted(set(selectors)))))
    return out


# --- Python fingerprints ---

def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    import ast  # noqa: PLC0415 - only where a fingerprint is computed (once per blob), not in a cached run

    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def _normalise(node: ast.AST) -> ast.AST:
    import ast  # noqa: PLC0415 - as above

    for n in ast.walk(node):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            n.body = _strip_docstring(n.body)
    return node


def _digest(obj: Any) -> str:
    text = obj if isinstance(obj, str) else fast_json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return sha256_hex(text.encode("utf-8", errors="surrogateescape"))


def python_fingerprints(source: bytes) -> dict[str, str] | None:
    """{qualname: fingerprint} for every function, method, class body and the module level.

    Comments, docstrings and formatting do not enter a fingerprint (``ast.dump``
    without positions). None when the file does not parse.
    """
    import ast  # noqa: PLC0415 - as above

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    _normalise(tree)
    fps: dict[str, str] = {}
    module_rest: list[str] = []

    def visit_body(body: list[ast.stmt], prefix: str, rest: list[str]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fps[prefix + node.name] = _digest(ast.dump(node, include_attributes=False))
            elif isinstance(node, ast.ClassDef):
                own: list[str] = []
                visit_body(node.body, prefix + node.name + ".", own)
                shell = [ast.dump(x, include_attributes=False)
                         for x in (*node.bases, *node.keywords, *node.decorator_list)]
                own.insert(0, fast_json.dumps(shell))
                fps[prefix + node.name] = _digest(own)
            else:
                rest.append(ast.dump(node, include_attributes=False))

    visit_body(tree.body, "", module_rest)
    fps[MODULE_LEVEL] = _digest(module_rest)
    return fps


def select_fingerprints(fps: dict[str, str], selectors: tuple[str, ...] | None) -> dict[str, str]:
    if selectors is None:
        return fps
    out = {MODULE_LEVEL: fps.get(MODULE_LEVEL, "")}
    for name, fp in fps.items():
        top = name.split(".")[0]
        if any(_glob_re(sel).match(name) or _glob_re(sel).match(top) for sel in selectors):
            out[name] = fp
    return out


class FingerprintStore:
    """Blob id -> fingerprints, remembered across runs (a blob's content never changes)."""

    def __init__(self, cache_root: Path) -> None:
        self.path = Path(cache_root) / f"fingerprints-{FP_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}.json"
        self.data: dict[str, Any] = statefile.read_json(self.path, {})
        self.dirty = False

    def get_many(self, repo: Path, index_file: str | None, oids: list[str]) -> dict[str, Any]:
        missing = sorted({o for o in oids if o not in self.data})
        if missing:
            for oid, content in read_blobs(repo, missing, index_file):
                fps = python_fingerprints(content)
                self.data[oid] = fps if fps is not None else {"<bytes>": oid}
            self.dirty = True
        return {o: self.data[o] for o in oids}

    def save(self) -> None:
        if not self.dirty:
            return
        if len(self.data) > MAX_FINGERPRINTS:
            keys = list(self.data)[-MAX_FINGERPRINTS // 2:]
            self.data = {k: self.data[k] for k in keys}
        try:
            statefile.write_json_atomic(self.path, self.data)
        except (OSError, statefile.StateError) as e:
            print(f"gate-staged: could not save {self.path}: {e} (the next run recomputes)", file=sys.stderr)
        self.dirty = False


# --- tool versions ---

def command_program(command: str) -> str | None:
    """The program a shell command runs first (after VAR=value words and `!`)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    for w in words:
        if w == "!" or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
            continue
        if w in ("exec", "command", "nice", "nohup", "time"):
            continue
        return w
    return None


def which(program: str, path: str) -> str | None:
    """shutil.which(program, path=path), without importing shutil (which brings zlib, bz2 and
    lzma): a name with a directory is looked at itself, a bare one in each directory of ``path``."""
    def runnable(p: str) -> bool:
        return os.access(p, os.F_OK | os.X_OK) and not os.path.isdir(p)

    if os.path.dirname(program):
        return program if runnable(program) else None
    if not path:
        return None
    for d in path.split(os.pathsep):
        candidate = os.path.join(d, program)
        if runnable(candidate):
            return candidate
    return None


class ToolVersions:
    """Resolved path + `--version` output of programs, asked once per run, remembered per executable."""

    def __init__(self, cache_root: Path) -> None:
        self.path = Path(cache_root) / "tool-versions.json"
        self.known: dict[str, Any] = statefile.read_json(self.path, {})
        self.run: dict[tuple[str, str], Any] = {}
        self.dirty = False

    def version(self, program: str | None, index: Index, env: dict[str, str]) -> Any:
        if not program:
            return None
        memo = (program, env.get("PATH", ""))
        if memo in self.run:
            return self.run[memo]
        self.run[memo] = result = self._resolve(program, index, env)
        return result

    def _resolve(self, program: str, index: Index, env: dict[str, str]) -> Any:
        if "/" in program and not program.startswith("/"):
            rel = os.path.normpath(program)
            for e in index.entries:
                if e.path == rel:
                    return {"in_tree": rel, "mode": e.mode, "blob": e.oid}
            # not staged: a linked path such as `.venv/bin/pytest` ([gate] link) -- version it like
            # a program on PATH, through the file the link points at in the worktree
            found = str(Path(index.repo) / rel)
            if not (os.path.isfile(found) and os.access(found, os.X_OK)):
                return {"in_tree": rel, "missing": True}
        else:
            found = which(program, env.get("PATH", os.defpath))
        if not found:
            return {"program": program, "missing": True}
        real = os.path.realpath(found)
        try:
            st = os.stat(real)
        except OSError:
            return {"program": program, "path": real, "unreadable": True}
        ident = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
        rec = self.known.get(real)
        if isinstance(rec, dict) and rec.get("ident") == ident and "version" in rec:
            return {"path": real, "version": rec["version"]}
        try:
            cp = subprocess.run([found, "--version"], capture_output=True, stdin=subprocess.DEVNULL,
                                timeout=15, env=env)
            text = (cp.stdout + cp.stderr).decode(errors="replace").strip()[:2000]
        except (OSError, subprocess.TimeoutExpired) as e:
            text = f"<no version: {type(e).__name__}>"
        self.known[real] = {"ident": ident, "version": text, "at": int(time.time())}
        self.dirty = True
        return {"path": real, "version": text}

    def save(self) -> None:
        if self.dirty:
            try:
                statefile.write_json_atomic(self.path, self.known)
            except (OSError, statefile.StateError) as e:
                print(f"gate-staged: could not save {self.path}: {e}", file=sys.stderr)
            self.dirty = False


# --- keys ---

class KeyBuilder:
    """Builds stage keys for one index; shares blob reads and tool versions between stages."""

    def __init__(self, index: Index, cache_root: Path | None = None, *,
                 fingerprints: FingerprintStore | None = None, tools: ToolVersions | None = None) -> None:
        self.index = index
        self.cache_root = Path(cache_root or state_paths.gate_cache_dir())
        self.fingerprints = fingerprints or FingerprintStore(self.cache_root)
        self.tools = tools or ToolVersions(self.cache_root)
        self._inputs: dict[tuple, list[Any]] = {}
        self._digests: dict[tuple, str] = {}

    def inputs(self, globs: list[str], python_inputs: str = "functions") -> list[Any]:
        memo = (tuple(globs), python_inputs)
        if memo not in self._inputs:
            self._inputs[memo] = self._compute_inputs(globs, python_inputs)
        return self._inputs[memo]

    def inputs_digest(self, globs: list[str], python_inputs: str = "functions") -> str:
        """One hash of the inputs (shared by every stage with the same globs)."""
        memo = (tuple(globs), python_inputs)
        if memo not in self._digests:
            self._digests[memo] = _digest(self.inputs(globs, python_inputs))
        return self._digests[memo]

    def _compute_inputs(self, globs: list[str], python_inputs: str) -> list[Any]:
        matched = match_inputs(self.index.entries, globs)
        py = [e.oid for e, _ in matched
              if python_inputs == "functions" and e.path.endswith(".py") and e.mode in ("100644", "100755")]
        fps = self.fingerprints.get_many(self.index.repo, self.index.index_file, py) if py else {}
        out: list[Any] = []
        for e, selectors in matched:
            if e.oid in fps and e.mode != GITLINK:
                out.append([e.path, e.mode, select_fingerprints(fps[e.oid], selectors)])
            else:
                out.append([e.path, e.mode, e.oid])
        out.sort(key=lambda x: x[0])
        return out

    def key(self, definition: dict, globs: list[str], env_names: list[str], env: dict[str, str],
            program: str | None, python_inputs: str = "functions") -> tuple[str, dict]:
        parts = {
            "schema": SCHEMA_TAG,
            "stage": definition,
            "tool": self.tools.version(program, self.index, env),
            "env": {name: env.get(name) for name in sorted(set(env_names))},
            "inputs": "" if break_switch.broken("cache-ignores-inputs") else self.inputs_digest(globs, python_inputs),
        }
        return _digest(parts), parts

    def save(self) -> None:
        self.fingerprints.save()
        self.tools.save()


# --- verdict records ---

def _stage_dir(cache_root: Path, stage: str) -> Path:
    return Path(cache_root) / "verdicts" / state_paths.safe_name(stage)


def lookup(cache_root: Path | None, stage: str, key: str) -> dict | None:
    root = Path(cache_root or state_paths.gate_cache_dir())
    path = _stage_dir(root, stage) / f"{key}.json"
    try:
        rec = statefile.read_json(path, None)
    except statefile.StateError as e:
        print(f"gate-staged: ignoring cache entry: {e}", file=sys.stderr)
        return None
    if not isinstance(rec, dict) or rec.get("key") != key or rec.get("verdict") not in ("pass", "fail"):
        return None
    if not isinstance(rec.get("output", ""), str):
        return None
    return rec


def record(cache_root: Path | None, stage: str, key: str, verdict: str, rc: int, output: str,
           seconds: float, repo: str) -> Path:
    root = Path(cache_root or state_paths.gate_cache_dir())
    d = _stage_dir(root, stage)
    path = d / f"{key}.json"
    if len(output) > MAX_OUTPUT:
        output = "[... output cut: first part omitted ...]\n" + output[-MAX_OUTPUT:]
    statefile.write_json_atomic(path, {"key": key, "stage": stage, "verdict": verdict, "rc": rc,
                                       "output": output, "seconds": round(seconds, 3),
                                       "at": int(time.time()), "repo": repo})
    _prune(d)
    return path


def _prune(d: Path) -> None:
    try:
        files = [d / n for n in os.listdir(d) if n.endswith(".json")]
    except OSError:
        return
    if len(files) <= KEEP_PER_STAGE:
        return
    files.sort(key=lambda p: p.stat().st_mtime if p.exists() else 0)
    for p in files[:-KEEP_PER_STAGE]:
        try:
            os.unlink(p)
        except OSError:
            pass
