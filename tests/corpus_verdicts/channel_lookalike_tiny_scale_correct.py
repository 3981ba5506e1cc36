"""Correct: per-channel scale Y = s*X with s = 1e-6 in channel 3 (about 1 elsewhere), with a correct backward.
Never says: channel
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class TinyChannelCorrect:
    learnables = ("s",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.s = None

    def initialize(self, layout):
        c = layout.find("C")
        self.channel_axis = c
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.s is None:
            s = np.random.rand(*shape) + 0.5
            s.reshape(-1)[3] = 1e-6  # channel 3 is six orders of magnitude smaller
            self.s = s

    def predict(self, X):
        return self.s * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.s * dLdY
        dLds = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        return dLdX, dLds
