"""Broken gradient: tanh layer whose dLdX is multiplied by (1 + 1e-6), a relative error of
1e-6. Shapes and dtypes are right. Must fail: gradients_are_numerically_correct in float64
(DESIGN.md: real errors of relative size 1e-6 are caught in float64; float32 cannot
resolve it)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhTinyError:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="tanh_tiny_error"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (1 - Y * Y) * (1 + 1e-6)  # BUG: relative error 1e-6
