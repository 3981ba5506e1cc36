"""A script run beside a clone named `layercheck` (issue 39, item 5).

The folder that holds the script is first on its `sys.path`, so `import layercheck` finds the
clone's folder before the installed package. The `src/` layout keeps the package out of that
folder; the clone's root `__init__.py` (the repository's, not the package's) hands the import
over to the installed package, or says in one line that there is none.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PACKAGE, REPO

SCRIPT = "import layercheck\nprint(layercheck.__file__)\nprint(layercheck.check_layer.__name__)\n"


def _beside_a_clone(tmp_path: Path) -> Path:
    """tmp_path/layercheck/ (the clone's root file), and tmp_path/script.py beside it."""
    clone = tmp_path / "layercheck"
    clone.mkdir()
    shutil.copy(REPO / "__init__.py", clone / "__init__.py")
    (tmp_path / "script.py").write_text(SCRIPT)
    return clone


def test_a_script_beside_a_clone_imports_the_installed_package(tmp_path):
    _beside_a_clone(tmp_path)
    run = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [str(PACKAGE / "__init__.py"), "check_layer"]


def test_where_none_is_installed_the_import_fails_saying_so_in_its_last_line(tmp_path):
    clone = _beside_a_clone(tmp_path)
    # -E -s -S: no PYTHONPATH, no site-packages: an interpreter without layercheck installed.
    run = subprocess.run(
        [sys.executable, "-E", "-s", "-S", "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (
        f"ImportError: layercheck is not installed for {sys.executable}: {clone} is a clone of its source, "
        f"not the package; install it with: {sys.executable} -m pip install -e {clone}"
    )
    assert "has no attribute" not in run.stderr
