"""Correct: sum-of-squares loss Y = sum(X^2) with a 1x1 output; backward returns 2*X*dLdY.
Never says: ignores dL/dY
Never says: constant factor
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SumSquares:
    example_layout = "5,4:CB"

    def output_format(self, input_format):
        return "UU"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.sum(X * X).reshape(1, 1)

    def backward(self, X, Y, dLdY, memory):
        return 2 * X * dLdY
