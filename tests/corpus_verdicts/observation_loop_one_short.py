"""Broken: a per-channel scale of tanh(X) whose backward loops over the observations with
`range(B - 1)`, one short: the last observation of the batch gets no gradient (a hunt: at
24,24,20,128:SSCB the sub-batch of the first 8 showed observation 7, which the batch has
right, and localizing the whole batch took 40 times the passing check).
Check: gradients_are_numerically_correct
Says: wrong only in observation 39 of X
Never says: observation 7 |only in channel|constant factor
"""

import numpy as np


class ScaleLoopOneShort:
    learnables = ("w",)
    example_layout = "4,4,3,40:SSCB"

    def initialize(self, layout):
        if getattr(self, "w", None) is None:
            self.w = np.linspace(0.5, 1.5, layout.size[2]).reshape(1, 1, -1, 1)

    def predict(self, X):
        return self.w * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        dX = np.zeros_like(X)
        for n in range(X.shape[3] - 1):  # BUG: one short of the batch
            dX[..., n] = self.w[..., 0] * (1 - t[..., n] ** 2) * dLdY[..., n]
        return dX, (dLdY * t).sum(axis=(0, 1, 3), keepdims=True)
