"""Broken: an elementwise tanh whose backward zeroes the last column of the plane, so dLdX is wrong in
column 7 only: on the border, but not the border. The first and last rows share a cell with that column,
and neither is wrong; at 20 channels the column's blocks once went unscreened and it read as the border.
Check: gradients_are_numerically_correct
Says: only in column 7 of X
Never says: rows 0 and 7
Never says: border
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhLastColumnZero:
    example_layout = "8,8,20,3:SSCB"

    def predict(self, X):
        return get_array_module(X).tanh(X)

    def backward(self, X, Y, dLdY, memory):
        dX = dLdY * (1 - Y**2)
        dX[:, -1] = 0  # the bug: the last column's gradient dropped
        return dX
