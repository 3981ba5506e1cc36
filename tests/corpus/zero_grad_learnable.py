"""Correct but awkward: per-channel scale Y = w*X with a second learnable `unused` that does
not affect the output; backward correctly returns zeros for it. A zero gradient that is
truly zero must not be flagged as "gradient missing". Must pass every check."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ZeroGradLearnable:
    learnables = ("w", "unused")
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="zero_grad"):
        self.name = name
        self.w = None
        self.unused = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.w is None:
            self.w = np.random.rand(*shape)
        if self.unused is None:
            self.unused = np.random.rand(*shape)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdX = self.w * dLdY
        dLdw = xp.sum(dLdY * X, axis=axes, keepdims=True)
        dLdunused = xp.zeros(self.unused.shape, dtype=X.dtype)  # correct: no effect on Y
        return dLdX, dLdw, dLdunused
