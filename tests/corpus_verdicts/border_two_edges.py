r"""Broken: an elementwise tanh whose backward zeroes the first row and the last column of the plane, so dLdX
is wrong on those two edges only. The other two edges each share a corner with them, and are right
without it: the two edges are named, not the four.
Check: gradients_are_numerically_correct
Says: border of the spatial plane
Says: wrong in row 0, column 7\)
Never says: row 7
Never says: column 0
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhTwoEdgesZero:
    example_layout = "8,8,20,3:SSCB"

    def predict(self, X):
        return get_array_module(X).tanh(X)

    def backward(self, X, Y, dLdY, memory):
        dX = dLdY * (1 - Y**2)
        dX[0] = 0  # the bug: the first row's gradient dropped
        dX[:, -1] = 0  # and the last column's
        return dX
