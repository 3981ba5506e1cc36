"""The gradient engine on layers that misbehave while it probes them."""

import numpy as np

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
