"""Correct: PReLU with one slope shared by every channel, a 0-d learnable, whose gradient is
`(dLdY * min(X, 0)).sum()`: NumPy returns that as a scalar (np.float64), CuPy as a 0-d array,
and either is the 0-d array the learnable's gradient is."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class PReLUSharedSlope:
    learnables = ("alpha",)
    example_layout = "6,6,3,4:SSCB"

    def __init__(self):
        self.alpha = np.array(0.25)

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0) + self.alpha * xp.minimum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = dLdY * xp.where(X > 0, 1, self.alpha).astype(X.dtype)
        return dLdX, (dLdY * xp.minimum(X, 0)).sum()
