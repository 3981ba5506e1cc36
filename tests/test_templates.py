"""`layercheck new`: the templates pass every check as generated, and the command refuses
bad names and existing files."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import not_ok, run_cli

import layercheck
from layercheck.cli import cli
from layercheck.contract.loading import discover, import_module

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
    assert report.ok and not_ok(report) == {}, not_ok(report)
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
