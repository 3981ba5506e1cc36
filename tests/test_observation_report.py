"""The checks of a batch against its observations alone: their failure is typed
(`ObservationReport`: the observations that differ, each result's `Mismatch` and why, or a
learnable's gradient not the sum of its observations') from the check to every report, and the
message is rendered from it wherever a result is made, a report file's too."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import report_json, schema_errors

import layercheck
from layercheck.findings.observations import Differences, Interaction, NotSummed, ObservationReport, Observed
from layercheck.numerics.compare import Mismatch
from layercheck.numerics.reading import MalformedFinding
from layercheck.results import CheckResult, MalformedReport, Status

PREDICT, BACKWARD = Observed.PREDICT.check, Observed.BACKWARD.check


class Centred:
    """predict subtracts the batch's mean (it mixes observations); backward treats the mean as a
    constant and averages dW over the batch where a sum belongs."""

    learnables = ("W",)

    def __init__(self):
        self.W = np.linspace(0.5, 1.5, 3).reshape(3, 1)

    def predict(self, X):
        return self.W * (X - X.mean(axis=1, keepdims=True))

    def backward(self, X, Y, dLdY, memory):
        return self.W * dLdY, (dLdY * X).mean(axis=1, keepdims=True)


class Placed:
    """predict adds each observation's place in the batch: it does not mix their values."""

    def predict(self, X):
        return X + np.arange(X.shape[1])


@pytest.fixture(scope="module")
def report():
    return layercheck.check_layer(Centred, "3,5:CB", checks=[PREDICT, BACKWARD])


def test_differing_observations_are_typed_and_the_message_rendered_from_them(report):
    result = report.result(PREDICT)
    assert result.status is Status.FAILED
    found = result.observations.found
    assert isinstance(found, Differences) and found.observed is Observed.PREDICT
    assert found.interaction is Interaction.MIXES and found.checked == 5
    assert sorted(found.differ) == result.details["differing_observations"]
    assert result.message == found.headline
    assert result.message.startswith(
        "predict outputs of observation(s) 0, 1, 2, 3, 4 (5 of 5 checked) differ when each observation runs alone, "
        "and those of observation 0 change when only the other observations change: the layer mixes observations"
    )
    name, worst = max((item for items in found.differ.values() for item in items), key=lambda item: item[1].abs_diff)
    assert result.message.endswith(worst.describe(name)) and worst.index[1] in found.differ


def test_a_learnable_gradient_not_summed_is_typed(report):
    result = report.result(BACKWARD)
    found = result.observations.found
    assert isinstance(found, NotSummed) and (found.name, found.gradient, found.batch) == ("W", "dLdW", 5)
    assert result.message == (
        "the gradient of W for a batch of 5 is not the sum of the gradients of its observations run alone; "
        + found.mismatch.describe("dLdW")
    )


def test_a_place_in_the_batch_is_told_from_mixing():
    result = layercheck.check_layer(Placed, "3,4:CB", checks=[PREDICT]).result(PREDICT)
    assert result.observations.found.interaction is Interaction.PLACE
    assert "depend on the batch's size or on the observation's place in it" in result.message


@pytest.mark.parametrize("check", [PREDICT, BACKWARD])
def test_a_report_read_back_renders_the_same_message_and_replaces_a_forged_one(report, check):
    result = report.result(check)
    data = json.loads(json.dumps(result.to_dict()))
    again = CheckResult.from_dict(data)
    assert again.observations == result.observations and again.message == result.message
    assert CheckResult.from_dict({**data, "message": "all is well"}).message == result.message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"interaction": "telepathy"}, "the interaction is 'telepathy', not one of mixes, place"),
        ({"checked": 0}, "differences in 5 of 0 observations checked"),
        ({"results": []}, "differences in 0 of 5 observations checked"),
        ({"surplus": 1}, "the differences has the keys"),
    ],
)
def test_forged_differences_are_refused_in_one_line(report, change, said):
    data = report.result(PREDICT).to_dict()
    data["details"]["differences"].update(change)
    with pytest.raises(MalformedReport) as raised:
        CheckResult.from_dict(data)
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_differences_in_a_check_that_did_not_fail_are_refused(report):
    data = report.result(PREDICT).to_dict()
    with pytest.raises(MalformedReport, match="a difference from the observations alone in a check that did not fail"):
        CheckResult.from_dict({**data, "status": "passed"})


def test_a_report_of_the_previous_version_keeps_the_message_it_carries(report):
    data = report.result(PREDICT).to_dict()
    del data["details"]["differences"]
    data["message"] = "predict outputs of observation(s) 0 differ, as said then"
    again = CheckResult.from_dict(data)
    assert again.observations is None and again.message == data["message"]


def test_other_checks_details_are_not_read_as_observations():
    assert ObservationReport.of("outputs_are_finite", {"differences": {}}) is None
    assert ObservationReport.of(PREDICT, {"not_summed": {}}) is None  # a predict has no gradients
    with pytest.raises(MalformedFinding):
        ObservationReport.of(BACKWARD, {"not_summed": {"argument": "W"}})


def test_the_worst_result_is_the_first_compared_of_equal_differences():
    same = Mismatch(1, 3, (0, 2), 1.0, 0.0, 1.0, 1.0, 1e-6, 0.0)
    found = Differences(Observed.PREDICT, {2: [("Y", same)], 0: [("Z", same)]}, 3, Interaction.UNKNOWN)
    again = Differences.from_dict(Observed.PREDICT, json.loads(json.dumps(found.to_dict())))
    assert again == found and list(again.differ) == [2, 0] and again.headline.endswith(same.describe("Y"))


def test_the_reports_observations_fit_the_published_schema(report):
    data = report_json(report)
    assert schema_errors(data) == []
    checks = data["targets"][0]["checks"]
    assert {"differences", "not_summed"} <= {key for check in checks for key in check["details"]}
    checks[0]["details"].get("differences", checks[0]["details"].get("not_summed"))["surplus"] = 1
    assert schema_errors(data)
