"""The sample layers ported from the MATLAB documentation, and the faithful ports of its bugs."""

from __future__ import annotations

import pytest
from conftest import GRADIENTS, SAMPLES, SEED_LAYOUT, load_layer, not_ok, statuses

import layercheck


@pytest.mark.parametrize("path", [SAMPLES / "srelu.py", SAMPLES / "prelu.py"], ids=lambda p: p.name)
def test_sample_layer_passes_every_check_at_the_seed_layout(path):
    obj = load_layer(path)
    report = layercheck.check_layer(obj, SEED_LAYOUT)
    assert report.error is None
    assert not_ok(report) == {}
    assert report.status == "passed"
    # The checks that matter for a layer with a custom backward really ran.
    for name in (
        "backward_does_not_error",
        "backward_is_consistent_in_size",
        "backward_is_consistent_in_type",
        GRADIENTS,
        "initialize_does_not_change_nonempty_learnables",
    ):
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
    assert "srelu_missing_dx.py" in result.traceback
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


# -- issue 4: several inputs, a layer that changes layout, a recurrent layer with state --------

CONTRACT_SAMPLES = ["weighted_addition.py", "global_average_pooling.py", "peephole_lstm.py"]


@pytest.mark.parametrize("name", CONTRACT_SAMPLES)
def test_contract_sample_passes_every_check_for_many_seeds(name):
    obj = load_layer(SAMPLES / name)
    for seed in range(8):
        report = layercheck.check_layer(obj, obj.example_layout, seed=seed)
        assert not_ok(report) == {}, (seed, not_ok(report))
    # The checks this sample exists for ran and passed.
    expected = {
        "weighted_addition.py": [
            "predict_is_consistent_across_observations",
            "backward_is_consistent_across_observations",
        ],
        "global_average_pooling.py": ["output_format_is_consistent", "output_batch_size_matches_input"],
        "peephole_lstm.py": [
            "predict_returns_valid_states",
            "forward_returns_valid_states",
            "reset_state_does_not_error",
            "forward_is_consistent_across_observations",
            "backward_is_consistent_across_observations",
        ],
    }[name]
    for check_name in expected + [GRADIENTS]:
        assert report.result(check_name).status == "passed", check_name


def test_global_average_pooling_reports_its_declared_output_format():
    obj = load_layer(SAMPLES / "global_average_pooling.py")
    report = layercheck.check_layer(obj, "6,5,4,3:SSCB", checks=["output_format_is_consistent"])
    assert report.result("output_format_is_consistent").message == "Y: CB"
    report = layercheck.check_layer(obj, "7,4,3:SCB", seed=3)
    assert not_ok(report) == {}


def test_peephole_lstm_checks_gradients_through_its_states():
    obj = load_layer(SAMPLES / "peephole_lstm.py")
    result = layercheck.check_layer(obj, obj.example_layout, checks=[GRADIENTS]).result(GRADIENTS)
    kinds = {r["argument"]: r["kind"] for r in result.details["arguments"]}
    assert kinds == {
        "X": "input",
        "input_weights": "learnable",
        "recurrent_weights": "learnable",
        "peephole_weights": "learnable",
        "bias": "learnable",
        "hidden_state": "state",
        "cell_state": "state",
    }


@pytest.mark.parametrize(
    "path, arguments, phrase",
    [
        ("weighted_addition_swapped.py", ["X1", "X2"], "each other's place"),
        ("global_average_pooling_wrong_count.py", ["X"], "constant factor 5 (the size of spatial axis 2)"),
        (
            "peephole_lstm_bug.py",
            ["peephole_weights"],
            "wrong only in indices 12-17 of peephole_weights (right in the 12 others checked)",
        ),
    ],
)
def test_contract_sample_buggy_twin_fails_the_gradient_check_with_a_diagnosis(path, arguments, phrase):
    obj = load_layer(SAMPLES / "buggy" / path)
    for seed in range(3):
        report = layercheck.check_layer(obj, obj.example_layout, seed=seed)
        result = report.result(GRADIENTS)
        assert result.status == "failed"
        assert phrase in result.message
        failing = [r["argument"] for r in result.details["arguments"] if r["status"] == "failed"]
        assert failing == arguments
        assert [n for n, s in statuses(report).items() if s == "failed"] == [GRADIENTS]
