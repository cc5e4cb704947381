#!/usr/bin/env bash
# install.sh — set up swarmgate on this machine, wire a repository, or run the tests.
#   ./install.sh                 create .venv and install swarmgate there (a regular install: what hooks run)
#   ./install.sh --into PATH     ... then wire the repository at PATH (.claude/settings.json, rules, config)
#   ./install.sh --dev           create .venv with an editable install and the test extras (for development)
#   ./install.sh --test [ARGS]   the development install, then the whole test suite (extra ARGS go to pytest)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
python="${PYTHON:-python3}"

usage() { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; }

mode=user
target=""
case "${1:-}" in
  --into) [ $# -ge 2 ] || { echo "install.sh: --into needs a PATH" >&2; exit 2; }; mode=into; target="$2"; shift 2;;
  --dev) mode=dev; shift;;
  --test) mode=test; shift;;
  -h|--help) usage; exit 0;;
  "") ;;
  *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2;;
esac
if [ "$mode" != test ] && [ $# -gt 0 ]; then
  echo "install.sh: unexpected argument $1" >&2; usage >&2; exit 2
fi

if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "install.sh: swarmgate needs Python 3.11 or newer ($python is $("$python" -V 2>&1))" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
pip() { .venv/bin/python -m pip -q --disable-pip-version-check "$@"; }
# what .venv holds now: "editable", "regular", ... or "none"
kind_before="$(.venv/bin/python -m swarmgate.install_kind --kind 2>/dev/null || echo none)"
pip install --upgrade pip setuptools wheel >/dev/null

case "$mode" in
  dev|test)
    # editable: the tests and the tools run this checkout's code as it is now
    pip install -e '.[test]'
    # byte-compile once: hooks run before every tool call
    .venv/bin/python -m compileall -q swarmgate hooks gate hosts agents rules >/dev/null || true
    # bashlex's parser tables, built once for the tests' differential oracle (hooks/bashlex_fast.py)
    .venv/bin/python -m swarmgate.hooks.bashlex_fast >/dev/null 2>&1 || true
    if [ "$kind_before" = regular ]; then
      echo "install.sh: note: .venv held a regular install; it is now the development (editable) install:" \
           "hooks wired from it run this checkout's code as it changes (./install.sh makes it regular again)" >&2
    fi;;
  *)
    # regular (non-editable): a copy of this checkout's code, byte-compiled by pip; no import finder
    # runs at each interpreter start (docs/install.md). A build left in build/ could carry modules
    # deleted since: build from scratch.
    rm -rf build
    pip install --no-build-isolation .
    rm -rf build
    if [ "$kind_before" = editable ]; then
      echo "install.sh: note: .venv held the development (editable) install; it is now a regular install" \
           "of this checkout's code (./install.sh --dev for development, and again after a pull)" >&2
    fi;;
esac

case "$mode" in
  user) echo "swarmgate installed in $here/.venv (wire a repository with: ./install.sh --into PATH)";;
  dev) echo "swarmgate installed in $here/.venv for development (editable, with the test extras)";;
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
