"""Broken gradient: tanh layer whose dLdX is 2x too big. Shapes and dtypes are right.
Must fail: gradients_are_numerically_correct (argument X; diagnosis: off by a constant
factor 2)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhScaled:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="tanh_scaled"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return 2 * dLdY * (1 - Y * Y)  # BUG: factor 2
