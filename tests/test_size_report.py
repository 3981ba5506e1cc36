"""backward_is_consistent_in_size: its failure is typed (`SizeReport`: every gradient backward
returned wrong, and how) from the check to every report, and the message is rendered from those
problems wherever a result is made, a report file's too."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import report_json, schema_errors

import layercheck
from layercheck.findings.sizes import CHECK, Axis, Fault, Misshape, Reduction, SizeProblem, SizeReport
from layercheck.numerics.reading import MalformedFinding
from layercheck.results import CheckResult, MalformedReport, Status


class Misshapen:
    """backward gets every gradient but dL/dX wrong, each in its own way: None, a number, strings,
    two transposed alike, and one not summed over the observations."""

    learnables = ("W", "b", "c", "d", "e", "f")

    def __init__(self):
        for name in self.learnables:
            setattr(self, name, np.ones((4, 1)))

    def predict(self, X):
        return (self.W + self.b + self.c + self.d + self.e + self.f) * X

    def backward(self, X, Y, dLdY, memory):
        scale = self.W + self.b + self.c + self.d + self.e + self.f
        dW = (dLdY * X).sum(axis=1, keepdims=True)
        return scale * dLdY, None, 1.5, np.array(["x"] * 4), dW.T, dW.T, dLdY * X


@pytest.fixture(scope="module")
def result():
    return layercheck.check_layer(Misshapen, "4,3:CB", checks=[CHECK]).result(CHECK)


def test_every_problem_is_typed_in_the_arguments_order(result):
    assert result.status is Status.FAILED
    found = result.sizes
    assert found is not None and not found.legacy
    assert [(p.argument, p.fault) for p in found.problems] == [
        ("W", Fault.NONE),
        ("b", Fault.NOT_AN_ARRAY),
        ("c", Fault.NOT_NUMBERS),
        ("d", Fault.SHAPE),
        ("e", Fault.SHAPE),
        ("f", Fault.SHAPE),
    ]
    transposed, not_summed = found.problems[3].reduction, found.problems[5].reduction
    assert transposed == found.problems[4].reduction == Reduction(Misshape.TRANSPOSED, (1, 4), (4, 1))
    assert not_summed == Reduction(Misshape.SUMMED, (4, 3), (4, 1), not_summed=(Axis(1, "B"),))


def test_the_message_is_rendered_from_the_problems_those_of_one_shape_in_one_sentence(result):
    assert result.message == result.sizes.headline
    assert result.message == "; ".join(
        [
            "backward returned None as the gradient of W",
            "the gradient of b is float 1.5, not an array",
            "the gradient of c is an array of dtype <U1, which holds text; gradients must hold numbers",
            "the gradients of d and e have shape (1, 4) but d and e have shape (4, 1): each is transposed",
            "the gradient of f has shape (4, 3) but f has shape (4, 1): it was not summed over axis 1 (B)",
        ]
    )


def test_the_details_keep_the_first_problems_keys_beside_every_problem(result):
    details = result.details
    assert details["argument"] == "W" and "gradient_shape" not in details
    assert details["problem_arguments"] == ["W", "b", "c", "d", "e", "f"]
    assert SizeReport.of(CHECK, details) == result.sizes


def test_a_report_read_back_renders_the_same_message_and_replaces_a_forged_one(result):
    data = json.loads(json.dumps(result.to_dict()))
    again = CheckResult.from_dict(data)
    assert again.message == result.message and again.sizes == result.sizes
    assert CheckResult.from_dict({**data, "message": "all is well"}).message == result.message


def _forged(result, k: int, **change):
    data = json.loads(json.dumps(result.to_dict()))
    data["details"]["size_problems"][k].update(change)
    return data


@pytest.mark.parametrize(
    ("k", "change", "said"),
    [
        (5, {"misshape": "transposed"}, "a reduction of (4, 3) from (4, 1) is not what the shapes show"),
        (5, {"not_summed": [{"index": 0, "label": "C"}]}, "is not what the shapes show"),
        (5, {"argument_shape": [4, 3]}, "is not what the shapes show"),
        (5, {"misshape": "squeezed"}, "a misshape is 'squeezed', not one of keepdims, axes"),
        (5, {"fault": "none"}, "shapes go with the fault 'shape', and only with it"),
        (0, {"fault": "shape"}, "shapes go with the fault 'shape', and only with it"),
        (0, {"surplus": 1}, "a size problem has the keys argument, fault, surplus"),
        (1, {"returned": 7}, "what backward returned is 7, not a string"),
    ],
)
def test_a_forged_problem_is_refused_in_one_line(result, k, change, said):
    with pytest.raises(MalformedReport) as raised:
        CheckResult.from_dict(_forged(result, k, **change))
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_size_problems_in_a_check_that_did_not_fail_are_refused(result):
    data = result.to_dict()
    with pytest.raises(MalformedReport, match="a size problem in a check that did not fail"):
        CheckResult.from_dict({**data, "status": "passed"})
    with pytest.raises(MalformedReport, match="a size failure with no problem"):
        CheckResult.from_dict({**data, "details": {**data["details"], "size_problems": []}})


def test_a_report_of_the_previous_version_keeps_the_message_it_carries(result):
    """It named the first problem's keys alone, which cannot make every sentence."""
    data = result.to_dict()
    del data["details"]["size_problems"]
    data["message"] = "backward returned None as the gradient of W; as said then"
    again = CheckResult.from_dict(data)
    assert again.sizes is not None and again.sizes.legacy
    assert again.message == data["message"]


def test_other_checks_details_are_not_read_as_size_problems():
    assert SizeReport.of("backward_does_not_error", {"argument": "X", "size_problems": []}) is None
    assert SizeReport.of(CHECK, {}) is None
    with pytest.raises(MalformedFinding):
        SizeReport.of(CHECK, {"size_problems": {}})


def test_a_problem_of_the_wrong_shape_needs_its_reduction():
    with pytest.raises(MalformedFinding):
        SizeProblem("X", Fault.SHAPE)
    with pytest.raises(MalformedFinding):
        SizeProblem("X", Fault.NONE, reduction=Reduction.of((1, 4), (4, 1), None))


def test_the_reports_size_problems_fit_the_published_schema():
    data = report_json(layercheck.check_layer(Misshapen, "4,3:CB", checks=[CHECK]))
    assert schema_errors(data) == []
    data["targets"][0]["checks"][0]["details"]["size_problems"][5]["misshape"] = "squeezed"
    assert schema_errors(data)
