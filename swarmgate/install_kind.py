"""Which kind of install this swarmgate is: editable (development), a regular virtual environment,
pipx, `uv tool`, or outside any virtual environment.

`swarmgate doctor`, `swarmgate --version` and bench/hook_latency.py say it, because the kind
decides what a hook costs: an editable install's import finder runs at every interpreter start
(docs/install.md).
"""
from __future__ import annotations

import json
import os
import sys
from importlib import metadata

EDITABLE = "editable"
REGULAR = "regular"
PIPX = "pipx"
UV_TOOL = "uv tool"
OUTSIDE_VENV = "outside a virtual environment"
NOT_INSTALLED = "none"   # no swarmgate distribution in this interpreter's site-packages


def installed() -> metadata.Distribution | None:
    """The installed `swarmgate` distribution (its dist-info in site-packages), not a build's
    swarmgate.egg-info in a checkout that happens to be on sys.path."""
    found = list(metadata.distributions(name="swarmgate", path=[p for p in sys.path if p.endswith("-packages")]))
    return found[0] if found else None


def is_editable(dist: metadata.Distribution | None = None) -> bool:
    """Whether the installed `swarmgate` distribution is an editable (development) install (PEP 660:
    its direct_url.json says so)."""
    dist = dist or installed()
    if dist is None:
        return False
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    try:
        return bool(json.loads(text).get("dir_info", {}).get("editable"))
    except (ValueError, AttributeError):
        return False


def kind() -> str:
    """The kind of the install this interpreter runs swarmgate from."""
    prefix = sys.prefix
    dist = installed()
    if dist is None:
        return NOT_INSTALLED
    if is_editable(dist):
        return EDITABLE
    if os.path.isfile(os.path.join(prefix, "pipx_metadata.json")):
        return PIPX
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")):
        return UV_TOOL
    if sys.prefix != sys.base_prefix:
        return REGULAR
    return OUTSIDE_VENV


def describe() -> str:
    """One line: the kind and where it lives."""
    return f"{kind()} install in {sys.prefix}"


if __name__ == "__main__":
    print(kind() if sys.argv[1:] == ["--kind"] else describe())
