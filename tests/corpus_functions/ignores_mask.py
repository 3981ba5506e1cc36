"""Broken: per-channel scale and shift operation, Y = a*X + b (inputs X, a, b), whose backward
ignores compute_gradients and always computes and returns all three gradients, instead of None
for the inputs not requested. The gradients themselves are correct.
Must fail: backward_respects_compute_gradients."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleShiftIgnoresMask:
    num_outputs = 1
    save_inputs_for_backward = True
    save_outputs_for_backward = False
    num_memory_values = 0
    example_layout = ["4,3,5,6:SSCB", "1,1,5,1:SSCU", "1,1,5,1:SSCU"]

    def forward(self, X, a, b):
        return a * X + b

    def backward(self, dLdY, compute_gradients, X, a, b):  # BUG: compute_gradients unused
        xp = get_array_module(X)
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
        dLdX = a * dLdY
        dLda = xp.sum(dLdY * X, axis=axes, keepdims=True)
        dLdb = xp.sum(dLdY, axis=axes, keepdims=True)
        return dLdX, dLda, dLdb
