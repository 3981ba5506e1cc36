"""Correct: operation with a memory value, Y = tanh(X) * s, with X (4,3,5,6:SSCB) and a scale s
of shape (1,1,5,1) (one value per channel). num_memory_values = 1: forward returns
(Y, T) with T = tanh(X), and backward(dLdY, compute_gradients, X, s, T) uses T for
dLdX = dLdY * s * (1 - T**2) and dLds = sum(dLdY * T) over the non-channel axes.
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhScaleWithMemory:
    num_outputs = 1
    save_inputs_for_backward = True
    save_outputs_for_backward = False
    num_memory_values = 1
    example_layout = ["4,3,5,6:SSCB", "1,1,5,1:SSCU"]

    def forward(self, X, s):
        xp = get_array_module(X)
        T = xp.tanh(X)
        return T * s, T

    def backward(self, dLdY, compute_gradients, X, s, T):
        xp = get_array_module(X)
        dLdX = dLdY * s * (1 - T * T) if compute_gradients[0] else None
        dLds = None
        if compute_gradients[1]:
            axes = tuple(i for i, n in enumerate(s.shape) if n == 1)
            dLds = xp.sum(dLdY * T, axis=axes, keepdims=True)
        return dLdX, dLds
