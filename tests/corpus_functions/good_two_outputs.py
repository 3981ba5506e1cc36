"""Correct: operation with two inputs and two outputs, Y1 = sin(X)*w and Y2 = X**2, with X and
w both (5,4,3:CBT). Saves its inputs and its outputs for backward, so backward is called as
backward(dLdY1, dLdY2, compute_gradients, X, w, Y1, Y2) and returns (dLdX, dLdw), None where
compute_gradients is False. Backward takes dY2/dX = 2*X as 2*sign(X)*sqrt(Y2), so that the
saved Y2 really is used (a caller passing the outputs in the wrong places breaks dLdX); Y1 is
received but not used (sin(X) = Y1/w breaks down where w = 0).
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SinTimesWeightAndSquare:
    num_outputs = 2
    save_inputs_for_backward = True
    save_outputs_for_backward = True
    num_memory_values = 0
    example_layout = ["5,4,3:CBT", "5,4,3:CBT"]

    def forward(self, X, w):
        xp = get_array_module(X)
        return xp.sin(X) * w, X * X

    def backward(self, dLdY1, dLdY2, compute_gradients, X, w, Y1, Y2):
        xp = get_array_module(X)
        dLdX = None
        if compute_gradients[0]:
            dLdX = dLdY1 * xp.cos(X) * w + dLdY2 * 2 * xp.sign(X) * xp.sqrt(Y2)
        dLdw = None
        if compute_gradients[1]:
            dLdw = dLdY1 * xp.sin(X)
        return dLdX, dLdw
