"""Broken: a dead-row layer Y = X with row 2 of the plane (an interior row of 6) set to zero, whose backward returns
dLdY unmasked, so dLdX is wrong in row 2 only.
Check: gradients_are_numerically_correct
Says: row 2
Never says: border
Never says: only in channel
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DeadRowMaskForgotten:
    example_layout = "6,6,3,4:SSCB"

    def initialize(self, layout):
        self.spatial = tuple(i for i, label in enumerate(layout.format) if label == "S")

    def predict(self, X):
        return X * self.mask(X)

    def mask(self, X):
        xp = get_array_module(X)
        m = xp.ones(X.shape, dtype=X.dtype)
        m[tuple(2 if i == self.spatial[0] else slice(None) for i in range(X.ndim))] = 0
        return m

    def backward(self, X, Y, dLdY, memory):
        return dLdY.copy()  # BUG: the row mask is not applied
