"""Broken gradient: per-channel scale and shift operation, Y = a*X + b (inputs X, a, b, with a
and b of shape (1,1,5,1)), whose backward returns the gradients of a and b in each other's
place: (dLdX, dLdb, dLda). Both have the same shape, so no size or type check can see it, and
the mask is honored. Must fail: gradients_are_numerically_correct (arguments a and b).
dLdX is correct."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleShiftSwapped:
    num_outputs = 1
    save_inputs_for_backward = True
    save_outputs_for_backward = False
    num_memory_values = 0
    example_layout = ["4,3,5,6:SSCB", "1,1,5,1:SSCU", "1,1,5,1:SSCU"]

    def forward(self, X, a, b):
        return a * X + b

    def backward(self, dLdY, compute_gradients, X, a, b):
        xp = get_array_module(X)
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
        dLdX = a * dLdY if compute_gradients[0] else None
        dLda = xp.sum(dLdY * X, axis=axes, keepdims=True) if compute_gradients[2] else None
        dLdb = xp.sum(dLdY, axis=axes, keepdims=True) if compute_gradients[1] else None
        return dLdX, dLdb, dLda  # BUG: a's and b's gradients in each other's place
