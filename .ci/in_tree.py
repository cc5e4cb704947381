"""Run `swarmgate ARGS...` from the source tree this file sits in, not from the installed package.

gate-staged runs its stages in a temporary tree holding exactly HEAD + the index; a stage that
checks swarmgate itself (`swarmgate docs --check`) must import that tree's code, while the
interpreter's editable install points at the working tree. This maps the package directories as
pyproject.toml's [tool.setuptools] package-dir does, then calls the command line.

    .venv/bin/python .ci/in_tree.py docs --check --root .
"""
from __future__ import annotations

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBPACKAGES = {"hooks": "hooks", "gate": "gate", "hosts": "hosts", "agents": "agents", "rules": "rules"}


def load_from_tree() -> None:
    def load(name: str, folder: str) -> None:
        spec = importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)

    load("swarmgate", os.path.join(ROOT, "swarmgate"))
    for sub, folder in SUBPACKAGES.items():
        load(f"swarmgate.{sub}", os.path.join(ROOT, folder))


if __name__ == "__main__":
    load_from_tree()
    from swarmgate.cli import main  # noqa: PLC0415 - only after the tree's packages are in place

    sys.exit(main(sys.argv[1:]))
