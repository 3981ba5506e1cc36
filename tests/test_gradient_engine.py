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


# -- the diagnosis of a failure spends a time budget; the failure itself is never lost ----------


@pytest.mark.real_diagnosis_budget
def test_the_diagnosis_budget_follows_the_proof_within_a_share_of_the_timeout():
    from layercheck.checks.gradients import (
        DIAGNOSIS_FACTOR,
        DIAGNOSIS_FLOOR_S,
        DIAGNOSIS_SMALL_ELEMENTS,
        DIAGNOSIS_SMALL_FACTOR,
        DIAGNOSIS_TIMEOUT_SHARE,
        diagnosis_budget,
    )

    assert diagnosis_budget(0.0, None) == DIAGNOSIS_FLOOR_S
    # A small layer: a multiple of the proof, at least the floor.
    assert diagnosis_budget(10.0, None) == DIAGNOSIS_SMALL_FACTOR * 10.0
    assert diagnosis_budget(0.1, None, passing_s=0.1, elements=DIAGNOSIS_SMALL_ELEMENTS) == DIAGNOSIS_FLOOR_S
    # A large one: what is left, after the proof, of the factor times a passing check (the whole
    # failing check costs at most that many passing ones), that share shrunk with the size.
    large = 100 * DIAGNOSIS_SMALL_ELEMENTS
    assert diagnosis_budget(10.0, None, passing_s=5.0, elements=large) == pytest.approx(DIAGNOSIS_FACTOR * 5.0 - 10.0)
    assert diagnosis_budget(10.0, None, passing_s=1.0, elements=large) == pytest.approx(DIAGNOSIS_SMALL_FACTOR * 0.1)
    assert diagnosis_budget(0.0, None, passing_s=0.0, elements=large) == pytest.approx(DIAGNOSIS_FLOOR_S / 100)
    assert diagnosis_budget(10.0, 20.0) == DIAGNOSIS_TIMEOUT_SHARE * 20.0
    assert diagnosis_budget(0.0, 1.0) == DIAGNOSIS_TIMEOUT_SHARE * 1.0  # the floor never passes the share
    # Never past the target's timeout: with 5 s of 100 left, less than 5 s, whatever the rest says.
    assert 0 < diagnosis_budget(10.0, 100.0, 5.0) < 5.0
    assert diagnosis_budget(10.0, 100.0, -1.0) == 0.0


CHANNEL_BUG = Path(__file__).resolve().parent / "corpus" / "grad_one_channel.py"


def _gradient_result(monkeypatch, seconds):
    import layercheck.checks.gradients as gradients

    monkeypatch.setattr(gradients, "diagnosis_budget", lambda proof_s, timeout, left, **sizes: seconds)
    obj = load_layer(CHANNEL_BUG)
    return layercheck.check_layer(obj, obj.example_layout).result("gradients_are_numerically_correct")


def test_a_proven_failure_is_reported_when_the_diagnosis_has_no_time_and_names_no_cause(monkeypatch):
    result = _gradient_result(monkeypatch, 0.0)
    assert result.status == "failed"
    assert result.message.startswith("the gradient of X is wrong (relative error "), result.message
    assert "channel" not in result.message and "factor" not in result.message
    (x,) = [a for a in result.details["arguments"] if a["argument"] == "X"]
    assert x["status"] == "failed" and x["diagnosis"]["stopped_after_s"] == 0.0
    # One number for one claim: the headline's relative error is the record's, in the same digits.
    assert f"(relative error {x['max_rel_error']:.3g} along a random direction)" in result.message
    assert any(f"(relative error {x['max_rel_error']:.3g})" in line for line in result.explanation)
    finding = x["diagnosis"]["finding"]
    assert finding["cause"] == "unexplained" and x["diagnosis"]["regions"] == []
    assert finding["numbers"]["rel_error"] == x["max_rel_error"]  # the same probe's number, not another's
    assert any(line.strip().startswith("localization stopped after its budget of 0 s") for line in result.explanation)


def test_with_time_the_same_failure_is_localized_and_says_nothing_stopped(monkeypatch):
    result = _gradient_result(monkeypatch, 60.0)
    assert result.status == "failed" and "channel 2" in result.message, result.message
    (x,) = [a for a in result.details["arguments"] if a["argument"] == "X"]
    assert x["diagnosis"]["stopped_after_s"] is None
    assert not any("localization stopped" in line for line in result.explanation)
