r"""Broken: per-channel scale Y = w*X whose dLdX is zero in channel 1 only (right in the other channels): zero
there, not everywhere.
Check: gradients_are_numerically_correct
Says: the gradient of X is zero in channel 1 of X \(right in the 3 others checked\)
Says: likely cause: zero or missing gradient in channel 1
Says: where: wrong only in channel 1
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleZeroInOneChannel:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        self.channel_axis = c
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.w * dLdY
        index = [slice(None)] * X.ndim
        index[self.channel_axis] = 1
        dLdX[tuple(index)] = 0  # BUG: channel 1 dropped
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        return dLdX, dLdw
