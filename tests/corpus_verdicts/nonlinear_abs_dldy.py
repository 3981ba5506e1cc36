"""Broken: elementwise tanh whose backward multiplies by abs(dLdY) instead of dLdY.
Check: gradients_are_numerically_correct
Says: not linear in dL/dY
Never says: ignores dL/dY
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhAbsDLdY:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return (1 - Y * Y) * xp.abs(dLdY)  # BUG: abs(dLdY)
