"""Broken: ReLU whose backward builds its mask with xp.where(X > 0, 1.0, 0.0), which is
float64, so a float32 dLdY gives a float64 dLdX. Must fail: backward_is_consistent_in_type."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class BackwardFloat64Leak:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu_leak"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        mask = xp.where(X > 0, 1.0, 0.0)  # BUG: float64 whatever the dtype of X
        return dLdY * mask
