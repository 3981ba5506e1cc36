"""Broken: backward reads a mask from `memory`, but the layer has no forward, so memory is
None and backward raises TypeError. Must fail: backward_does_not_error."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class BackwardRaises:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="backward_raises"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * memory["mask"]  # BUG: memory is None (no forward) -> TypeError
