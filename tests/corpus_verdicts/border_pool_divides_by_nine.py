"""Broken: 3x3 average pooling, stride 1, zero padding "same", whose forward divides by the number of in-bounds elements
but whose backward divides by 9, so dLdX is wrong near the border of the plane (rows and columns 0, 1, 4, 5 of 6) and
right in the centre.
Check: gradients_are_numerically_correct
Says: border
Never says: constant factor
Never says: only in channel
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class AveragePoolBackwardDividesBy9:
    example_layout = "6,6,3,4:SSCB"

    def initialize(self, layout):
        if layout.format[:2] != "SS":
            raise ValueError("this pooling expects the two spatial axes first (SSCB)")

    def box_sum(self, A):
        """Sum over the 3x3 window around each position, zero outside the plane."""
        xp = get_array_module(A)
        n0, n1 = A.shape[0], A.shape[1]
        P = xp.pad(A, [(1, 1), (1, 1)] + [(0, 0)] * (A.ndim - 2))
        return sum(P[i : i + n0, j : j + n1] for i in range(3) for j in range(3))

    def predict(self, X):
        xp = get_array_module(X)
        return self.box_sum(X) / self.box_sum(xp.ones_like(X))

    def backward(self, X, Y, dLdY, memory):
        return self.box_sum(dLdY) / 9  # BUG: should be box_sum(dLdY / count)
