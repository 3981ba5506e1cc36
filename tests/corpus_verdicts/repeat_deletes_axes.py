"""Broken: per-channel scale Y = w*X whose backward deletes the reduction axes that initialize stored (del self.axes,
"to free memory"), so the first backward is right and every later one on the same object raises AttributeError.
Check: backward_is_repeatable
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DeletesAxesInBackward:
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
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        del self.axes  # BUG: the next backward on this object has no axes
        return self.w * dLdY, dLdw
