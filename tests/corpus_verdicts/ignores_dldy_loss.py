"""Broken: sum-of-squares loss Y = sum(X^2) with a 1x1 output whose backward returns 2*X, ignoring the incoming dLdY.
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


class SumSquaresIgnoresDLdY:
    example_layout = "5,4:CB"

    def output_format(self, input_format):
        return "UU"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.sum(X * X).reshape(1, 1)

    def backward(self, X, Y, dLdY, memory):
        return 2 * X  # BUG: should be 2 * X * dLdY
