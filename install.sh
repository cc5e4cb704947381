#!/usr/bin/env bash
# install.sh — set up swarmgate on this machine, wire a repository, or run the tests.
#   ./install.sh                 create .venv and install swarmgate with its test extras
#   ./install.sh --into PATH     ... then wire the repository at PATH (.claude/settings.json, rules, config)
#   ./install.sh --test [ARGS]   ... then run the whole test suite (extra ARGS go to pytest)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
python="${PYTHON:-python3}"

usage() { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; }

mode=setup
target=""
case "${1:-}" in
  --into) [ $# -ge 2 ] || { echo "install.sh: --into needs a PATH" >&2; exit 2; }; mode=into; target="$2"; shift 2;;
  --test) mode=test; shift;;
  -h|--help) usage; exit 0;;
  "") ;;
  *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2;;
esac

if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "install.sh: swarmgate needs Python 3.11 or newer ($python is $("$python" -V 2>&1))" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip setuptools wheel >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# byte-compile once: hooks run before every tool call, and a process that may not
# write bytecode (PYTHONDONTWRITEBYTECODE) would otherwise recompile every module each time
.venv/bin/python -m compileall -q swarmgate hooks gate hosts agents rules >/dev/null || true
# build bashlex's parser tables once (the hook loads them instead of rebuilding them, ~100 ms, every call)
.venv/bin/python -m swarmgate.hooks.bashlex_fast >/dev/null 2>&1 || true

case "$mode" in
  setup) echo "swarmgate installed in $here/.venv (wire a repository with: ./install.sh --into PATH)";;
  into) exec .venv/bin/swarmgate install "$target";;
  test)
    set +e
    .venv/bin/python -m pytest "$@"
    rc=$?
    set -e
    if [ "$rc" -eq 5 ]; then
      echo "install.sh: pytest collected no tests" >&2
      exit 1
    fi
    exit "$rc";;
esac
