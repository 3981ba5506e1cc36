"""Broken: square layer Y = X^2 whose backward doubles dLdY in place (dLdY *= 2) and returns dLdY*X: the gradient is
right but the caller's dLdY is changed.
Check: backward_does_not_modify_inputs
Never says: mixes observations
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SquareModifiesDLdY:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        dLdY *= 2  # BUG: changes the caller's array
        return dLdY * X
