"""Broken: an elementwise tanh over a sequence whose backward scales dLdX by 1.5 at time step 2
only; every other time step is right.
Check: gradients_are_numerically_correct
Says: time step 2\\b
Never says: constant factor
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TanhWrongAtOneStep:
    example_layout = "4,3,6:CBT"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = dLdY * (1 - xp.tanh(X) ** 2)
        dLdX[:, :, 2] *= 1.5  # BUG: time step 2 only
        return dLdX
