"""What real layers need (issue 9): repeatable backward, the training-time derivative, input
domains and integer inputs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CORPUS, GRADIENTS, load_layer, not_ok

import layercheck
from layercheck import UsageError, parse_layout


def test_an_integer_layout_round_trips_and_keeps_its_range_at_another_batch_size():
    layout = parse_layout("5,6:BT:int=0..9")
    assert layout.integer == (0, 9)
    assert str(layout) == "5,6:BT:int=0..9"
    assert parse_layout(str(layout)) == layout
    assert layout.with_batch_size(2).integer == (0, 9)
    assert parse_layout({"size": [5, 6], "format": "BT", "integer": [0, 9]}) == layout


@pytest.mark.parametrize("text", ["5,6:BT:int=9..0", "5,6:BT:int=", "5,6:BT:float", "5,6:BT:int=0..9:x"])
def test_a_malformed_integer_range_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_layout(text)


def test_an_embedding_with_integer_ids_passes_and_its_ids_are_not_differentiated():
    obj = load_layer(CORPUS / "good_embedding.py")
    for seed in range(10):
        report = layercheck.check_layer(obj, obj.example_layout, seed=seed)
        assert not_ok(report) == {}, (seed, not_ok(report))
    records = {r["argument"]: r for r in report.result(GRADIENTS).details["arguments"]}
    assert records["tokens"]["status"] == "skipped" and records["tokens"]["kind"] == "integer input"
    assert records["W"]["status"] == "passed"
    assert report.result("backward_is_consistent_across_observations").status == "passed"


class GatherOperation:
    """An operation with a float input and an integer index input."""

    save_inputs_for_backward = True

    def forward(self, X, index):
        return X[index]

    def backward(self, dLdY, compute_gradients, X, index):
        dLdX = None
        if compute_gradients[0]:
            dLdX = np.zeros_like(X)
            np.add.at(dLdX, index, dLdY)
        return dLdX, None


def test_an_operation_with_an_integer_input_is_never_asked_for_its_gradient():
    report = layercheck.check_function(GatherOperation, ["7,3:CB", "5,3:UB:int=0..6"])
    assert not_ok(report) == {}
    assert report.result("backward_respects_compute_gradients").message == "2 masks checked"


def test_the_input_domain_can_be_overridden():
    obj = load_layer(CORPUS / "log_without_domain.py")
    assert layercheck.check_layer(obj, obj.example_layout).result("outputs_are_finite").status == "failed"
    report = layercheck.check_layer(obj, obj.example_layout, input_domains=(0, None))
    assert not_ok(report) == {}
    with pytest.raises(UsageError, match="input_domains"):
        layercheck.check_layer(obj, obj.example_layout, input_domains=(1, 0))
    report = layercheck.check_layer(obj, obj.example_layout, input_domains=[(0, None), (0, None)])
    assert "one per input (1 input(s))" in report.error


def test_a_bounded_domain_keeps_inputs_and_steps_inside_it():
    class Arcsin:
        input_domain = (-1, 1)

        def predict(self, X):
            return np.arcsin(X)

        def backward(self, X, Y, dLdY, memory):
            return dLdY / np.sqrt(1 - X * X)

    for seed in range(5):
        report = layercheck.check_layer(Arcsin, "40,6:CB", seed=seed)
        assert not_ok(report) == {}, not_ok(report)


def test_the_report_says_which_pass_was_differentiated():
    bn = load_layer(CORPUS / "good_batch_norm.py")
    details = layercheck.check_layer(bn, bn.example_layout, checks=[GRADIENTS]).result(GRADIENTS).details
    assert details["evaluated"] == "forward"
    embedding = load_layer(CORPUS / "good_embedding.py")
    result = layercheck.check_layer(embedding, embedding.example_layout, checks=[GRADIENTS]).result(GRADIENTS)
    assert result.details["evaluated"] == "predict" and "of predict" in result.message


@pytest.mark.parametrize("name", ["accumulates_gradients.py", "backward_frees_buffer.py"])
def test_a_backward_that_changes_from_the_second_step_on_is_named(name):
    obj = load_layer(CORPUS / name)
    result = layercheck.check_layer(obj, obj.example_layout).result("backward_is_repeatable")
    assert result.status == "failed"
    assert "second" in result.message
