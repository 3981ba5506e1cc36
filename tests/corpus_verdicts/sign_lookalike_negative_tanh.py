"""Correct: Y = -w*tanh(X) with a positive per-channel scale w; its true dLdX has the opposite sign of dLdY everywhere.
Never says: wrong sign
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class NegativeTanh:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5

    def predict(self, X):
        xp = get_array_module(X)
        return -self.w * xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        t = xp.tanh(X)
        dLdX = -self.w * (1 - t * t) * dLdY
        dLdw = -xp.sum(dLdY * t, axis=self.axes, keepdims=True)
        return dLdX, dLdw
