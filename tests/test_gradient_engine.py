"""The gradient engine on layers that misbehave while it probes them."""

from pathlib import Path

import numpy as np
import pytest
from conftest import load_layer

import layercheck

GRADIENTS = "gradients_are_numerically_correct"


class RaisesLater:
    """predict works for its first two calls on an object, then raises (an exhausted resource)."""

    def __init__(self):
        self.calls = 0

    def predict(self, X):
        self.calls += 1
        if self.calls > 2:
            raise RuntimeError("out of buffers")
        return np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (1 - Y**2)


def test_a_layer_that_raises_at_a_perturbed_point_is_reported_not_crashed():
    result = layercheck.check_layer(RaisesLater, "4,3,5,6:SSCB").result(GRADIENTS)
    assert result.status in ("incomplete", "failed")
    assert "RuntimeError" in result.message or any(
        "RuntimeError" in str(a.get("reason")) for a in result.details.get("arguments", [])
    )
    assert "internal error" not in result.message


class BackwardRaisesForMaskedLoss:
    """Correct ReLU whose backward refuses a dL/dY with zeros in it (as after masking kinks)."""

    def predict(self, X):
        return np.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        if np.any(dLdY == 0):
            raise ValueError("dLdY has zeros")
        return dLdY * (X > 0)


def test_backward_that_raises_on_a_second_call_is_reported():
    x = np.random.default_rng(0).standard_normal((4, 3, 5, 6))
    x.flat[:40] = 0.0  # on the kink: the engine masks these outputs and calls backward again
    result = layercheck.check_layer(BackwardRaisesForMaskedLoss, "4,3,5,6:SSCB", inputs=[x]).result(GRADIENTS)
    assert result.status == "incomplete"
    assert "ValueError" in result.message


@pytest.mark.parametrize(
    ("module", "check"),
    [
        ("backward_modifies_dLdY", "backward_does_not_modify_inputs"),
    ],
)
def test_a_layer_that_writes_into_its_arguments_gets_copies_and_its_gradients_are_judged(module, check):
    """The engine lends the layer read-only views of its own arrays; a layer that writes into
    them raises there, so it gets copies from then on: its gradients are judged as any
    other's, and only the hygiene check speaks of the writes."""
    path = Path(__file__).parent / "corpus" / f"{module}.py"
    cls = load_layer(path)
    report = layercheck.check_layer(cls, cls.example_layout, checks=["gradients_are_numerically_correct", check])
    assert report.result("gradients_are_numerically_correct").status == "passed", report.result(
        "gradients_are_numerically_correct"
    ).message
    assert report.result(check).status == "failed"
    assert "read-only" not in report.result("gradients_are_numerically_correct").message


class ClampsInPlace:
    """A ReLU whose forward clamps X in place and returns it: right gradients, wrong manners."""

    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return np.maximum(X, 0)

    def forward(self, X):
        X[X < 0] = 0
        return X, None

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0)


def test_a_forward_that_writes_into_its_input_gets_copies_too():
    report = layercheck.check_layer(
        ClampsInPlace, ClampsInPlace.example_layout, checks=[GRADIENTS, "forward_does_not_modify_inputs"]
    )
    assert report.result(GRADIENTS).status == "passed", report.result(GRADIENTS).message
    assert report.result("forward_does_not_modify_inputs").status == "failed"


class DoublesInPlace:
    """predict doubles X in place and returns X + 1: right gradient, wrong manners."""

    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        X *= 2
        return X + 1

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY


def test_a_predict_that_writes_into_its_input_gets_copies_too():
    report = layercheck.check_layer(
        DoublesInPlace, DoublesInPlace.example_layout, checks=[GRADIENTS, "predict_does_not_modify_inputs"]
    )
    assert report.result(GRADIENTS).status == "passed", report.result(GRADIENTS).message
    assert report.result("predict_does_not_modify_inputs").status == "failed"
