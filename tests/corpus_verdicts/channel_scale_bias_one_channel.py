"""Broken: per-channel scale and bias Y = w*X + b whose dLdX is 1.5 times the true gradient in channel 1 only.
Check: gradients_are_numerically_correct
Says: only in channel
Never says: constant factor
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleBiasWrongInChannel1:
    learnables = ("w", "b")
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = self.b = None

    def initialize(self, layout):
        c = layout.find("C")
        self.channel_axis = c
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5
        if self.b is None:
            self.b = np.random.randn(*shape)

    def predict(self, X):
        return self.w * X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        factor = xp.ones(self.w.shape, dtype=X.dtype)
        index = [0] * X.ndim
        index[self.channel_axis] = 1
        factor[tuple(index)] = 1.5  # BUG: channel 1 scaled by 1.5
        dLdX = self.w * dLdY * factor
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        dLdb = xp.sum(dLdY, axis=self.axes, keepdims=True)
        return dLdX, dLdw, dLdb
