"""Correct: sharp softplus Y = log(1 + exp(300*X))/300 with the stable gradient sigmoid(300*X) = (1 + tanh(150*X))/2.
Never says: NaN|infinite
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


SHARPNESS = 300.0


class SharpSoftplus:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.logaddexp(0, SHARPNESS * X) / SHARPNESS

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return dLdY * (1 + xp.tanh(SHARPNESS / 2 * X)) / 2
