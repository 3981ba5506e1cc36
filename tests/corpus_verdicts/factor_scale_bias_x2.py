"""Broken: per-channel scale and bias Y = w*X + b whose dLdX is twice the true gradient (2*w*dLdY).
Check: gradients_are_numerically_correct
Says: constant factor
Never says: wrong sign
Never says: only in channel
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleBiasTwice:
    learnables = ("w", "b")
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = self.b = None

    def initialize(self, layout):
        c = layout.find("C")
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
        dLdX = 2 * self.w * dLdY  # BUG: factor 2
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        dLdb = xp.sum(dLdY, axis=self.axes, keepdims=True)
        return dLdX, dLdw, dLdb
