"""Broken: leaky ReLU Y = X if X > 0 else 0.1*X whose backward uses slope -0.1 where X < 0 (wrong sign only in the
negative region).
Check: gradients_are_numerically_correct
Says: wrong sign where
Never says: constant factor
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


SLOPE = 0.1


class LeakyReLUWrongSignBelowZero:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.where(X > 0, X, SLOPE * X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return dLdY * xp.where(X > 0, 1.0, -SLOPE).astype(X.dtype)  # BUG: sign flipped where X < 0
