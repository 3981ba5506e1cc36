"""Correct: Y = w*X^3 with a per-channel scale w, strongly nonlinear in X but, as every backward, linear in dLdY.
Never says: not linear in dL/dY
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaledCube:
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
        return self.w * X**3

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = 3 * self.w * X * X * dLdY
        dLdw = xp.sum(dLdY * X**3, axis=self.axes, keepdims=True)
        return dLdX, dLdw
