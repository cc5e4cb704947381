"""hook_entry._PycFinder: the hook's modules and packages straight from their .pyc files, laid out as a
regular install lays them (site-packages/swarmgate/hooks/...), and the normal import for anything
it cannot vouch for."""
from __future__ import annotations

import compileall
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
sys.path.append(sys.argv[1])
import swarmgate
from swarmgate.hook_entry import _PycFinder
sys.meta_path.insert(0, _PycFinder)
import swarmgate.pkg.mod
import swarmgate.nspkg.other
def kind(m):
    loader = m.__spec__.loader
    return loader.__name__ if isinstance(loader, type) else type(loader).__name__
pkg = sys.modules["swarmgate.pkg"]
print(kind(pkg), kind(sys.modules["swarmgate.pkg.mod"]), swarmgate.pkg.mod.VALUE,
      pkg.__path__ == [sys.argv[1] + "/swarmgate/pkg"],
      pkg.__file__.endswith("/swarmgate/pkg/__init__.py"), pkg.MARK, kind(sys.modules["swarmgate.nspkg"]),
      kind(sys.modules["swarmgate.nspkg.other"]))
"""


def test_packages_and_modules_from_their_pyc(tmp_path):
    site = tmp_path / "site-packages"
    (site / "swarmgate" / "pkg").mkdir(parents=True)
    (site / "swarmgate" / "nspkg").mkdir()   # a namespace package: no __init__, left to the normal import
    shutil.copy(ROOT / "swarmgate" / "__init__.py", site / "swarmgate" / "__init__.py")
    shutil.copy(ROOT / "swarmgate" / "hook_entry.py", site / "swarmgate" / "hook_entry.py")
    (site / "swarmgate" / "pkg" / "__init__.py").write_text("MARK = 'init ran'\n")
    (site / "swarmgate" / "pkg" / "mod.py").write_text("VALUE = 42\n")
    (site / "swarmgate" / "nspkg" / "other.py").write_text("X = 1\n")
    assert compileall.compile_dir(str(site), quiet=1)
    p = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, str(site)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "_PycLoader _PycLoader 42 True True init ran NamespaceLoader _PycLoader"
