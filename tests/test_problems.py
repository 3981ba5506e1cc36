"""The failures that are one problem with one value a method returned (an updated state, a
value's type): typed (`problems.Problem`) from the check to every report, their message rendered
from the problem wherever a result is made, a report file's too, through one codec."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import report_json, schema_errors

import layercheck
from layercheck.findings import problems
from layercheck.findings.problems import (
    BatchSize,
    Declared,
    FormatRank,
    MaskFault,
    MaskProblem,
    Modification,
    NonFinite,
    Parity,
    SizesDiffer,
    StateFault,
    StateProblem,
    TypeFault,
    TypeProblem,
)
from layercheck.numerics.compare import Mismatch
from layercheck.numerics.reading import MalformedFinding
from layercheck.results import CheckResult, MalformedReport, Status


class Troubled:
    """predict returns its state with an axis too many and its output upcast to float64;
    backward keeps dL/dY's dtype, so its gradient is float64 at float32 too."""

    state = ("S",)

    def __init__(self):
        self.S = np.zeros((4, 1))

    def predict(self, X):
        return X.astype(np.float64) + self.S, X.sum(axis=1, keepdims=True)[None]

    def backward(self, X, Y, dLdY, dLdS, memory):
        return dLdY, dLdS


CHECKS = ("predict_returns_valid_states", "predict_is_consistent_in_type", "backward_is_consistent_in_type")


@pytest.fixture(scope="module")
def report():
    return layercheck.check_layer(Troubled, "4,3:CB", checks=list(CHECKS))


def test_each_failure_is_typed_and_its_message_rendered_from_it(report):
    state, output, gradient = (report.result(check) for check in CHECKS)
    assert all(r.status is Status.FAILED and r.message == r.problem.sentence() for r in (state, output, gradient))
    assert state.problem == StateProblem(
        "S", "predict", "float64", "NumPy float64 array of shape (1, 4, 1)", StateFault.SHAPE, "(4, 1)"
    )
    assert state.message == (
        "predict returns updated S as NumPy float64 array of shape (1, 4, 1) with float64 inputs, but state S has shape "
        "(4, 1): an updated state keeps its shape"
    )
    assert output.problem == TypeProblem("predict output Y", "float32", TypeFault.DTYPE, "float64", "float32")
    assert output.message == "predict output Y with float32 inputs is float64, expected float32"
    assert gradient.problem.given == "Y" and gradient.problem.gradient
    assert gradient.message == (
        "gradient dLdX with float32 inputs is float64, expected float32; the dL/dY backward was given is "
        "float64, as predict's output Y is (see predict_is_consistent_in_type)"
    )


def test_the_details_hold_the_problem_beside_the_checks_own_keys(report):
    output = report.result("predict_is_consistent_in_type")
    details = output.details
    assert (details["method"], details["output"], details["dtype"]) == ("predict", "Y", "float32")
    assert (details["value"], details["inputs"], details["fault"], details["returned"]) == (
        "predict output Y",
        "float32",
        "dtype",
        "float64",
    )
    assert problems.read(output.name, details) == output.problem


@pytest.mark.parametrize("check", CHECKS)
def test_a_report_read_back_renders_the_same_message_and_replaces_a_forged_one(report, check):
    result = report.result(check)
    data = json.loads(json.dumps(result.to_dict()))
    again = CheckResult.from_dict(data)
    assert again.problem == result.problem and again.message == result.message
    assert CheckResult.from_dict({**data, "message": "all is well"}).message == result.message


@pytest.mark.parametrize(
    ("check", "change", "said"),
    [
        ("predict_returns_valid_states", {"fault": "color"}, "fault is 'color', not one of not_array, shape, dtype"),
        ("predict_returns_valid_states", {"state": 3}, "state is 3, not a string"),
        ("predict_is_consistent_in_type", {"gradient": "yes"}, "gradient is 'yes', not true or false"),
        ("backward_is_consistent_in_type", {"given_by": None}, "given_by is None, not a string"),
    ],
)
def test_a_forged_problem_is_refused_in_one_line(report, check, change, said):
    data = report.result(check).to_dict()
    data["details"].update(change)
    with pytest.raises(MalformedReport) as raised:
        CheckResult.from_dict(data)
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_a_problem_lacking_a_field_or_in_a_check_that_did_not_fail_is_refused(report):
    data = report.result("predict_returns_valid_states").to_dict()
    del data["details"]["current"]
    with pytest.raises(MalformedReport, match="the details lack 'current'"):
        CheckResult.from_dict(data)
    data = report.result("predict_returns_valid_states").to_dict()
    with pytest.raises(MalformedReport, match="a problem in a check that did not fail"):
        CheckResult.from_dict({**data, "status": "passed"})


def test_a_report_of_the_previous_version_keeps_the_message_it_carries(report):
    """It held the state's name and the dtype alone, not the problem."""
    data = report.result("predict_returns_valid_states").to_dict()
    data["details"] = {"state": "S", "dtype": "float64"}
    data["message"] = "predict returns updated S as said then"
    again = CheckResult.from_dict(data)
    assert again.problem is None and again.message == data["message"]


def test_other_checks_details_are_not_read_as_a_problem():
    assert problems.read("outputs_are_finite", {"fault": "shape"}) is None
    with pytest.raises(MalformedFinding):
        problems.read("forward_returns_valid_states", {"fault": "shape"})


def test_a_type_problem_on_the_gpu_says_so():
    problem = TypeProblem("predict output Y", "float32", TypeFault.OTHER_MODULE, "numpy.ndarray", "cupy", on_gpu=True)
    assert problem.sentence().endswith("but the inputs were cupy arrays (on the GPU)")
    assert problems.read("outputs_stay_on_device", problem.to_details()) == problem


def test_the_reports_problems_fit_the_published_schema(report, careless):
    data = report_json(report, careless)
    assert schema_errors(data) == []
    data["targets"][0]["checks"][0]["details"]["fault"] = "color"
    assert schema_errors(data)
    finite = next(c for c in data["targets"][1]["checks"] if c["name"] == "outputs_are_finite")
    data["targets"][0]["checks"][0]["details"]["fault"] = "shape"
    finite["details"]["elements"] = 0
    assert schema_errors(data)


class Careless:
    """predict takes a log (NaN below 0: no input domain declared) and scales X in place;
    forward returns its output flattened; backward replaces dL/dY by a list."""

    def predict(self, X):
        X *= 2
        return np.log(X)

    def forward(self, X):
        return np.log(np.abs(X) + 1).reshape(-1), None

    def backward(self, X, Y, dLdY, memory):
        return dLdY.reshape(X.shape) / (np.abs(X) + 1)


CARELESS = ("outputs_are_finite", "predict_does_not_modify_inputs", "forward_predict_are_consistent_in_size")


@pytest.fixture(scope="module")
def careless():
    return layercheck.check_layer(Careless, "4,3:CB", checks=list(CARELESS))


def test_non_finite_outputs_modified_inputs_and_sizes_are_typed(careless):
    finite, modified, sizes = (careless.result(check) for check in CARELESS)
    assert all(r.status is Status.FAILED and r.message == r.problem.sentence() for r in (finite, modified, sizes))
    problem = finite.problem
    assert isinstance(problem, NonFinite) and problem.undeclared and problem.nan > 0 and problem.elements == 12
    assert finite.message.endswith(
        "; if the layer is only defined on part of the real line, declare input_domain, e.g. (0, None)"
    )
    assert isinstance(modified.problem, Modification) and modified.problem.name == "X"
    assert modified.message.startswith("predict modifies its arguments: X was modified in place: ")
    assert sizes.problem == SizesDiffer("Y", (12,), (4, 3))
    assert sizes.message == "Y has shape (12,) from forward but (4, 3) from predict"


@pytest.mark.parametrize("check", CARELESS)
def test_those_read_back_render_the_same_message(careless, check):
    result = careless.result(check)
    data = json.loads(json.dumps(result.to_dict()))
    again = CheckResult.from_dict({**data, "message": "all is well"})
    assert again.problem == result.problem and again.message == result.message


@pytest.mark.parametrize(
    ("check", "change", "said"),
    [
        ("outputs_are_finite", {"nan": 0, "inf": 0}, "0 NaN and 0 infinite value(s) of 12"),
        ("outputs_are_finite", {"first_index": [-1, 0]}, "first_index is -1, not a whole number >= 0"),
        ("predict_does_not_modify_inputs", {"was": "an array"}, "a mismatch, or what it was and became"),
        ("forward_predict_are_consistent_in_size", {"forward_shape": "12"}, "forward_shape holds '12', not a list"),
    ],
)
def test_a_forged_problem_of_those_is_refused(careless, check, change, said):
    data = careless.result(check).to_dict()
    data["details"].update(change)
    with pytest.raises(MalformedReport) as raised:
        CheckResult.from_dict(data)
    assert said in str(raised.value)


def test_a_modification_without_a_mismatch_leaves_the_key_out():
    replaced = Modification("predict", "X", was="NumPy float64 array of shape (4, 3)", became="int 0")
    assert "mismatch" not in replaced.to_details()
    assert problems.read("predict_does_not_modify_inputs", replaced.to_details()) == replaced
    assert (
        replaced.sentence()
        == "predict modifies its arguments: X was replaced (NumPy float64 array of shape (4, 3) became int 0)"
    )


class Squeezing:
    """predict sums the channels away: its output has one axis where its format (the input's,
    CB) has two."""

    def predict(self, X):
        return X.sum(axis=0)


class Dropping:
    """predict drops the last observation."""

    def predict(self, X):
        return X[:, :-1]


def test_an_output_of_another_rank_or_batch_size_is_typed():
    rank = layercheck.check_layer(Squeezing, "4,3:CB", checks=["output_format_is_consistent"]).result(
        "output_format_is_consistent"
    )
    batch = layercheck.check_layer(Dropping, "4,3:CB", checks=["output_batch_size_matches_input"]).result(
        "output_batch_size_matches_input"
    )
    assert rank.problem == FormatRank("Y", (3,), "CB", Declared.FIRST_INPUT)
    assert rank.message == (
        "predict output Y has 1 dimension(s) (shape (3,)) but its format 'CB' (the first input's; a layer that "
        "changes layout declares output_format) has 2"
    )
    assert batch.problem == BatchSize("Y", 3, (4, 2), 1)
    assert (
        batch.message == "predict output Y has batch size 2 (shape (4, 2), B is axis 1) for inputs with 3 observations"
    )
    for result in (rank, batch):
        data = json.loads(json.dumps(result.to_dict()))
        assert CheckResult.from_dict({**data, "message": "forged"}).message == result.message
    assert BatchSize("Y", 3, (3,), 1).sentence().startswith("predict output Y has batch size no (shape (3,)")
    with pytest.raises(MalformedFinding, match="has as many axes as format"):
        FormatRank("Y", (4, 3), "CB", Declared.DECLARED)
    with pytest.raises(MalformedFinding, match="has 3 along axis 1"):
        BatchSize("Y", 3, (4, 3), 1)


def test_a_gradient_against_the_mask_is_typed():
    from conftest import FUNCTIONS, load_layer

    operation = load_layer(FUNCTIONS / "ignores_mask.py")
    result = layercheck.check_function(operation, operation.example_layout).result(
        "backward_respects_compute_gradients"
    )
    problem = result.problem
    assert isinstance(problem, MaskProblem) and problem.fault is MaskFault.UNREQUESTED
    assert problem.mask.count(True) == 1 and problem.name in problem.inputs
    assert result.message == problem.sentence() and result.message.startswith(
        f"with compute_gradients={problem.mask} (only "
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert CheckResult.from_dict({**data, "message": "forged"}).message == result.message
    data["details"]["mask"] = [True]
    with pytest.raises(MalformedReport, match="a mask \\(True,\\) of the inputs"):
        CheckResult.from_dict(data)


def test_a_value_the_gpu_computed_otherwise_is_typed():
    worst = Mismatch(3, 24, (1, 2), 1.5, 1.0, 0.5, 0.5, 1e-7, 1e-9)
    differs = Parity("predict output Y", "float32", worst)
    assert differs.sentence() == "predict output Y differs between GPU and CPU with float32 inputs: " + worst.detail()
    reshaped = Parity(
        "gradient dLdX", "float64", gpu="CuPy float64 array of shape (4,)", cpu="NumPy float64 array of shape (2, 2)"
    )
    assert reshaped.sentence() == (
        "gradient dLdX is CuPy float64 array of shape (4,) on the GPU but NumPy float64 array of shape (2, 2) on the CPU"
    )
    for problem, check in ((differs, "predict_is_consistent_on_gpu"), (reshaped, "backward_is_consistent_on_gpu")):
        assert problems.read(check, json.loads(json.dumps(problem.to_details()))) == problem
    with pytest.raises(MalformedFinding, match="a mismatch, or what each device returned"):
        Parity("predict output Y", "float32")
