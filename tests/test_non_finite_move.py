"""Outputs finite at the drawn inputs and NaN one finite-difference step away (issue 27): the
gradient check stays `incomplete` and says where the outputs went NaN or infinite, from the
engine's typed record (`findings.NonFiniteMove`, worded by `findings.gradient_wording`)."""

from __future__ import annotations

import numpy as np
from conftest import GRADIENTS

import layercheck
from layercheck.findings.gradient_wording import non_finite_move_text
from layercheck.numerics.gradients.findings import NonFiniteMove, NonFiniteOutput
from layercheck.results import Status


def _nan_one_step_away():
    """2 * X at every value it was first called with, NaN at any other: a perturbed pass is
    NaN wherever an element moved."""
    seen: dict[str, np.ndarray] = {}

    class NaNOneStepAway:
        def predict(self, X):
            drawn = seen.setdefault(X.dtype.str, X.copy())
            return np.where(np.isin(X, drawn), 2 * X, np.nan)

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    return NaNOneStepAway


def test_the_message_says_which_argument_moved_how_far_and_which_outputs_went_non_finite():
    report = layercheck.check_layer(_nan_one_step_away(), "3,4:CB", checks=[GRADIENTS], dtypes=["float64"])
    result = report.result(GRADIENTS)
    assert result.status == Status.INCOMPLETE  # --strict makes it fail; the layer is not proven wrong
    (argument,) = result.details["arguments"]
    move = argument["non_finite"]
    assert move["arguments"] == ["X"] and move["element"] is None
    assert move["outputs"] == [{"output": "Y", "count": 12, "total": 12, "first": [0, 0]}]
    assert result.message == (
        f"could not decide for X (moving X by a step of {move['step']:.3g} along a random direction made Y NaN "
        "or infinite at 12 of 12 elements, first at (0, 0), where the outputs were finite at the drawn "
        "inputs: finite differences cannot be taken there)"
    )


def test_a_layer_already_non_finite_at_the_inputs_is_not_said_to_go_non_finite_when_moved():
    class NaNEverywhere:
        def predict(self, X):
            return X * np.nan

        def backward(self, X, Y, dLdY, memory):
            return 2 * dLdY

    report = layercheck.check_layer(NaNEverywhere, "3,4:CB", dtypes=["float64"])
    assert report.result("outputs_are_finite").status == Status.FAILED
    gradients = report.result(GRADIENTS)
    assert "moving" not in gradients.message
    assert all("non_finite" not in a for a in gradients.details.get("arguments", []))


def test_an_element_probe_names_the_element_and_the_part_moved():
    move = NonFiniteMove((1,), 1e-7, (2, 0), True, (NonFiniteOutput(0, 1, 6, (2, 0)), NonFiniteOutput(1, 2, 3, (1,))))
    text = non_finite_move_text(move, ["X", "W"], ["Y", "updated h"])
    assert text == (
        "moving the imaginary part of W(2, 0) by a step of 1e-07 made Y NaN or infinite at 1 of 6 elements, "
        "first at (2, 0), updated h NaN or infinite at 2 of 3 elements, first at (1,), where the outputs were "
        "finite at the drawn inputs: finite differences cannot be taken there"
    )
    assert move.to_dict(["X", "W"], ["Y", "updated h"])["outputs"][1] == {
        "output": "updated h",
        "count": 2,
        "total": 3,
        "first": [1],
    }
