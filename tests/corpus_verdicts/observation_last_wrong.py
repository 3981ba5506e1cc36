"""Broken: per-channel scale Y = w*X whose dLdX is 1.5 times the true gradient in the batch's last observation only.
Check: gradients_are_numerically_correct
Says: off by a factor 3/2 in observation 4 of X
Never says: only in channel
Never says: constant factor
Never says: other observations' outputs
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleWrongInTheLastObservation:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        self.batch_axis = layout.find("B")
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
        index[self.batch_axis] = -1
        dLdX[tuple(index)] *= 1.5  # BUG: the last observation scaled by 1.5
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        return dLdX, dLdw
