"""`layercheck new`: the templates pass every check as generated, and the command refuses
bad names and existing files."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import not_ok, run_cli

import layercheck
from layercheck.cli import cli
from layercheck.contract.loading import discover, import_module
from layercheck.errors import UsageError
from layercheck.templates import layer_template, write_new

LAYERS = {
    "plain": [],
    "scaled": ["--learnables", "alpha"],
    "scaled_backward": ["--learnables", "alpha,beta,gamma", "--backward"],
    "stateful": ["--state", "h"],
    "everything": ["--learnables", "w,b", "--state", "h,c", "--backward"],
    "state_backward": ["--state", "h", "--backward"],
}
FUNCTIONS = {"op": ["--function"], "op_params": ["--function", "--learnables", "a,b"]}


def generate(tmp_path, name, options, file=None):
    result = CliRunner().invoke(cli, ["new", name, *options, "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    path = tmp_path / (file or f"{name}.py")
    assert str(path) in result.output
    (found,) = discover(import_module(path))
    return found[1]


@pytest.mark.parametrize("name", LAYERS)
def test_layer_template_passes_every_check(tmp_path, name):
    layer = generate(tmp_path, name, LAYERS[name])
    report = layercheck.check_layer(layer, layer.example_layout)
    undecided = not_ok(report)
    if "--learnables" in LAYERS[name] and "--backward" not in LAYERS[name]:
        # Learnables and no backward cannot be trained: the report says to write one.
        gradients = undecided.pop("gradients_are_numerically_correct")
        assert gradients.startswith("incomplete: not checked: the layer has learnables (alpha)"), gradients
    assert report.ok and undecided == {}, undecided
    statuses = {c.name: c.status for c in report.checks}
    if "--backward" in LAYERS[name]:
        assert statuses["gradients_are_numerically_correct"] == "passed"
    if "--state" in LAYERS[name]:
        assert statuses["reset_state_does_not_error"] == "passed"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_template_passes_every_check(tmp_path, name):
    operation = generate(tmp_path, name, FUNCTIONS[name])
    report = layercheck.check_function(operation, operation.example_layout)
    assert report.kind == "function" and report.ok and not_ok(report) == {}, not_ok(report)
    assert report.result("backward_respects_compute_gradients").status == "passed"


@pytest.mark.parametrize("name", [*LAYERS, *FUNCTIONS])
def test_templates_take_the_array_module_portably(tmp_path, name):
    """cupy.get_array_module, imported once at module level and guarded for machines without
    CuPy; never X.__array_namespace__(), which cupy.ndarray and NumPy 1.x arrays lack."""
    generate(tmp_path, name, {**LAYERS, **FUNCTIONS}[name])
    source = (tmp_path / f"{name}.py").read_text()
    assert "__array_namespace__" not in source and "import cupy" not in source
    assert source.count("from cupy import get_array_module") == 1
    assert (
        "\ntry:  # CuPy is optional" in source and "\nexcept ImportError:\n    def get_array_module(*arrays):" in source
    )
    assert "xp = get_array_module(X)" in source


def test_names_become_a_class_and_a_module(tmp_path):
    layer = generate(tmp_path, "WeightedSum", ["--learnables", "alpha"], file="weighted_sum.py")
    assert layer.__name__ == "WeightedSum"
    assert generate(tmp_path, "leaky_unit", []).__name__ == "LeakyUnit"


def test_an_existing_file_is_never_overwritten(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("# mine\n")
    proc = run_cli("new", "mine", "-o", tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "exists" in proc.stderr
    assert path.read_text() == "# mine\n"


def test_a_folder_up_from_one_that_is_not_there_is_where_reports_would_go(tmp_path, monkeypatch):
    """`-o nope/..`: the working folder, as for a report (`reporters.files.destination`); no
    folder `nope` is made, even when the file is refused."""
    monkeypatch.chdir(tmp_path)
    written = write_new("nope/..", layer_template("Mine", (), (), False))
    assert written == tmp_path / "mine.py" and written.exists() and not (tmp_path / "nope").exists()
    with pytest.raises(UsageError, match=r"^nope/\.\./mine\.py exists; layercheck new never overwrites a file"):
        write_new("nope/..", layer_template("Mine", (), (), False))
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize(
    "options",
    [
        ["1layer"],
        ["class"],
        ["ok", "--learnables", "X"],
        ["ok", "--learnables", "a,a"],
        ["ok", "--state", "h", "--learnables", "h"],
        ["ok", "--learnables", "dLdY"],
        ["ok", "--function", "--state", "h"],
        ["ok", "--state", "not-a-name"],
    ],
    ids=lambda options: " ".join(options),
)
def test_bad_names_exit_2_with_one_line(tmp_path, options):
    proc = run_cli("new", *options, "-o", tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("Error:") and proc.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "options, said",
    [
        (["class"], "NAME 'class' is a Python keyword"),
        (["None"], "NAME 'None' is a Python keyword"),
        (["none"], "NAME 'none' makes the class None, a Python keyword"),
        (["ok", "--learnables", "lambda"], "--learnables 'lambda' is a Python keyword"),
        (["ok", "--state", "if"], "--state 'if' is a Python keyword"),
        (["1layer"], "NAME '1layer' is not a Python identifier"),
        (["ok", "--state", "not-a-name"], "--state 'not-a-name' is not a Python identifier"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_a_keyword_is_called_a_keyword(tmp_path, options, said):
    """`layercheck new class` once said 'class' was not an identifier: it is one, and a keyword."""
    proc = run_cli("new", *options, "-o", tmp_path)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert "not a Python identifier" not in proc.stderr or "is not a Python identifier" in said


@pytest.mark.parametrize("name", ["match", "case", "type"])
def test_soft_keywords_are_names(tmp_path, name):
    """match, case, type and _ are keywords only inside the statements that use them."""
    layer = generate(tmp_path, name, ["--learnables", "match,_", "--state", "type", "--backward"])
    assert layer.__name__ == name.capitalize()
    assert layercheck.check_layer(layer, layer.example_layout).ok


def _shell(command: str, cwd) -> subprocess.CompletedProcess:
    """`command` as a user pastes it, with the layercheck of this interpreter first on PATH."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("folder", [".", "my layers"])
def test_the_command_new_recommends_passes(tmp_path, folder):
    """End to end, as the README shows it: `layercheck new`, then the command it prints, and the
    README's command with a class, a layout and a constructor argument the template takes (the
    README once gave --arg num_channels=4, which the template's constructor refuses)."""
    made = _shell(f"layercheck new my_layer --learnables w,b --backward -o {shlex.quote(folder)}", tmp_path)
    assert made.returncode == 0, made.stderr
    recommended = made.stdout.split("Check it with: ", 1)[1].strip()
    checked = _shell(recommended, tmp_path)
    assert checked.returncode == 0 and "PASSED" in checked.stdout, checked.stdout + checked.stderr
    path = shlex.quote(str(Path(folder) / "my_layer.py"))
    spelled_out = _shell(f"layercheck run {path}:MyLayer --layout 4,4,3,2:SSCB --arg name=first", tmp_path)
    assert spelled_out.returncode == 0, spelled_out.stdout + spelled_out.stderr
