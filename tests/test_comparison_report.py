"""The checks that compare an array with what it should have stayed: their failure is typed
(`ComparisonReport`: the array's name and its `Mismatch`) from the check to every report, and
the message is rendered from those details wherever a result is made, a report file's too."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import report_json, schema_errors

import layercheck
from layercheck.findings.comparison import Compared, ComparisonReport
from layercheck.numerics.compare import Mismatch, mismatch
from layercheck.numerics.reading import MalformedFinding
from layercheck.results import CheckResult, MalformedReport, Status


class Drifting:
    """predict adds a counter it keeps; reset_state forgets to zero the state at float32; initialize
    overwrites a preset learnable; backward accumulates into a buffer it keeps."""

    learnables = ("W",)
    state = ("S",)

    def __init__(self):
        self.W = None
        self.S = None
        self.calls = 0
        self.buffer = None

    def initialize(self, layout):
        self.W = np.linspace(0.5, 1.5, layout.size[0]).reshape(-1, 1)  # overwrites a preset W
        self.S = np.zeros((layout.size[0], 1))

    def predict(self, X):
        self.calls += 1
        return self.W * X + 1e-3 * self.calls, self.S + X.sum(axis=1, keepdims=True)

    def reset_state(self):
        if self.S.dtype == np.float64:
            self.S = np.zeros_like(self.S)

    def backward(self, X, Y, dLdY, dLdS, memory):
        dW = (dLdY * X).sum(axis=1, keepdims=True)
        self.buffer = dW if self.buffer is None else self.buffer + dW
        return dLdY * self.W + dLdS, self.buffer, dLdS


CHECKS = [member.check for member in Compared]


@pytest.fixture(scope="module")
def report():
    return layercheck.check_layer(Drifting, "4,6:CB", checks=CHECKS, seed=0)


@pytest.mark.parametrize("compared", list(Compared), ids=lambda c: c.check)
def test_a_comparing_checks_failure_is_typed_and_its_message_rendered_from_it(report, compared):
    result = report.result(compared.check)
    assert result.status is Status.FAILED
    found = result.compared
    assert found is not None and found.compared is compared and not found.legacy
    assert result.message == found.headline
    assert result.message.endswith(found.mismatch.detail())
    assert result.details[compared.key] == found.name
    assert Mismatch.from_dict(result.details["mismatch"]) == found.mismatch


def test_each_comparing_check_names_its_array_in_its_own_words(report):
    said = {compared: report.result(compared.check).message for compared in Compared}
    assert said[Compared.DETERMINISTIC].startswith("predict is not deterministic: Y of the second call: ")
    assert said[Compared.REPEATABLE].startswith(
        "the second forward+backward on the same layer gives another gradient of W (a value cached"
    )
    assert said[Compared.LEARNABLES_KEPT].startswith("initialize changed 'W', which was already set: ")
    # The state is restored at float64 and not at float32: the dtype it was not is said.
    assert said[Compared.RESTORED].startswith(
        "reset_state does not restore state S to its initial value with float32 inputs: "
    )
    assert report.result(Compared.RESTORED.check).details["dtype"] == "float32"


def test_a_report_read_back_renders_the_same_message_and_replaces_a_forged_one(report):
    for compared in Compared:
        result = report.result(compared.check)
        if result.compared is None:
            continue
        data = json.loads(json.dumps(result.to_dict()))
        assert CheckResult.from_dict(data).message == result.message
        forged = CheckResult.from_dict({**data, "message": "all is well"})
        assert forged.message == result.message


def test_the_worst_relative_difference_elsewhere_is_kept_in_the_details():
    found = mismatch(np.array([1.0, 100.0]), np.array([0.0, 90.0]))
    assert found is not None and found.max_rel_index is not None
    again = Mismatch.from_dict(json.loads(json.dumps(found.to_dict())))
    assert again == found and "the greatest relative difference" in again.detail()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"mismatched": 0}, "a mismatch of 0 of 24 element(s)"),
        ({"mismatched": 25}, "a mismatch of 25 of 24 element(s)"),
        ({"worst_index": [-1]}, "worst_index is -1, not a whole number >= 0"),
        ({"actual": "lots"}, "actual is 'lots', not a number"),
        ({"surplus": 1}, "a mismatch has the keys"),
    ],
)
def test_a_forged_mismatch_is_refused_in_one_line(report, change, said):
    data = report.result(Compared.DETERMINISTIC.check).to_dict()
    data["details"]["mismatch"].update(change)
    with pytest.raises(MalformedReport) as raised:
        CheckResult.from_dict(data)
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_a_mismatch_in_a_check_that_did_not_fail_is_refused(report):
    data = report.result(Compared.DETERMINISTIC.check).to_dict()
    with pytest.raises(MalformedReport, match="a mismatch in a check that did not fail"):
        CheckResult.from_dict({**data, "status": "passed"})
    with pytest.raises(MalformedReport, match="the output compared is None"):
        CheckResult.from_dict({**data, "details": {"mismatch": data["details"]["mismatch"]}})


def test_a_report_of_the_previous_version_keeps_the_message_it_carries(report):
    """Its mismatch lacks the greatest relative difference, which the sentence may need."""
    data = report.result(Compared.DETERMINISTIC.check).to_dict()
    for key in ("max_rel_diff", "max_rel_index"):
        del data["details"]["mismatch"][key]
    data["message"] = "predict is not deterministic: as said then"
    again = CheckResult.from_dict(data)
    assert again.compared is not None and again.compared.legacy
    assert again.message == "predict is not deterministic: as said then"


def test_other_checks_details_are_not_read_as_a_comparison():
    assert ComparisonReport.of("outputs_are_finite", {"mismatch": {}}) is None
    with pytest.raises(MalformedFinding):
        ComparisonReport.of(Compared.REPEATABLE.check, {"argument": "dX", "mismatch": []})


def test_the_reports_mismatches_fit_the_published_schema(report):
    data = report_json(report)
    assert schema_errors(data) == []
    forged = data["targets"][0]["checks"][0]
    assert forged["details"]["mismatch"]
    forged["details"]["mismatch"]["mismatched"] = 0
    assert schema_errors(data)
