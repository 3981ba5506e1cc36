"""Correct: per-channel scale with heavy cancellation Y = (w*X + 1000) - 1000, computed in the input precision (float64
loses 3 of its 16 digits, far from float32).
Never says: float32
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


OFFSET = 1000.0


class ScaleWithCancellation:
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
        return (self.w * X + OFFSET) - OFFSET

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return self.w * dLdY, xp.sum(dLdY * X, axis=self.axes, keepdims=True)
