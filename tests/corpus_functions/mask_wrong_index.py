"""Broken: per-channel scale and shift operation, Y = a*X + b (inputs X, a, b), whose backward
reads the compute_gradients mask one place off: gradient i is computed when
compute_gradients[(i + 1) % 3] is set. With every entry True it returns all three correct
gradients; with only entry k set it returns None for the requested input k and a value for the
unrequested input k - 1. Must fail: backward_respects_compute_gradients."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleShiftMaskWrongIndex:
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
        # BUG: the mask is read at index i + 1 (wrapping round) for gradient i.
        dLdX = a * dLdY if compute_gradients[1] else None
        dLda = xp.sum(dLdY * X, axis=axes, keepdims=True) if compute_gradients[2] else None
        dLdb = xp.sum(dLdY, axis=axes, keepdims=True) if compute_gradients[0] else None
        return dLdX, dLda, dLdb
