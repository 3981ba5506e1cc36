"""Correct: smooth absolute value Y = sqrt(X^2 + 0.01), whose true gradient X/Y changes sign with X.
Never says: wrong sign
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


EPSILON = 0.01


class SoftAbs:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.sqrt(X * X + EPSILON)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * X / Y
