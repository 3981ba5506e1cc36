"""Broken: per-channel scale Y = w*X whose backward doubles dLdX in channel 1 (the bug) and, on fewer than 16
observations, returns a NaN in dLdX and no gradient of w: a sub-batch of 8 shows those, not the bug.
Check: gradients_are_numerically_correct
Says: off by a factor 2 in channel 1 of X
Never says: NaN
"""

import numpy as np


class OddOnFewObservations:
    learnables = ("w",)
    example_layout = "6,6,4,32:SSCB"

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
        dLdX = self.w * dLdY
        dLdX[:, :, 1, :] *= 2  # BUG
        if X.shape[-1] < 16:
            dLdX[0, 0, 0, 0] = np.nan
            return dLdX, None
        return dLdX, np.sum(dLdY * X, axis=self.axes, keepdims=True)
