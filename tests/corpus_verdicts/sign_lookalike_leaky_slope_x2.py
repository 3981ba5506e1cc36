"""Broken: leaky ReLU Y = X if X > 0 else 0.1*X whose backward uses slope 0.2 instead of 0.1 where X < 0 (right sign,
twice too large there).
Check: gradients_are_numerically_correct
Never says: wrong sign
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


SLOPE = 0.1


class LeakyReLUSlopeTwice:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.where(X > 0, X, SLOPE * X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return dLdY * xp.where(X > 0, 1.0, 2 * SLOPE).astype(X.dtype)  # BUG: slope doubled where X < 0
