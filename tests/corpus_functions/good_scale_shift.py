"""Correct: per-channel scale and shift operation, Y = a*X + b, with three inputs: the data X
(4,3,5,6:SSCB) and a, b of shape (1,1,5,1) (one value per channel). Saves its inputs for
backward and returns (dLdX, dLda, dLdb), None where compute_gradients is False.
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleShift:
    num_outputs = 1
    save_inputs_for_backward = True
    save_outputs_for_backward = False
    num_memory_values = 0
    example_layout = ["4,3,5,6:SSCB", "1,1,5,1:SSCU", "1,1,5,1:SSCU"]

    def forward(self, X, a, b):
        return a * X + b

    def backward(self, dLdY, compute_gradients, X, a, b):
        xp = get_array_module(X)
        # a and b broadcast along their singleton axes: sum the gradient over those axes.
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
        dLdX = a * dLdY if compute_gradients[0] else None
        dLda = xp.sum(dLdY * X, axis=axes, keepdims=True) if compute_gradients[1] else None
        dLdb = xp.sum(dLdY, axis=axes, keepdims=True) if compute_gradients[2] else None
        return dLdX, dLda, dLdb
