"""Broken: elementwise tanh whose backward normalizes dLdY by its sum (the same gradient for
any multiple of dLdY, another for another dLdY: it does not ignore dLdY, it is not linear in it).
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


class TanhNormalizedDLdY:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return (1 - Y * Y) * dLdY / dLdY.sum() * dLdY.size  # BUG: dLdY scaled to a sum of its size
