"""The sample layers ported from the MATLAB documentation, and the faithful ports of its bugs."""

from __future__ import annotations

import pytest

import layercheck

from conftest import GRADIENTS, SAMPLES, SEED_LAYOUT, load_layer, not_ok, statuses


@pytest.mark.parametrize("path", [SAMPLES / "srelu.py", SAMPLES / "prelu.py"], ids=lambda p: p.name)
def test_sample_layer_passes_every_check_at_the_seed_layout(path):
    obj = load_layer(path)
    report = layercheck.check_layer(obj, SEED_LAYOUT)
    assert report.error is None
    assert not_ok(report) == {}
    assert report.status == "passed"
    # The checks that matter for a layer with a custom backward really ran.
    for name in ("backward_does_not_error", "backward_is_consistent_in_size", "backward_is_consistent_in_type",
                 GRADIENTS, "initialize_does_not_change_nonempty_learnables"):
        assert report.result(name).status == "passed"
    arguments = [r["argument"] for r in report.result(GRADIENTS).details["arguments"]]
    assert arguments == ["X", *obj.learnables]


def test_srelu_missing_dx_fails_backward_does_not_error_naming_dLdX():
    obj = load_layer(SAMPLES / "buggy" / "srelu_missing_dx.py")
    report = layercheck.check_layer(obj, obj.example_layout)
    result = report.result("backward_does_not_error")
    assert result.status == "failed"
    assert "dLdX" in result.message
    assert "never assigned" in result.message
    assert "srelu_missing_dx.py" in result.details["traceback"]
    # Only the failing step is blamed; what depends on it could not be checked.
    failed = [name for name, status in statuses(report).items() if status == "failed"]
    assert failed == ["backward_does_not_error"]
    for name in ("backward_is_consistent_in_size", GRADIENTS, "backward_does_not_modify_inputs"):
        assert report.result(name).status == "incomplete"
    assert report.result("predict_does_not_error").status == "passed"


def test_srelu_swapped_fails_the_gradient_check_naming_al_and_tr():
    obj = load_layer(SAMPLES / "buggy" / "srelu_swapped.py")
    report = layercheck.check_layer(obj, obj.example_layout)
    result = report.result(GRADIENTS)
    assert result.status == "failed"
    assert "al and tr" in result.message
    assert "each other's place" in result.message
    # Shapes and dtypes are right: nothing else fails.
    failed = [name for name, status in statuses(report).items() if status == "failed"]
    assert failed == [GRADIENTS]
