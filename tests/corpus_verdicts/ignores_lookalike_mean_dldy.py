"""Broken: elementwise tanh whose backward multiplies the local derivative by the mean of dLdY instead of dLdY itself
(linear in dLdY, but wrong).
Check: gradients_are_numerically_correct
Never says: ignores dL/dY
Never says: not linear in dL/dY
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhMeanDLdY:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return (1 - Y * Y) * dLdY.mean()  # BUG: the mean of dLdY, not dLdY
