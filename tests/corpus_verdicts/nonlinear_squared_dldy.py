"""Broken: per-channel scale Y = w*X whose dLdX is w*dLdY**2 (dLdY squared); dLdw is right.
Check: gradients_are_numerically_correct
Says: not linear in dL/dY
Never says: ignores dL/dY
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleSquaredDLdY:
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
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.w * dLdY**2  # BUG: dLdY squared
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        return dLdX, dLdw
