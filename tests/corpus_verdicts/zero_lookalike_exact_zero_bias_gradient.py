"""Correct: spatial centering Y = (X + b) - mean over the spatial axes of (X + b), per observation and channel; the
per-channel bias b cancels, so its true gradient is exactly zero and backward returns zeros for it.
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class CenteringWithCancelledBias:
    learnables = ("b",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.b = None

    def initialize(self, layout):
        c = layout.find("C")
        self.spatial = tuple(i for i, label in enumerate(layout.format) if label == "S")
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.b is None:
            self.b = np.random.randn(*shape)

    def predict(self, X):
        Z = X + self.b
        return Z - Z.mean(axis=self.spatial, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = dLdY - dLdY.mean(axis=self.spatial, keepdims=True)
        return dLdX, xp.zeros_like(self.b)
