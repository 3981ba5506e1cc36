"""The failures that quote what the user's code raised, that find a value become another that
cannot be compared with it, or that find a layer computing below its precision: typed
(`problems.Raised`, `comparison.ComparisonReport` with `was` and `became`,
`problems.LostPrecision`) from the check to every report, their message rendered from them
wherever a result is made, a report file's too."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import report_json, schema_errors

import layercheck
from layercheck.findings import problems
from layercheck.findings.comparison import Compared, ComparisonReport
from layercheck.findings.problems import LostPrecision, MaskFault, MaskProblem, Raised, RaisedWhen
from layercheck.numerics.reading import MalformedFinding
from layercheck.results import CheckResult, MalformedReport, Status


class Fragile:
    """predict refuses any batch but the layout's 3 observations; backward returns a gradient
    it never assigned; reset_state looks its state up under another name."""

    state = ("H",)

    def __init__(self):
        self.H = np.zeros((4, 1))

    def predict(self, X):
        if X.shape[1] != 3:
            raise ValueError(f"expected 3 observations, got {X.shape[1]}")
        return X + self.H, self.H

    def backward(self, X, Y, dLdY, dLdS, memory):
        return dLdX, None  # noqa: F821 (the bug: never assigned)

    def reset_state(self):
        self.H = {"h": np.zeros((4, 1))}["H"]


FRAGILE = ("output_batch_size_matches_input", "backward_does_not_error", "reset_state_does_not_error")


@pytest.fixture(scope="module")
def fragile():
    return layercheck.check_layer(Fragile, "4,3:CB", checks=list(FRAGILE))


def test_what_the_layer_raised_is_typed_and_its_message_rendered_from_it(fragile):
    batch, backward, reset = (fragile.result(check) for check in FRAGILE)
    assert all(r.status is Status.FAILED and r.message == r.problem.sentence() for r in (batch, backward, reset))
    assert isinstance(batch.problem, Raised) and batch.problem.when is RaisedWhen.BATCH_SIZE
    assert (batch.problem.call, batch.problem.observations, batch.problem.layout_observations) == ("predict", 2, 3)
    assert batch.message.startswith("predict raised ValueError: expected 3 observations, got 2 (test_raised.py:")
    assert batch.message.endswith(" in predict) with 2 observations (the layouts have 3)")
    problem = backward.problem
    assert isinstance(problem, Raised) and (problem.when, problem.dtype) == (RaisedWhen.DTYPE, "float64")
    assert problem.hint == "dLdX is returned but never assigned"
    assert backward.message.startswith("backward raised NameError: name 'dLdX' is not defined (test_raised.py:")
    assert backward.message.endswith(" with float64 inputs: dLdX is returned but never assigned")
    assert backward.traceback  # beside the problem, as before
    assert isinstance(reset.problem, Raised) and reset.problem.when is RaisedWhen.PLAIN
    assert reset.message.startswith("reset_state raised KeyError: 'H' (test_raised.py:")


@pytest.mark.parametrize("check", FRAGILE)
def test_a_report_read_back_renders_the_same_message_and_replaces_a_forged_one(fragile, check):
    result = fragile.result(check)
    data = json.loads(json.dumps(result.to_dict()))
    again = CheckResult.from_dict({**data, "message": "all is well"})
    assert again.problem == result.problem and again.message == result.message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"raised_when": "later"}, "raised_when is 'later', not one of dtype, plain, gpu"),
        ({"observations": 3}, "predict raised with 3 observations, where the layouts have 3"),
        ({"raised": None}, "raised is None, not a string"),
        ({"contract": "no"}, "contract is 'no', not true or false"),
    ],
)
def test_a_forged_raise_is_refused_in_one_line(fragile, change, said):
    data = fragile.result("output_batch_size_matches_input").to_dict()
    data["details"].update(change)
    with pytest.raises(MalformedReport) as refused:
        CheckResult.from_dict(data)
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_report_of_the_previous_version_keeps_the_message_it_carries(fragile):
    """It held the dtype alone beside the traceback, not what was raised."""
    data = fragile.result("backward_does_not_error").to_dict()
    data["details"] = {"traceback": "Traceback ...", "dtype": "float64"}
    data["message"] = "backward raised NameError as said then"
    again = CheckResult.from_dict(data)
    assert again.problem is None and again.message == data["message"]


def test_each_family_of_a_check_is_told_by_its_own_marker():
    """output_batch_size_matches_input fails with a batch size or with predict raising at one."""
    raised = Raised("predict", "ValueError: no", RaisedWhen.BATCH_SIZE, observations=4, layout_observations=3)
    assert problems.read("output_batch_size_matches_input", raised.to_details()) == raised
    batch = problems.read(
        "output_batch_size_matches_input", {"output": "Y", "observations": 3, "shape": [4, 2], "batch_axis": 1}
    )
    assert batch is not None and type(batch).__name__ == "BatchSize"
    markers = {}
    for family in problems._FAMILIES:
        for check in family.checks:
            assert markers.setdefault((check, family.marker), family) is family, (check, family.marker)


@pytest.mark.parametrize(
    ("problem", "said"),
    [
        (
            Raised("predict", "ValueError: no", RaisedWhen.GPU, dtype="float32"),
            "predict raised ValueError: no on the GPU",
        ),
        (
            Raised("backward", "KeyError: 1", RaisedWhen.MASK, inputs=("x", "y"), mask=(True, False)),
            "with compute_gradients=(True, False) (only x requested), backward raised KeyError: 1",
        ),
        (
            Raised("training step", "RuntimeError: freed", RaisedWhen.SECOND_STEP, dtype="float64"),
            "the second training step on the same layer raised RuntimeError: freed",
        ),
        (
            Raised("training step", "RuntimeError: freed", RaisedWhen.NEW_OBJECT, dtype="float64"),
            "forward and backward ran once, and now raise RuntimeError: freed on a new layer object with the same "
            "inputs: calls after the first fail, even on new layer objects",
        ),
        (
            Raised("output_format", "output_format returns 3 formats for 1 output", RaisedWhen.FORMAT, contract=True),
            "output_format is invalid (output_format returns 3 formats for 1 output)",
        ),
        (Raised("initialize", "OSError: gone", RaisedWhen.PLAIN), "initialize raised OSError: gone"),
    ],
)
def test_each_moment_of_a_raise_is_said(problem, said):
    assert problem.sentence() == said
    assert problems.read(problem.checks[0], json.loads(json.dumps(problem.to_details()))) == problem


def test_a_raise_writes_the_fields_its_moment_needs_and_reads_the_others_as_their_defaults():
    on_gpu = Raised("predict", "ValueError: no", RaisedWhen.GPU, dtype="float32")
    assert on_gpu.to_details() == {
        "call": "predict",
        "raised": "ValueError: no",
        "raised_when": "gpu",
        "dtype": "float32",
    }
    assert problems.read("predict_is_consistent_on_gpu", on_gpu.to_details()) == on_gpu
    with pytest.raises(MalformedFinding, match="the details lack 'call'"):
        problems.read("predict_is_consistent_on_gpu", {"raised": "ValueError: no", "raised_when": "gpu"})


def test_a_raise_lacking_what_its_moment_needs_is_refused():
    with pytest.raises(MalformedFinding, match="raised at a dtype, without one"):
        Raised("predict", "ValueError: no", RaisedWhen.DTYPE)
    with pytest.raises(MalformedFinding, match="a mask \\(\\) of the inputs"):
        Raised("backward", "ValueError: no", RaisedWhen.MASK)


class Shifting:
    """predict returns one observation fewer at each call; reset_state restores its state as
    float64 whatever the tested dtype."""

    state = ("H",)

    def __init__(self):
        self.H = np.zeros((4, 1))
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        return X[:, : X.shape[1] - self.calls % 2] + self.H, self.H + 1

    def reset_state(self):
        self.H = np.zeros((4, 1), dtype=np.float64)


SHIFTING = ("predict_is_deterministic", "reset_state_does_not_error")


@pytest.fixture(scope="module")
def shifting():
    return layercheck.check_layer(Shifting, "4,3:CB", checks=list(SHIFTING), dtypes=["float64", "float32"])


def test_a_value_that_became_another_kind_or_shape_is_typed(shifting):
    repeat, reset = (shifting.result(check) for check in SHIFTING)
    assert repeat.compared == ComparisonReport(
        Compared.DETERMINISTIC,
        "Y",
        None,
        was="NumPy float64 array of shape (4, 2)",
        became="NumPy float64 array of shape (4, 3)",
    )
    assert repeat.message == (
        "two calls of predict return Y as NumPy float64 array of shape (4, 2) and NumPy float64 array of shape (4, 3)"
    )
    assert reset.compared is not None and reset.compared.dtype == "float32" and reset.compared.mismatch is None
    assert reset.message == (
        "after reset_state with float32 inputs, state H is NumPy float64 array of shape (4, 1); initially it was "
        "NumPy float32 array of shape (4, 1)"
    )
    for result in (repeat, reset):
        data = json.loads(json.dumps(result.to_dict()))
        again = CheckResult.from_dict({**data, "message": "forged"})
        assert again.compared == result.compared and again.message == result.message
        del data["details"]["was"]
        with pytest.raises(MalformedReport, match="was is None, not a string"):
            CheckResult.from_dict(data)


def test_a_comparison_holds_a_mismatch_or_what_it_became_never_both_nor_neither():
    with pytest.raises(MalformedFinding, match="a mismatch, or what it was and became"):
        ComparisonReport(Compared.REPEATABLE, "X", None)
    replaced = ComparisonReport(
        Compared.LEARNABLES_KEPT, "W", None, was="NumPy float64 array of shape (2,)", became="None"
    )
    assert (
        replaced.headline
        == "initialize replaced 'W', which was already set (NumPy float64 array of shape (2,) became None)"
    )
    assert ComparisonReport.of(Compared.LEARNABLES_KEPT.check, replaced.to_details()) == replaced


class CastsToFloat32:
    """predict computes in float32 and casts back."""

    def predict(self, X):
        return np.tanh(X.astype(np.float32)).astype(X.dtype)


def test_a_layer_below_its_precision_is_typed():
    result = layercheck.check_layer(CastsToFloat32, "4,3:CB", checks=["predict_is_consistent_in_type"]).result(
        "predict_is_consistent_in_type"
    )
    lost = result.problem
    assert isinstance(lost, LostPrecision) and (lost.method, lost.dtype, lost.moved) == ("predict", "float64", "inputs")
    assert lost.float32_values and lost.roundoff > 1e-9
    assert result.message == lost.sentence()
    assert result.message.startswith("predict computes below float64 precision: moving its inputs by a relative ")
    assert result.message.endswith(
        "every output is a float32 value: it computes in float32 inside and casts back (float64 inputs); every "
        "comparison is judged at float32 precision"
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert CheckResult.from_dict({**data, "message": "forged"}).message == result.message
    data["details"]["step"] = "small"
    with pytest.raises(MalformedReport, match="step is 'small', not a number"):
        CheckResult.from_dict(data)


def test_no_gradient_where_every_one_was_asked_for_is_typed():
    none = MaskProblem(("x", "y"), (True, True), "y", MaskFault.NONE_AT_ALL, missing=("y",))
    assert (
        none.sentence()
        == "with compute_gradients=(True, True) (every gradient requested), backward returned no gradient for y"
    )
    assert problems.read("backward_respects_compute_gradients", json.loads(json.dumps(none.to_details()))) == none
    with pytest.raises(MalformedFinding, match="the inputs missing go with the fault 'none_at_all'"):
        MaskProblem(("x", "y"), (True, True), "y", MaskFault.MISSING, missing=("y",))


def test_the_reports_fit_the_published_schema(fragile, shifting):
    data = report_json(fragile, shifting)
    assert schema_errors(data) == []
    checks = data["targets"][0]["checks"]
    checks[0]["details"]["raised_when"] = "later"
    assert schema_errors(data)
    checks[0]["details"]["raised_when"] = "batch_size"
    data["targets"][1]["checks"][0]["details"]["became"] = 3
    assert schema_errors(data)


class Batched:
    """predict refuses a batch of one observation; its backward returns dL/dw summed over a
    batch axis it keeps where there is one observation."""

    learnables = ("w",)

    def __init__(self):
        self.w = np.ones((4, 1))

    def predict(self, X):
        if X.shape[1] == 1:
            raise ValueError("a batch of one")
        return self.w * X

    def forward(self, X):
        return self.w * X, None

    def backward(self, X, Y, dLdY, memory):
        dLdw = (dLdY * X).sum(axis=1, keepdims=True) if X.shape[1] > 1 else dLdY * X
        return self.w * dLdY, dLdw.reshape(4, 1) if X.shape[1] > 1 else None


def test_a_raise_on_an_observation_alone_and_a_result_of_another_shape_are_typed():
    from layercheck.findings.observations import Misshapen, Observed

    report = layercheck.check_layer(
        Batched,
        "4,3:CB",
        checks=["predict_is_consistent_across_observations", "backward_is_consistent_across_observations"],
    )
    alone = report.result("predict_is_consistent_across_observations")
    assert alone.problem == Raised(
        "predict", alone.problem.exception, RaisedWhen.ALONE, observation=alone.problem.observation
    )
    assert alone.problem.exception.startswith("ValueError: a batch of one (test_raised.py:")
    assert alone.message == f"predict raised {alone.problem.exception} on observation {alone.problem.observation} alone"
    backward = report.result("backward_is_consistent_across_observations")
    found = backward.observations.found
    assert isinstance(found, Misshapen) and found.observed is Observed.BACKWARD and found.name == "dLdw"
    assert backward.message == (
        f"backward of observation {found.observation} alone returns dLdw as None; expected NumPy float64 array of "
        "shape (4, 1)"
    )
    for result in (alone, backward):
        data = json.loads(json.dumps(result.to_dict()))
        again = CheckResult.from_dict({**data, "message": "forged"})
        assert again.message == result.message
    data = backward.to_dict()
    data["details"]["misshapen"]["extra"] = 1
    with pytest.raises(MalformedReport, match="the misshapen result has the keys"):
        CheckResult.from_dict(data)
    assert schema_errors(report_json(report)) == []
    outputs = Misshapen(
        Observed.PREDICT, 2, "Y", "NumPy float64 array of shape (15, 4)", "NumPy float64 array of shape (60, 1)"
    )
    assert outputs.headline == (
        "predict of observation 2 alone returns Y as NumPy float64 array of shape (15, 4); its part of the batch is "
        "NumPy float64 array of shape (60, 1)"
    )


class Miswritten:
    """predict takes one argument more than its num_inputs, learnable 'b' is not held, and 'w'
    is a list."""

    num_inputs = 1
    learnables = ("w", "b")

    def __init__(self):
        self.w = [1.0, 2.0]

    def predict(self, X, Z):
        return X


def test_the_syntax_problems_are_typed_and_their_sentences_rendered_from_them():
    from layercheck.findings.syntax import SyntaxFault, SyntaxProblem, SyntaxReport

    result = layercheck.check_layer(Miswritten, "4,3:CB", checks=["function_syntaxes_are_correct"]).result(
        "function_syntaxes_are_correct"
    )
    assert result.status is Status.FAILED and result.syntax is not None
    faults = [p.fault for p in result.syntax.problems]
    assert SyntaxFault.CALL in faults and SyntaxFault.NO_ATTRIBUTE in faults and SyntaxFault.NOT_ARRAY in faults
    assert result.problems == [p.sentence() for p in result.syntax.problems]
    assert result.message == f"{result.problems[0]} (and {len(result.problems) - 1} more)"
    assert "learnable 'b' is listed but the layer has no attribute 'b'" in result.problems
    assert (
        "learnable 'w' is list [1.0, 2.0] after construction (and there is no initialize); it must be an array"
        in result.problems
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert data["details"]["problems"] == result.problems  # kept for readers of earlier reports
    again = CheckResult.from_dict({**data, "message": "forged"})
    assert again.syntax == result.syntax and again.message == result.message and again.problems == result.problems
    data["details"]["problems"] = ["forged"]
    assert CheckResult.from_dict(data).problems == result.problems
    data["details"]["syntax_problems"][0]["fault"] = "typo"
    with pytest.raises(MalformedReport, match="fault is 'typo'"):
        CheckResult.from_dict(data)
    with pytest.raises(MalformedFinding, match="a syntax problem not_array without what it needs"):
        SyntaxProblem(SyntaxFault.NOT_ARRAY, group="learnable", name="w")
    with pytest.raises(MalformedFinding, match="without a problem"):
        SyntaxReport(())
    earlier = {**data, "details": {"problems": ["said then"]}, "message": "said then"}
    assert CheckResult.from_dict(earlier).message == "said then"


class Plain:
    def predict(self, X):
        return 2 * X


def test_a_failure_without_a_typed_finding_is_a_defect_of_layercheck_never_a_failure_of_the_layer(monkeypatch):
    """A check's failure carries no message (`registry.failed` takes none): one whose details
    hold nothing typed to render it from is layercheck's defect."""
    import dataclasses

    from layercheck.checks import REGISTRY
    from layercheck.checks.registry import failed

    untyped = dataclasses.replace(REGISTRY["predict_is_deterministic"], run=lambda session: failed(output="Y"))
    monkeypatch.setitem(REGISTRY, "predict_is_deterministic", untyped)
    report = layercheck.check_layer(Plain, "4,3:CB", checks=["predict_is_deterministic"])
    assert report.status == "error"
    assert "predict_is_deterministic failed without a typed finding (details: output)" in report.error


def test_reports_of_the_previous_version_of_the_families_extended_here_are_read():
    """A float32 layer's failure held `roundoff` beside its message, and a mask's problem had no
    `missing`: both read as they were (the message kept, or the problem whole)."""
    earlier = {
        "name": "predict_is_consistent_in_type",
        "status": "failed",
        "message": "predict computes below float64 precision: said then",
        "details": {"method": "predict", "dtype": "float64", "roundoff": 3e-8},
    }
    again = CheckResult.from_dict(earlier)
    assert again.problem is None and again.message == earlier["message"]
    unrequested = MaskProblem(("x", "y"), (True, False), "y", MaskFault.UNREQUESTED)
    assert "missing" not in unrequested.to_details()
    assert problems.read("backward_respects_compute_gradients", unrequested.to_details()) == unrequested


def test_details_that_hold_two_problems_of_one_check_are_refused():
    raised = Raised("predict", "ValueError: no", RaisedWhen.BATCH_SIZE, observations=4, layout_observations=3)
    both = {**raised.to_details(), "output": "Y", "observations": 4, "shape": [4, 2], "batch_axis": 1}
    with pytest.raises(MalformedFinding, match="the details hold a BatchSize and a Raised"):
        problems.read("output_batch_size_matches_input", both)
    replaced = ComparisonReport(Compared.DETERMINISTIC, "Y", None, was="int 1", became="int 2").to_details()
    worst = {"mismatched": 1, "total": 1, "worst_index": [0], "actual": 1.0, "expected": 2.0}
    with pytest.raises(MalformedFinding, match="a mismatch and what it became, both"):
        ComparisonReport.of(Compared.DETERMINISTIC.check, {**replaced, "mismatch": worst})
