"""The install prints no packaging warnings (issue 22): setuptools builds the regular wheel that
`./install.sh` installs, and the editable wheel of `./install.sh --dev`, from a copy of this working
tree without one warning about the package (the editable build keeps the notice setuptools gives
every editable install). Both warned twice per build ("Package would be ignored", ~30 lines each)
while the templates' folders rules/agents and rules/rules were package data of swarmgate.rules
instead of packages of their own; the wheel still carries every template."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The working tree as it is (tracked and untracked files git does not ignore), copied: a build
    writes swarmgate.egg-info and build/ beside the sources."""
    dest = tmp_path_factory.mktemp("tree")
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


def _env() -> dict:
    # PYTHONDONTWRITEBYTECODE makes setuptools say "byte-compiling is disabled": the caller's, not the package's
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def test_the_regular_build_that_install_sh_runs_prints_nothing(tree, tmp_path):
    out = tmp_path / "out"
    # install.sh: `pip -q --disable-pip-version-check install --no-build-isolation .`; the wheel step
    # of that install, without installing
    proc = subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", "wheel", "--no-deps",
                           "--no-build-isolation", "-w", str(out), "."], cwd=tree, capture_output=True, text=True,
                          env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout + proc.stderr == "", proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("swarmgate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for sub in ("rules", "agents"):
        shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith(f"swarmgate/rules/{sub}/")}
        assert shipped == {p.name for p in (ROOT / "rules" / sub).glob("*.md")}, sub


def test_the_editable_build_of_the_dev_install_warns_nothing_of_the_package_map(tree, tmp_path):
    """Every editable install gets setuptools' own notice ("Editable installation.": folders named
    like the package may shadow it), whatever the project; nothing else may be said."""
    code = ("import sys\nfrom setuptools import build_meta\n"
            "print(build_meta.build_editable(sys.argv[1]))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=tree, capture_output=True, text=True,
                          env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = proc.stdout + proc.stderr
    assert "would be ignored" not in said and "absent from the `packages`" not in said, said[-3000:]
    headlines = set(re.findall(r"\b\w*(?:Warning|InformationOnly): (.*)", said))
    assert headlines <= {"Editable installation."}, headlines
    assert (tmp_path / proc.stdout.strip().splitlines()[-1]).is_file()
