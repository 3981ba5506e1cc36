"""Broken: elementwise tanh whose backward returns the local derivative 1 - Y^2 without multiplying by dLdY.
Check: gradients_are_numerically_correct
Says: ignores dL/dY
Never says: constant factor
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhIgnoresDLdY:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return 1 - Y * Y  # BUG: dLdY never used
