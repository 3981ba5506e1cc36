"""Broken: an elementwise tanh whose backward zeroes column 5 of 8, so dLdX is wrong in that column only. It
lies within the border 3 deep (rows 0-2 and 5-7, columns 0-2 and 5-7: 60 of the plane's 64 cells), which
was said, "right in its interior": true of the column, and saying less; a region that holds a smaller
one proven is not said.
Check: gradients_are_numerically_correct
Says: only in column 5 of X
Never says: border
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhInteriorColumnZero:
    example_layout = "8,8,20,3:SSCB"

    def predict(self, X):
        return get_array_module(X).tanh(X)

    def backward(self, X, Y, dLdY, memory):
        dX = dLdY * (1 - Y**2)
        dX[:, 5] = 0  # the bug: one column's gradient dropped
        return dX
