"""Broken: per-channel scale Y = w*X whose backward, run in chunks of 16 observations, scales dLdX by 1.5 in the first
chunk alone: the first 8 observations run alone are wrong throughout, and so are the 8 past them; the batch's last are
right, so the error is a run of observations from the first, which the whole batch says.
Check: gradients_are_numerically_correct
Says: off by a factor 3/2 in observations 0-15 of X
Never says: nothing narrower
"""

import numpy as np


class FirstSixteenWrong:
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
        dLdX[..., :16] *= 1.5  # BUG: the first chunk of 16 observations
        return dLdX, np.sum(dLdY * X, axis=self.axes, keepdims=True)
