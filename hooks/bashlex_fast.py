"""Import bashlex without rebuilding its parser tables on every import.

``bashlex/parser.py`` calls its bundled yacc at import time, and that fork of
PLY has no table cache: each import recomputes the LALR tables (~200 ms on
the development machines, FACTS.md). The tables depend only on the grammar,
so ``load()`` builds them once, stores them in a cache file and, on later
imports, hands ``bashlex.parser`` a parser made from the cached tables.

- The cache lives in the state directory (``state_paths.bashlex_cache_path``),
  keyed by the Python version and a checksum of ``bashlex/parser.py`` and
  ``bashlex/yacc.py``: a new bashlex or Python builds a new file.
- It is data only (``marshal`` of dicts, lists, strings and ints; no pickle,
  no code), written atomically (temp file + rename), validated on read; a
  corrupt, foreign or unreadable cache is ignored and rebuilt, never trusted.
- If the cache cannot be written (read-only state dir), bashlex still works:
  it is built the slow way.
- ``load()`` is idempotent and returns the ``bashlex`` package with
  ``bashlex.parser`` imported. Call it lazily (never at module level of a
  guard module).
"""
from __future__ import annotations

import os
import sys

_FORMAT = 1
_loaded = None


class _Production:
    """What LRParser.parse needs of a production."""
    __slots__ = ("name", "len", "func", "callable", "str", "number", "prod")

    def __init__(self, number: int, name: str, length: int, func: str | None, text: str) -> None:
        self.number = number
        self.name = name
        self.len = length
        self.func = func
        self.callable = None
        self.str = text
        self.prod = ()

    def __str__(self) -> str:
        return self.str

    def __len__(self) -> int:
        return self.len

    def bind(self, pdict: dict) -> None:
        if self.func:
            self.callable = pdict[self.func]


def _package_dir() -> str | None:
    import importlib.util
    spec = importlib.util.find_spec("bashlex")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _key(pkg: str) -> str | None:
    import zlib
    crc = 0
    try:
        for name in ("parser.py", "yacc.py"):
            with open(os.path.join(pkg, name), "rb") as fh:
                crc = zlib.crc32(fh.read(), crc)
    except OSError:
        return None
    v = sys.version_info
    return f"py{v[0]}{v[1]}-{sys.implementation.name}-{crc:08x}-f{_FORMAT}"


def cache_path(pkg: str | None = None) -> str | None:
    pkg = pkg or _package_dir()
    if pkg is None:
        return None
    key = _key(pkg)
    if key is None:
        return None
    from swarmgate import state_paths
    return str(state_paths.bashlex_cache_path(key))


def _read_tables(path: str):
    """The cached tables, or None when absent, foreign or malformed.

    Trusted only when owned by this user (or root) and not writable by group
    or others: the state directory may be shared."""
    import marshal
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid not in (os.getuid(), 0) or st.st_mode & 0o022:
                return None
            data = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not _valid(data):
        return None
    return data


def _valid(data) -> bool:
    """Shape check (cheap: the file is ours; this catches truncation and format drift)."""
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return False
    action, goto, prods = data.get("action"), data.get("goto"), data.get("productions")
    if not (isinstance(action, dict) and isinstance(goto, dict) and isinstance(prods, list)):
        return False
    if 0 not in action or 0 not in goto or not prods or len(action) < 100:
        return False
    for table in (action, goto):
        for k in (0, max(table)):
            row = table[k]
            if not isinstance(row, dict) or not all(
                    isinstance(a, str) and isinstance(b, int) for a, b in row.items()):
                return False
    return all(type(p) is tuple and len(p) == 4 for p in prods)


def _write_tables(path: str, parser) -> None:
    import marshal
    import tempfile
    data = {
        "format": _FORMAT,
        "action": {int(k): dict(v) for k, v in parser.action.items()},
        "goto": {int(k): dict(v) for k, v in parser.goto.items()},
        "productions": [(p.name, int(p.len), p.func, str(p)) for p in parser.productions],
    }
    d = os.path.dirname(path)
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".bashlex-", dir=d)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(marshal.dumps(data))
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass   # no cache this time; bashlex still works


def _build_from(data, yacc_mod, pdict):
    parser = yacc_mod.LRParser.__new__(yacc_mod.LRParser)
    prods = []
    for n, (name, length, func, text) in enumerate(data["productions"]):
        p = _Production(n, name, length, func, text)
        p.bind(pdict)
        prods.append(p)
    parser.productions = tuple(prods)
    # plain dicts: frozendict's Python-level __getitem__ is on the parse loop's hot path
    parser.action = data["action"]
    parser.goto = data["goto"]
    parser.errorfunc = pdict.get("p_error")
    parser.set_defaulted_states()
    parser.errorok = True
    yacc_mod.parse = parser.parse
    return parser


class _LazyInspect:
    """Stands in for the ``inspect`` module inside bashlex.yacc; the real module
    is imported on the first attribute access (only on a cache miss)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self.__spec__ = None

    def __getattr__(self, attr: str):
        import importlib
        return getattr(importlib.import_module("inspect"), attr)


def _speed_up_flags() -> None:
    """Two hot spots of bashlex's tokenizer, made cheaper without changing results:

    - ``typedset & member`` (every parser-state test) built a one-element set
      and intersected; truthiness is all its callers use when the operand is a
      single flag, so answer membership directly (a set operand keeps set
      semantics);
    - the flag enums hashed through ``Enum.__hash__`` (Python-level); enum
      members are singletons compared by identity, so identity hashing is
      equivalent. Patched right after ``bashlex.flags`` is imported, before
      any set holds a member."""
    import bashlex.flags as fl
    from bashlex import utils
    for enum_cls in (fl.parser, fl.word):
        enum_cls.__hash__ = object.__hash__
    typedset = utils.typedset

    def __and__(self, value, _cls=typedset):
        if value.__class__ is self._type:
            return value in self._s
        return self._s & value
    typedset.__and__ = __and__


def load():
    """Return the bashlex package with its parser loaded, using cached tables."""
    global _loaded
    if _loaded is not None:
        return _loaded
    if "bashlex.parser" in sys.modules:
        import bashlex
        _loaded = bashlex
        return bashlex
    import importlib.util
    spec = importlib.util.find_spec("bashlex")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bashlex is not installed: pip install bashlex")
    pkg = list(spec.submodule_search_locations)[0]
    path = cache_path(pkg)
    # bashlex/__init__ imports bashlex.parser, which builds the tables: set the
    # package up without running __init__ first, patch yacc, then run it.
    fresh = "bashlex" not in sys.modules
    if fresh:
        package = importlib.util.module_from_spec(spec)
        sys.modules["bashlex"] = package
    cached = _read_tables(path) if path else None
    stub = None
    if cached is not None and "inspect" not in sys.modules and "bashlex.yacc" not in sys.modules:
        # yacc imports inspect (~7-25 ms with ast, dis, tokenize) only to build
        # tables from the grammar's source; with cached tables it is never
        # used. Let yacc import a stand-in that loads the real one on first use.
        stub = _LazyInspect("inspect")
        sys.modules["inspect"] = stub
    if fresh:
        _speed_up_flags()
    try:
        from bashlex import yacc as yacc_mod
    finally:
        if stub is not None and sys.modules.get("inspect") is stub:
            del sys.modules["inspect"]
    real = yacc_mod.yacc

    def fast_yacc(*args, **kwargs):
        pdict = yacc_mod.get_caller_module_dict(2)
        if cached is not None:
            try:
                return _build_from(cached, yacc_mod, pdict)
            except (KeyError, TypeError, AttributeError):
                pass
        kwargs["write_tables"] = False
        kwargs.setdefault("debug", False)
        kwargs["errorlog"] = yacc_mod.NullLogger()
        kwargs["module"] = sys.modules.get("bashlex.parser")
        built = real(*args, **kwargs)
        if path:
            _write_tables(path, built)
        return built

    yacc_mod.yacc = fast_yacc
    try:
        import bashlex.parser  # noqa: F401  (runs fast_yacc)
        if fresh:
            spec.loader.exec_module(package)
    except BaseException:
        if fresh:
            for name in [m for m in sys.modules if m == "bashlex" or m.startswith("bashlex.")]:
                del sys.modules[name]
        raise
    finally:
        yacc_mod.yacc = real
    import bashlex
    _loaded = bashlex
    return bashlex


def main(argv=None) -> int:
    """``python -m swarmgate.hooks.bashlex_fast``: build the cache now (install time)."""
    path = cache_path()
    load()
    print(f"bashlex tables cached at {path}" if path and os.path.exists(path)
          else "bashlex tables could not be cached")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
