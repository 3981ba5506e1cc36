"""The conventions people already write (DESIGN.md section 11), checked as written: function
pairs with a cache and classes that keep their gradients. The corpus in
tests/corpus_conventions/ (written for this project in those styles, correct and with the
bugs such code has) says in each file's docstring what layercheck must report; each folder's
cases.yaml is the config a user would write for it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, declared, layer_files, not_ok, one_line_usage_error, run_cli, run_isolated

import layercheck
from layercheck.checks import REGISTRY
from layercheck.contract.conventions import ConventionError, backward_name, pair_layer, pair_names
from layercheck.contract.loading import Convention, load_targets
from layercheck.errors import UsageError
from layercheck.results import Report, Status, TargetReport
from layercheck.running.batch import run_batch
from layercheck.running.listing import Listed, ListedTarget, Style, describe
from layercheck.running.plan import make_batch
from layercheck.settings.config import load_config, parse_config_text

CORPUS = REPO / "tests" / "corpus_conventions"
FOLDERS = ("pairs", "classes")
FILES = [path for folder in FOLDERS for path in layer_files(CORPUS / folder)]


@pytest.fixture(scope="module")
def corpus_reports() -> dict[str, TargetReport]:
    """Each corpus file's report, from one run of its folder with its cases.yaml, as a user
    runs it: the config alone (`layercheck run --config pairs/cases.yaml`), and the folder
    with its config (`layercheck run classes --config classes/cases.yaml`: each class by its
    entry's convention, not as the operation a folder's discovery takes it for)."""
    reports: dict[str, TargetReport] = {}
    for folder, targets in (("pairs", ()), ("classes", (str(CORPUS / "classes"),))):
        report: Report = run_batch(make_batch(targets, config=CORPUS / folder / "cases.yaml", jobs=2))
        for target in report.targets:
            assert target.source is not None
            reports[f"{folder}/{Path(target.source.path).name}"] = target
    return reports


def test_every_corpus_file_is_a_case_of_its_folders_config():
    assert len(FILES) >= 20
    for folder in FOLDERS:
        cases = CORPUS / folder / "cases.yaml"
        config = load_config(cases, check_names=tuple(REGISTRY))
        named = sorted(entry.path.name for entry in config.targets)
        assert named == sorted(path.name for path in layer_files(CORPUS / folder))


@pytest.mark.parametrize("path", FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_each_case_reports_what_its_docstring_says(path, corpus_reports):
    expected = declared(path)
    assert expected.correct != bool(expected.must_fail), f"{path.name}: 'Correct' or 'Must fail: <check>'"
    report = corpus_reports[f"{path.parent.name}/{path.name}"]
    assert report.error is None, report.error
    failed = {c.name for c in report.checks if c.status == Status.FAILED}
    assert failed == set(expected.must_fail), {c.name: c.message for c in report.checks if c.name in failed}
    if expected.correct:
        assert {c.status for c in report.checks} <= {Status.PASSED, Status.SKIPPED}
    assert report.kind == "layer"


def test_a_failure_names_the_arrays_as_the_code_does(corpus_reports):
    """A pair's gradients are dx, dout (its own names); a class's dvalues, dinputs."""
    pair = corpus_reports["pairs/relu_zeroes_dout.py"].result("backward_does_not_modify_inputs")
    assert pair.message.startswith("backward modifies its arguments: dout was modified in place")
    kept = corpus_reports["classes/relu_modifies_dvalues.py"].result("backward_does_not_modify_inputs")
    assert kept.message.startswith("backward modifies its arguments: dvalues was modified in place")
    size = corpus_reports["pairs/affine_dw_transposed.py"].result("backward_is_consistent_in_size")
    assert "the gradient of w has shape (3, 6) but w has shape (6, 3): it is transposed" in size.message


def test_training_mode_is_said_where_observations_mix_and_only_there(corpus_reports):
    train = corpus_reports["pairs/batchnorm_train.py"].result("predict_is_consistent_across_observations")
    assert train.status == Status.FAILED
    assert any(
        line.startswith("checked with bn_param={mode: train}: ")
        and line.endswith("with bn_param={mode: test} this check judges the inference path")
        for line in train.explanation
    )
    # A pair checked in test mode, and a bug that mixes nothing: no such sentence.
    for name in ("pairs/batchnorm_test.py", "pairs/relu_zeroes_dout.py"):
        for check in corpus_reports[name].checks:
            assert not any("training mode" in line for line in check.explanation), (name, check.name)


# -- finding the pair --------------------------------------------------------------------------


def _f(*args):
    return args


NAMES = {
    "affine_forward": _f,
    "affine_backward": _f,
    "conv_forward_naive": _f,
    "conv_backward_naive": _f,
    "lonely_forward": _f,
    "fwd": _f,
    "bwd": _f,
    "not_a_function_backward": 3,
    "not_a_function_forward": _f,
    "relu": _f,
    "relu_backward": lambda dA, cache: dA,
    "square": _f,
    "square_backward": lambda x, dy: dy,
}


@pytest.mark.parametrize(
    ("name", "backward", "pair"),
    [
        ("affine_forward", None, ("affine_forward", "affine_backward")),
        ("affine", None, ("affine_forward", "affine_backward")),
        ("conv_forward_naive", None, ("conv_forward_naive", "conv_backward_naive")),
        ("fwd", "bwd", ("fwd", "bwd")),
        ("lonely_forward", None, None),
        ("fwd", None, None),
        ("not_a_function_forward", None, None),
        ("fwd", "missing", None),
        ("relu", None, ("relu", "relu_backward")),  # deeplearning.ai's: the backward takes a cache
        ("square", None, None),  # a helper named after a plain function is no backward
    ],
)
def test_a_pair_is_found_by_its_names(name, backward, pair):
    assert pair_names(NAMES, name, backward) == pair


def test_the_backward_of_a_forward_replaces_its_last_forward():
    assert backward_name("forward_of_forward") == "forward_of_backward"
    assert backward_name("relu") is None


# -- the layer a pair becomes ------------------------------------------------------------------


def scale_forward(x, w, mode="train", extra=None):
    return x * w, (x, w)


def scale_backward(dout, cache):
    x, w = cache
    return {"dx": dout * w, "w": (dout * x).sum(axis=0)}


def test_a_pair_takes_its_arrays_in_order_and_its_other_arguments_by_name():
    layer = pair_layer(scale_forward, scale_backward, [((4, 3), "BC"), ((3,), "C")], ["mode"])
    assert layer.learnables == ("w",) and layer.input_indices == (0,) and layer.num_outputs == 1
    made = layer(mode="test")
    made.initialize()
    x = np.ones((4, 3))
    out, cache = made.forward(x)
    dx, dw = made.backward(x, out, np.ones((4, 3)), cache)  # a dict, keyed `dx` and `w`
    np.testing.assert_array_equal(dx, np.ones((4, 3)) * made.w)
    np.testing.assert_array_equal(dw, 4 * np.ones(3))
    assert made.output_format("BC") == "BC"


@pytest.mark.parametrize(
    ("layouts", "given", "said"),
    [
        (
            [((4, 3), "BC")] * 5,
            [],
            "scale_forward takes 4 argument(s) not given a value (x, w, mode, extra) but 5 layouts",
        ),
        ([((4, 3), "BC")], ["nope"], "scale_forward takes no argument 'nope'; it takes (x, w, mode, extra)"),
        ([((4, 3), "BC")], [], "scale_forward's argument w has no value: give it a layout (an array) or a value"),
    ],
)
def test_a_pair_that_does_not_fit_its_layouts_says_why(layouts, given, said):
    with pytest.raises(ConventionError, match=said.replace("(", r"\(").replace(")", r"\)")):
        pair_layer(scale_forward, scale_backward, layouts, given)


def test_a_pair_from_the_api_as_two_functions_and_as_a_file(tmp_path):
    report = layercheck.check_layer((scale_forward, scale_backward), ["4,3:BC", "3:C"])
    assert report.ok and report.status == "passed", report
    path = tmp_path / "course.py"
    path.write_text(
        textwrap.dedent(
            """\
            def affine_forward(x, w, b):
                return x @ w + b, (x, w)

            def affine_backward(dout, cache):
                x, w = cache
                return dout @ w.T, x.T @ dout, dout.sum(axis=0)
            """
        )
    )
    report = layercheck.check_layer(f"{path}:affine", ["5,4:BC", "4,3:UU", "3:U"])
    assert report.status == "passed", report
    assert [target.pair for target in load_targets(f"{path}:affine")] == [("affine_forward", "affine_backward")]
    with pytest.raises(UsageError, match="affine_forward takes no argument 'mode'"):
        layercheck.check_layer(f"{path}:affine", ["5,4:BC", "4,3:UU", "3:U"], args={"mode": "train"})


# -- classes that keep their gradients ---------------------------------------------------------


class Scaled:
    """Keeps dinputs and dscale; forward returns nothing."""

    def __init__(self, n):
        self.scale = np.linspace(0.5, 1.5, n)

    def forward(self, inputs):
        self.inputs = inputs
        self.output = inputs * self.scale

    def backward(self, dvalues):
        self.dscale = (dvalues * self.inputs).sum(axis=0)
        self.dinputs = dvalues * self.scale


MAPPING = {"output": "output", "input_gradient": "dinputs", "learnables": {"scale": "dscale"}}


def test_a_class_that_keeps_its_gradients_is_checked_by_its_mapping():
    report = layercheck.check_layer(Scaled, "6,4:BC", args={"n": 4}, convention=MAPPING)
    assert report.status == "passed", report
    assert report.result("gradients_are_numerically_correct").status == Status.PASSED


def test_a_gradient_the_class_did_not_store_is_named_as_a_broken_contract():
    report = layercheck.check_layer(Scaled, "6,4:BC", args={"n": 4}, convention={**MAPPING, "input_gradient": "dx"})
    result = report.result("function_syntaxes_are_correct")
    assert result.status == Status.FAILED
    assert result.message.startswith("Scaled.backward stored nothing in 'dx'")


def test_without_its_mapping_the_class_is_an_operation_and_list_targets_points_at_the_mapping():
    listed = ListedTarget("Scaled", Style.OPERATION, 3, ("inputs",), keeps_gradients=True)
    lines = describe(Listed((listed,)), "nn.py")
    assert lines[1] == "  Scaled (line 3): an operation (forward and backward, no predict), forward(inputs)"
    assert "map them in a config entry's convention: (docs/keeps-gradients.md)" in lines[2]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("{target: t.py, convention: {output: y}}", "targets[0].convention: applies to one target"),
        ("{target: 't.py:A', backward: b, convention: {}}", "has both 'backward' (a function pair) and 'convention'"),
        ("{target: 't.py:A', convention: {outputs: y}}", "unknown key 'outputs' (did you mean 'output'?)"),
        ("{target: 't.py:A', convention: {learnables: [w]}}", "learnables: must map each parameter's attribute"),
        ("{target: 't.py:A', backward: 3}", "targets[0].backward: must be a function's name"),
    ],
)
def test_a_config_entry_of_a_convention_is_validated(tmp_path, entry, said):
    (tmp_path / "t.py").write_text("class A:\n    pass\n")
    with pytest.raises(
        UsageError, match=said.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("?", r"\?")
    ):
        parse_config_text(f"targets:\n  - {entry}\n", "c.yaml", tmp_path, check_names=tuple(REGISTRY))


# -- the command line: list-targets, new, --backward, reproducers -------------------------------


def test_list_targets_shows_the_pairs_and_new_writes_templates_that_pass(tmp_path):
    listed = run_cli("list-targets", CORPUS / "pairs" / "conv_naive.py", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "conv_forward_naive (line" in listed.stdout and "conv_backward_naive(...)" in listed.stdout
    for convention in ("pair", "keeps-gradients"):
        wrote = run_cli("new", f"my_{convention.replace('-', '_')}", "--convention", convention, cwd=tmp_path)
        assert wrote.returncode == 0, wrote.stderr
        command = wrote.stdout.split("Check it with: layercheck ")[1].split()
        checked = run_cli(*command, "--json", "report.json", cwd=tmp_path)
        assert checked.returncode == 0, checked.stdout
        (target,) = json.loads((tmp_path / "report.json").read_text())["targets"]
        assert target["status"] == "passed"


def test_new_refuses_a_convention_with_the_options_of_another_template(tmp_path):
    one_line_usage_error(run_cli("new", "x", "--convention", "pair", "--state", "h", cwd=tmp_path), "--state")


def test_a_backward_of_another_name_is_given_with_backward(tmp_path):
    (tmp_path / "ops.py").write_text(
        "def square(x):\n    return x * x, x\n\n\ndef square_grad(dout, x):\n    return 2 * x * dout\n"
    )
    plain = run_cli("run", "ops.py:square", "--layout", "4,3:BC", cwd=tmp_path)
    assert plain.returncode == 1  # a plain function that returns a tuple: not this convention
    named = run_cli("run", "ops.py:square", "--backward", "square_grad", "--layout", "4,3:BC", cwd=tmp_path)
    assert named.returncode == 0, named.stdout
    missing = run_cli("run", "ops.py:square", "--backward", "nope", "--layout", "4,3:BC", cwd=tmp_path)
    assert "ops.py defines no function 'nope'" in missing.stdout


def test_a_reproducer_of_a_pair_and_of_a_class_needs_nothing_of_layercheck(tmp_path, numpy_alone):
    """The reproducer carries the code that makes the layer of the convention: it runs where
    NumPy alone is importable (the process is the subject)."""
    for folder, name in (("pairs", "relu_zeroes_dout.py"), ("classes", "softmax_diagonal.py")):
        cases = CORPUS / folder / "cases.yaml"
        (entry,) = [e for e in load_config(cases, check_names=tuple(REGISTRY)).targets if e.path.name == name]
        repro = tmp_path / f"repro_{folder}"
        run = run_cli("run", f"{entry.path}:{entry.name}", "--config", cases, "--repro", repro, cwd=tmp_path)
        assert run.returncode == 1, run.stdout
        (script,) = sorted(repro.glob("*.py"))
        proc = run_isolated(numpy_alone, str(script), cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout.rstrip().splitlines()[-1].startswith("FAILED: "), proc.stdout


def test_every_check_name_the_corpus_names_exists():
    for path in FILES:
        for name in declared(path).must_fail:
            assert name in REGISTRY, (path.name, name)


def test_the_convention_of_a_target_is_part_of_what_the_cache_keys_on():
    assert Convention(backward="b").to_data() != Convention().to_data()


def test_the_pytest_plugin_checks_the_pairs_and_classes_a_config_lists(tmp_path):
    """An item per check of each (pytest in a process of its own: the plugin's collection is
    the subject)."""
    config = tmp_path / "course.yaml"
    pairs, classes = CORPUS / "pairs", CORPUS / "classes"
    config.write_text(
        "targets:\n"
        f"  - target: {pairs / 'relu_zeroes_dout.py'}:relu_forward\n    layout: 4,6:BC\n"
        f"  - target: {classes / 'dense.py'}:Layer_Dense\n    args: {{n_inputs: 8, n_neurons: 4}}\n"
        "    layout: 16,8:BC\n"
        "    convention: {output: output, input_gradient: dinputs, learnables: {weights: dweights, biases: dbiases}}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--layercheck-config", str(config), "-rf"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},  # not an xdist worker's
    )
    assert proc.returncode == 1, proc.stdout
    summary = proc.stdout.split("short test summary info")[-1]
    failed = [line for line in summary.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 1 and "relu_zeroes_dout.py::relu_forward::backward_does_not_modify_inputs" in failed[0]
    counts = dict((word, int(n)) for n, word in re.findall(r"(\d+) (passed|failed)", proc.stdout.splitlines()[-1]))
    assert counts["failed"] == 1 and counts["passed"] >= 30, proc.stdout.splitlines()[-1]  # two targets' checks


def test_a_file_on_the_command_line_checks_the_pairs_its_config_names(tmp_path):
    """`layercheck run layers.py --config pairs.yaml` (DESIGN.md section 11): a file that
    defines no layer, only pairs, is checked by the config's entries naming them."""
    pairs = CORPUS / "pairs"
    report = tmp_path / "report.json"
    run = run_cli("run", "relu.py", "affine_unfinished_dw.py", "--config", "cases.yaml", "--json", report, cwd=pairs)
    assert run.returncode == 1, run.stdout
    targets = {t["target"]: t["status"] for t in json.loads(report.read_text())["targets"]}
    assert targets == {"relu.py:relu_forward": "passed", "affine_unfinished_dw.py:affine_forward": "failed"}


class StoresOnce(Scaled):
    """Stores dscale on its first backward only: later checks must not read that stale one."""

    def backward(self, dvalues):
        if not hasattr(self, "dscale"):
            self.dscale = (dvalues * self.inputs).sum(axis=0)
        self.dinputs = dvalues * self.scale


def test_a_gradient_stored_by_an_earlier_call_is_not_taken_for_this_calls():
    """Each check's layer is fresh (its first backward stores dscale); the second training step
    on one layer finds none stored (the stale one would repeat the first step's: a pass)."""
    report = layercheck.check_layer(StoresOnce, "6,4:BC", args={"n": 4}, convention=MAPPING)
    assert [c.name for c in report.checks if c.status == Status.FAILED] == ["backward_is_repeatable"]
    message = report.result("backward_is_repeatable").message
    assert "StoresOnce.backward left 'dscale' as layercheck filled it before the call (NaN)" in message, message


# -- what a review found: code of these styles that the wrapping must not fail ------------------


class WritesIntoItsBuffers:
    """Allocates its gradient buffers once and writes into them (Saito's `grads[0][...] = dW`),
    from a float64 weight: layercheck sets the weight at each precision it checks."""

    def __init__(self, n_in, n_out):
        self.W = np.linspace(-1, 1, n_in * n_out).reshape(n_in, n_out)
        self.dW = np.zeros_like(self.W)

    def forward(self, x):
        self.x = x
        return x @ self.W

    def backward(self, dout):
        self.dW[...] = self.x.T @ dout
        return dout @ self.W.T


class AddsToItsBuffers(WritesIntoItsBuffers):
    """PyTorch's style: gradients accumulate into buffers that `zero_grad` empties."""

    def zero_grad(self):
        self.dW = np.zeros_like(self.W)

    def backward(self, dout):
        self.dW += self.x.T @ dout
        return dout @ self.W.T


class FillsItsBuffersWithZeros(AddsToItsBuffers):
    """`zero_grad` fills the buffers the constructor allocated for its float64 weight, in
    place: at float32, layercheck's weight is float32, and so must the buffer be."""

    def zero_grad(self):
        self.dW.fill(0)


class ForgetsItsBuffer(WritesIntoItsBuffers):
    def backward(self, dout):
        return dout @ self.W.T


class PilesUp(WritesIntoItsBuffers):
    """nnfs's `self.dweights += ...` with no reset: gradients that pile up across calls."""

    def backward(self, dout):
        self.dW += self.x.T @ dout
        return dout @ self.W.T


class WritesAZeroGradient(WritesIntoItsBuffers):
    """Y = x W 0 + sum(x): the gradient of W, written in place, is zero, as it should be."""

    def forward(self, x):
        self.x = x
        return x @ (0 * self.W) + x.sum(axis=1, keepdims=True)

    def backward(self, dout):
        self.dW[...] = 0
        return dout.sum(axis=1, keepdims=True) * np.ones((1, self.W.shape[0]), dtype=dout.dtype)


_BUFFERS = {"args": {"n_in": 4, "n_out": 3}, "convention": {"learnables": {"W": "dW"}}}


@pytest.mark.parametrize(
    "cls",
    [WritesIntoItsBuffers, AddsToItsBuffers, FillsItsBuffersWithZeros, WritesAZeroGradient],
    ids=["writes into", "adds to", "zero_grad fills", "zero"],
)
def test_a_class_that_keeps_gradients_in_buffers_it_allocated_passes(cls):
    """A hunt: the attributes were set to None before backward, and `self.dW[...] = ...` raised.
    The class's own `zero_grad` resets its buffers where it has one; else the buffers are
    given filled with NaN, which a write overwrites (a zero gradient too)."""
    report = layercheck.check_layer(cls, "6,4:BC", **_BUFFERS)
    assert not_ok(report) == {}, not_ok(report)


@pytest.mark.parametrize("cls", [ForgetsItsBuffer, PilesUp], ids=["stores nothing", "piles up"])
def test_a_buffer_backward_does_not_overwrite_is_said_so(cls):
    """A gradient added to what an earlier call left, with no reset, and none stored at all,
    leave the NaN the buffer was given: the failure names the attribute, never a pass."""
    report = layercheck.check_layer(cls, "6,4:BC", **_BUFFERS)
    assert report.status == "failed", report
    message = report.result("backward_does_not_error").message
    assert f"{cls.__name__}.backward left 'dW' as layercheck filled it before the call (NaN)" in message, message


def embedding_forward(x, W):
    """CS231n's word embedding: integer indices in, rows of W out; its backward gives dW alone."""
    return W[x], (x, W.shape)


def embedding_backward(dout, cache):
    x, shape = cache
    dW = np.zeros(shape, dtype=dout.dtype)
    np.add.at(dW, x, dout)
    return dW


def test_a_pair_with_an_integer_input_whose_backward_returns_the_others_gradients_only():
    report = layercheck.check_layer((embedding_forward, embedding_backward), ["3,4:BT:int=0..9", "10,5:UC"])
    assert report.status == "passed", report


def embedding_adds_once_backward(dout, cache):
    """`dW[x] += dout` keeps one of each repeated index (np.add.at adds them all)."""
    x, shape = cache
    dW = np.zeros(shape, dtype=dout.dtype)
    dW[x] += dout
    return dW


@pytest.mark.parametrize("seed", range(3))
def test_indices_repeat_so_that_an_embedding_that_adds_a_repeat_once_fails_at_a_real_vocabulary(seed):
    """A hunt for false passes: indices drawn uniformly from 0..999, twelve of them, seldom
    repeat, and `dW[x] += dout` passed at every seed. Integer inputs are drawn with repeats."""
    layouts = ["3,4:BT:int=0..999", "1000,5:UC"]
    report = layercheck.check_layer((embedding_forward, embedding_backward), layouts, seed=seed)
    assert report.status == "passed", report
    report = layercheck.check_layer((embedding_forward, embedding_adds_once_backward), layouts, seed=seed)
    assert report.result("gradients_are_numerically_correct").status == "failed"


def leaky_forward(x, *, slope=0.1):
    return np.where(x > 0, x, slope * x), x


def leaky_backward(grad, cache, eps=0.0):
    """A gradient parameter not named d..., and a defaulted parameter after the cache."""
    return grad * np.where(cache > 0, 1.0, 0.1).astype(grad.dtype)


def test_a_backward_with_a_defaulted_parameter_and_a_keyword_only_argument_of_the_forward():
    report = layercheck.check_layer((leaky_forward, leaky_backward), "4,5:BC", args={"slope": 0.1})
    assert report.status == "passed", report
    with pytest.raises(UsageError, match=r"leaky_forward takes no argument 'nope'; it takes \(x, slope\)"):
        layercheck.check_layer((leaky_forward, leaky_backward), "4,5:BC", args={"nope": 1})


def mutating_leaky_backward(grad, cache):
    grad[cache <= 0] *= 0.1
    return grad


def test_a_gradient_is_named_by_the_backwards_own_parameter():
    report = layercheck.check_layer((leaky_forward, mutating_leaky_backward), "4,5:BC")
    message = report.result("backward_does_not_modify_inputs").message
    assert message.startswith("backward modifies its arguments: grad was modified in place"), message


class TrainingDense(Scaled):
    """nnfs from chapter 17 on: forward(inputs, training); and a domain it declares."""

    input_domain = (0.5, None)

    def forward(self, inputs, training):
        self.inputs = inputs
        self.output = np.log(inputs) * self.scale

    def backward(self, dvalues):
        self.dscale = (dvalues * np.log(self.inputs)).sum(axis=0)
        self.dinputs = dvalues * self.scale / self.inputs


def test_a_class_takes_its_other_arguments_and_keeps_its_declarations():
    mapping = {**MAPPING, "arguments": {"training": True}}
    report = layercheck.check_layer(TrainingDense, "6,4:BC", args={"n": 4}, convention=mapping)
    assert report.status == "passed", report  # log on (0.5, inf): the domain it declares


def test_backward_names_the_backward_of_a_named_pair_only(tmp_path):
    (tmp_path / "ops.py").write_text("def f_forward(x):\n    return x, x\n")
    with pytest.raises(UsageError, match="--backward g is the backward of the function pair a TARGET names"):
        make_batch([str(tmp_path / "ops.py")], backward="g")
    with pytest.raises(UsageError, match="backward: names the backward of the pair a 'path.py:NAME' names"):
        layercheck.check_layer(Scaled, "6,4:BC", args={"n": 4}, backward="g")


def test_a_workers_malformed_listing_is_the_modules_error_not_a_crash():
    assert Listed.from_dict({"error": 5, "targets": []}).error.startswith("the worker's answer is malformed")
    assert Listed.from_dict({"error": None, "targets": [{"name": "x"}]}).error.startswith("the worker's answer")


class BatchCentered(Scaled):
    """Centers over the batch when training: observations mix by design there."""

    def forward(self, inputs, training):
        self.inputs = inputs
        self.output = (inputs - inputs.mean(axis=0) if training else inputs) * self.scale

    def backward(self, dvalues):
        self.dscale = (dvalues * (self.inputs - self.inputs.mean(axis=0))).sum(axis=0)
        centered = dvalues * self.scale
        self.dinputs = centered - centered.mean(axis=0)


@pytest.mark.parametrize("training", [True, False])
def test_a_class_in_training_mode_is_said_to_be_where_observations_mix(training):
    mapping = {**MAPPING, "arguments": {"training": training}}
    report = layercheck.check_layer(
        BatchCentered, "6,4:BC", args={"n": 4}, convention=mapping, checks=["predict_is_consistent_across_observations"]
    )
    (result,) = report.checks
    said = [line for line in result.explanation if line.startswith("checked with arguments: {training: true}: ")]
    assert (result.status, bool(said)) == ((Status.FAILED, True) if training else (Status.PASSED, False))
    # The way to the inference path is the class's own argument, not a pair's `mode`.
    assert all(line.endswith("with arguments: {training: false} this check judges the inference path") for line in said)


def test_a_check_of_forward_that_would_repeat_predicts_verdict_is_skipped_saying_which_checks_it(corpus_reports):
    """A pair's and a class's training pass is the call predict makes: one failure, not two."""
    pair = corpus_reports["pairs/batchnorm_train.py"]
    skipped = pair.result("forward_is_consistent_across_observations")
    assert (skipped.status, skipped.message) == (
        Status.SKIPPED,
        "forward and predict make the same call of batchnorm_forward's code: "
        "predict_is_consistent_across_observations checks it",
    )
    assert pair.result("predict_is_consistent_across_observations").status == Status.FAILED
    kept = corpus_reports["classes/dense.py"].result("forward_is_consistent_in_type")
    assert kept.status == Status.SKIPPED and kept.message.endswith("predict_is_consistent_in_type checks it")
    # forward_does_not_error stays: the calls the backward checks make are forward's.
    assert pair.result("forward_does_not_error").status == Status.PASSED


def activation_forward(A_prev, W, b, activation="relu"):
    """Andrew Ng's course, a sum over the observations (no 1/m): the activation chosen by an
    argument that the backward takes too."""
    Z = W @ A_prev + b
    A = np.maximum(Z, 0) if activation == "relu" else 1 / (1 + np.exp(-Z))
    return A, ((A_prev, W), (Z, A))


def activation_backward(dA, cache, activation):
    (A_prev, W), (Z, A) = cache
    dZ = dA * (Z > 0) if activation == "relu" else dA * A * (1 - A)
    return W.T @ dZ, dZ @ A_prev.T, dZ.sum(axis=1, keepdims=True)


def activation_backward_defaulted(dA, cache, activation="relu"):
    return activation_backward(dA, cache, activation)


@pytest.mark.parametrize("backward", [activation_backward, activation_backward_defaulted], ids=["required", "default"])
def test_a_backward_that_takes_the_forwards_other_argument_gets_its_value(backward):
    """A hunt: `--arg activation=sigmoid` reached the forward alone; a backward with a default
    ran relu's and failed, and one that requires it was read as taking two gradients."""
    for activation in ("sigmoid", "relu"):
        report = layercheck.check_layer(
            (activation_forward, backward), ["4,6:CB", "3,4:UU", "3,1:UU"], args={"activation": activation}
        )
        assert not_ok(report) == {}, (activation, not_ok(report))
