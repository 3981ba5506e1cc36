"""Broken: a tanh operation whose backward scales dLdY in place (dLdY *= 1 - Y**2) and returns
it. The overwrite is its one failure: a check that called backward again with the overwritten
dLdY would see another gradient and blame the compute_gradients mask.
Must fail: backward_does_not_modify_inputs"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhScalesDLdYInPlace:
    num_outputs = 1
    save_inputs_for_backward = False
    save_outputs_for_backward = True
    num_memory_values = 0
    example_layout = "4,3,5,6:SSCB"

    def forward(self, X):
        return get_array_module(X).tanh(X)

    def backward(self, dLdY, compute_gradients, Y):
        dLdY *= 1 - Y * Y  # BUG: modifies the caller's array
        return dLdY
