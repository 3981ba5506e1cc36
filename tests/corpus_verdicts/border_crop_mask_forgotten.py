"""Broken: a crop-to-interior layer Y = X with the first and last index of every spatial axis set to zero, whose
backward returns dLdY unmasked, so dLdX is wrong exactly on the border of the plane.
Check: gradients_are_numerically_correct
Says: border
Never says: only in channel
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ZeroBorderMaskForgotten:
    example_layout = "6,6,3,4:SSCB"

    def initialize(self, layout):
        self.spatial = tuple(i for i, label in enumerate(layout.format) if label == "S")

    def predict(self, X):
        return X * self.mask(X)

    def mask(self, X):
        xp = get_array_module(X)
        m = xp.zeros(X.shape, dtype=X.dtype)
        inner = tuple(slice(1, -1) if i in self.spatial else slice(None) for i in range(X.ndim))
        m[inner] = 1
        return m

    def backward(self, X, Y, dLdY, memory):
        return dLdY.copy()  # BUG: the border mask is not applied
