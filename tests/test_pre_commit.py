"""The pre-commit hook (`.pre-commit-hooks.yaml`): what pre-commit reads, and its command on
the files of a commit, a file that defines no layer among them."""

from __future__ import annotations

import shlex
import shutil

import yaml
from conftest import REPO, SAMPLES, run_cli


def _hook() -> dict:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    return hook


def test_the_hook_is_a_python_hook_on_python_files_run_once():
    hook = _hook()
    assert hook["id"] == "layercheck" and hook["language"] == "python" and hook["types"] == ["python"]
    assert hook["require_serial"] is True
    program, *_ = shlex.split(hook["entry"])
    assert program == "layercheck"  # the console script of pyproject.toml


def _commit(tmp_path):
    """The files of a commit: a layer, a buggy layer, a helper and a module of constants."""
    shutil.copy(SAMPLES / "prelu.py", tmp_path / "prelu.py")
    shutil.copy(SAMPLES / "buggy" / "srelu_missing_dx.py", tmp_path / "srelu_missing_dx.py")
    (tmp_path / "util.py").write_text("def helper(x):\n    return x\n")
    (tmp_path / "constants.py").write_text("WIDTH = 3\n")
    return ["prelu.py", "srelu_missing_dx.py", "util.py", "constants.py"]


def test_the_hooks_command_checks_the_layers_among_the_files_and_passes_over_the_rest(tmp_path):
    _, *args = shlex.split(_hook()["entry"])
    files = _commit(tmp_path)
    proc = run_cli(*args, *files, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "srelu_missing_dx.py" in proc.stdout
    assert "util.py" not in proc.stdout and "constants.py" not in proc.stdout

    proc = run_cli(*args, "prelu.py", "util.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_commit_without_a_layer_passes_and_says_so(tmp_path):
    _, *args = shlex.split(_hook()["entry"])
    _commit(tmp_path)
    proc = run_cli(*args, "util.py", "constants.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No layers in the files given." in proc.stdout


def test_without_only_layers_a_file_without_a_layer_is_an_error(tmp_path):
    _commit(tmp_path)
    proc = run_cli("run", "util.py", cwd=tmp_path)
    assert proc.returncode == 1 and "defines no layer" in proc.stdout
