"""Nothing is written beside the user's files, and a module is judged from its current source.

DESIGN section 7: checking a folder of layers writes no `__pycache__` into it (nor into the
folders of the helper modules the layers import), and a module edited without changing its size
and modification time (in the same second, or by a checkout that keeps times) is never judged
from the stale `.pyc` Python would otherwise trust: a wrong gradient must fail.

The CLI runs are subprocesses with PYTHONDONTWRITEBYTECODE removed from their environment (CI
machines often set it, which would hide a `__pycache__` written beside the user's files).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import GRADIENTS, run_cli

import layercheck
from layercheck.contract import fresh
from layercheck.contract.loading import import_module

LAYER = '''\
"""A square layer whose backward takes its factor from helper modules."""

import helper
from helpers import constants


class Square:
    example_layout = "4,3:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        from helpers import late  # imported while the layer runs, not at import

        return dLdY * helper.factor() * X * late.ONE * constants.ONE
'''
HELPER = "def factor():\n    return 2.0\n"
WRONG_HELPER = "def factor():\n    return 3.0\n"


def _layers(folder: Path) -> Path:
    """A folder of layers as a user has it: the layer, a sibling helper module, a package."""
    folder.mkdir()
    (folder / "square.py").write_text(LAYER, encoding="utf-8")
    (folder / "helper.py").write_text(HELPER, encoding="utf-8")
    (folder / "helpers").mkdir()
    (folder / "helpers" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "helpers" / "constants.py").write_text("ONE = 1.0\n", encoding="utf-8")
    (folder / "helpers" / "late.py").write_text("ONE = 1.0\n", encoding="utf-8")
    return folder


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def _check(target: Path, report: Path):
    proc = run_cli("run", target, "--json", report, "--seed", "0", env=_environment())
    data = json.loads(report.read_text(encoding="utf-8"))
    return proc, data


def _status(data: dict, check: str) -> str:
    (target,) = data["targets"]
    return {c["name"]: c["status"] for c in target["checks"]}[check]


def _caches(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.name == "__pycache__" or p.suffix in (".pyc", ".pyo"))


def _rewrite_keeping_stamp(path: Path, text: str) -> None:
    """`path` rewritten with `text` of the same byte size, its modification time put back: what
    an edit in the same second, or a checkout that keeps times, leaves."""
    before = path.stat()
    assert len(text.encode("utf-8")) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, int(after.st_mtime)) == (before.st_size, int(before.st_mtime))


def _stale_pyc(path: Path) -> Path:
    """The .pyc Python itself would write for `path` now (a timestamp pyc, in __pycache__)."""
    cfile = Path(importlib.util.cache_from_source(str(path)))
    py_compile.compile(
        str(path), cfile=str(cfile), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP
    )
    return cfile


# -- layercheck run ------------------------------------------------------------------------------


def test_checking_a_folder_writes_no_bytecode_beside_the_users_files(tmp_path):
    folder = _layers(tmp_path / "layers")
    proc, data = _check(folder, tmp_path / "report.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [t["status"] for t in data["targets"]] == ["passed"]
    assert _caches(folder) == []


def test_a_layer_edited_without_changing_size_or_time_is_judged_from_its_source(tmp_path):
    folder = _layers(tmp_path / "layers")
    layer = folder / "square.py"
    proc, data = _check(layer, tmp_path / "first.json")
    assert proc.returncode == 0 and _status(data, GRADIENTS) == "passed", proc.stdout + proc.stderr
    cached = _stale_pyc(layer)  # from the correct version, with its stamp
    _rewrite_keeping_stamp(layer, LAYER.replace("helper.factor() * X", "helper.factor() / X"))
    proc, data = _check(layer, tmp_path / "second.json")
    assert proc.returncode == 1 and _status(data, GRADIENTS) == "failed", proc.stdout + proc.stderr
    assert cached.read_bytes()  # the stale file is left as it was, neither read nor rewritten


def test_a_helper_edited_without_changing_size_or_time_is_judged_from_its_source(tmp_path):
    folder = _layers(tmp_path / "layers")
    helper = folder / "helper.py"
    proc, data = _check(folder / "square.py", tmp_path / "first.json")
    assert proc.returncode == 0 and _status(data, GRADIENTS) == "passed", proc.stdout + proc.stderr
    _stale_pyc(helper)
    _rewrite_keeping_stamp(helper, WRONG_HELPER)
    proc, data = _check(folder / "square.py", tmp_path / "second.json")
    assert proc.returncode == 1 and _status(data, GRADIENTS) == "failed", proc.stdout + proc.stderr


BY_PATH = '''\
"""A square layer whose factor comes from a helper it loads by path, as scripts often do."""

import importlib.util
from pathlib import Path


class Square:
    example_layout = "4,3:CB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        spec = importlib.util.spec_from_file_location("by_path", Path(__file__).parent / "helper.py")
        helper = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(helper)
        return dLdY * helper.factor() * X
'''


def test_a_helper_loaded_by_path_is_judged_from_its_source_and_gets_no_bytecode(tmp_path):
    """`spec_from_file_location` hands Python's own loader, from no finder: it too compiles the
    user's file from source in a worker, and writes nothing beside it."""
    folder = tmp_path / "layers"
    folder.mkdir()
    (folder / "square.py").write_text(BY_PATH, encoding="utf-8")
    helper = folder / "helper.py"
    helper.write_text(HELPER, encoding="utf-8")
    proc, data = _check(folder / "square.py", tmp_path / "first.json")
    assert proc.returncode == 0 and _status(data, GRADIENTS) == "passed", proc.stdout + proc.stderr
    assert _caches(folder) == []
    _stale_pyc(helper)
    _rewrite_keeping_stamp(helper, WRONG_HELPER)
    proc, data = _check(folder / "square.py", tmp_path / "second.json")
    assert proc.returncode == 1 and _status(data, GRADIENTS) == "failed", proc.stdout + proc.stderr


def test_a_late_import_edited_without_changing_size_or_time_is_judged_from_its_source(tmp_path):
    folder = _layers(tmp_path / "layers")
    late = folder / "helpers" / "late.py"
    _stale_pyc(late)
    _rewrite_keeping_stamp(late, "ONE = 1.5\n")
    proc, data = _check(folder / "square.py", tmp_path / "report.json")
    assert proc.returncode == 1 and _status(data, GRADIENTS) == "failed", proc.stdout + proc.stderr
    assert _caches(folder) == [late.parent / "__pycache__", Path(importlib.util.cache_from_source(str(late)))]


# -- in this process -----------------------------------------------------------------------------


def test_import_module_compiles_the_users_modules_from_source_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    folder = _layers(tmp_path / "layers")
    helper = folder / "helper.py"
    _stale_pyc(helper)
    _rewrite_keeping_stamp(helper, WRONG_HELPER)
    sys.modules.pop("helper", None)
    sys.modules.pop("helpers", None)
    try:
        module = import_module(folder / "square.py")
        assert module.helper.factor() == 3.0  # the source, not the stale .pyc's 2.0
        assert isinstance(module.__spec__.loader, fresh.SourceOnlyLoader)
        assert isinstance(module.helper.__spec__.loader, fresh.SourceOnlyLoader)
    finally:
        for name in ("helper", "helpers", "helpers.constants", "helpers.late"):
            sys.modules.pop(name, None)
    assert _caches(folder) == [folder / "__pycache__", Path(importlib.util.cache_from_source(str(helper)))]


def test_library_and_layercheck_modules_keep_their_loaders():
    fresh.install()
    finder = fresh.UserSourceFinder()
    assert finder.find_spec("json", None) is None  # the standard library
    assert finder.find_spec("yaml", None) is None  # site-packages
    spec = importlib.machinery.PathFinder.find_spec("layercheck.safetext", layercheck.__path__)
    assert spec is not None and fresh.is_user_file(spec.origin) is False
    assert sum(isinstance(f, fresh.UserSourceFinder) for f in sys.meta_path) == 1  # installed once
    meta = sys.meta_path
    assert meta.index(next(f for f in meta if isinstance(f, fresh.UserSourceFinder))) + 1 == meta.index(
        importlib.machinery.PathFinder
    )


def test_the_api_leaves_the_import_system_alone():
    """check_layer receives an object already imported: it installs nothing process-wide."""
    before = list(sys.meta_path)

    class Double:
        def predict(self, X):
            return 2 * X

    report = layercheck.check_layer(Double, "3,2:CB", checks=["predict_does_not_error"], device="cpu")
    assert report.status == "passed"
    assert sys.meta_path == before


@pytest.mark.parametrize("write", [False, True])
def test_the_loader_neither_reads_nor_writes_bytecode(tmp_path, monkeypatch, write):
    monkeypatch.setattr(sys, "dont_write_bytecode", not write)
    path = tmp_path / "plain.py"
    path.write_text("VALUE = 1\n", encoding="utf-8")
    cfile = _stale_pyc(path)
    _rewrite_keeping_stamp(path, "VALUE = 2\n")
    stale = cfile.read_bytes()
    loader = fresh.SourceOnlyLoader("plain_for_test", str(path))
    module = ModuleType("plain_for_test")
    loader.exec_module(module)
    assert module.VALUE == 2
    assert cfile.read_bytes() == stale and sorted(tmp_path.rglob("*.pyc")) == [cfile]


_USES_A_SIBLING = """from {dots}helper import scale


class {name}:
    example_layout = "3,4:CB"

    def predict(self, X):
        return scale() * X

    def backward(self, X, Y, dLdY, memory):
        return {gain} * dLdY
"""


def test_a_layer_of_a_package_is_imported_as_its_package_imports_it_relative_imports_too(tmp_path):
    """A hunt: `from .helper import scale` raised "attempted relative import with no known parent
    package", and an absolute import of the package worked only from its parent folder. A
    module of a package is imported by its dotted name; its reproducer imports it so too."""
    pkg = tmp_path / "project" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for folder in (pkg, pkg / "sub"):
        (folder / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("def scale():\n    return 2.0\n")
    (pkg / "near.py").write_text(_USES_A_SIBLING.format(dots=".", name="Near", gain="scale()"))
    (pkg / "sub" / "deep.py").write_text(_USES_A_SIBLING.format(dots="..", name="Deep", gain=3))
    for cwd in (tmp_path / "project", pkg, tmp_path):
        proc = run_cli("run", pkg / "near.py", "-q", cwd=cwd)
        assert proc.returncode == 0, (cwd, proc.stdout)
    repro = tmp_path / "repro"
    proc = run_cli("run", pkg / "sub" / "deep.py", "-q", "--repro", repro, "--checks", GRADIENTS, cwd=tmp_path)
    assert proc.returncode == 1 and "off by a constant factor 3/2" in proc.stdout, proc.stdout
    (script,) = repro.glob("*.py")
    again = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert again.returncode == 1 and again.stdout.rstrip().splitlines()[-1].startswith("FAILED"), (
        again.stdout + again.stderr
    )


_RELOADS_ITSELF = """import importlib
import sys

import numpy as np


class Reloads:
    example_layout = "4,3:CB"

    def predict(self, X):
        importlib.reload(sys.modules[type(self).__module__])  # a notebook's habit
        return 2 * X

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY
"""


def test_a_layer_that_reloads_its_own_module_is_checked(tmp_path):
    """A hunt for false alarms: importlib.reload of the layer's module raised "spec not found
    for the module 'layercheck_user_...'" (the name layercheck imports it under)."""
    (tmp_path / "reloads.py").write_text(_RELOADS_ITSELF)
    proc = run_cli("run", tmp_path / "reloads.py", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
