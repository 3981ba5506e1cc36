"""Broken: per-channel scale Y = s*X with s = 1e-8 in channel 3, whose backward doubles dLdX in channel 1 (every
observation) and in the tiny channel 3 from observation 8 on: the first 8 observations show channel 1 alone, and
a probe of the whole batch cannot see channel 3; it is wrong there all the same.
Check: gradients_are_numerically_correct
Says: channels 1, 3 of X
Never says: right in the 3 others
"""

import numpy as np


class TinyChannelWrongPastEight:
    learnables = ("s",)
    example_layout = "6,6,4,32:SSCB"

    def __init__(self):
        self.s = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.s is None:
            s = np.random.rand(*shape) + 0.5
            s.reshape(-1)[3] = 1e-8
            self.s = s

    def predict(self, X):
        return self.s * X

    def backward(self, X, Y, dLdY, memory):
        dLdX = self.s * dLdY
        dLdX[:, :, 1, :] *= 2  # BUG
        dLdX[:, :, 3, 8:] *= 2  # BUG, in a channel whose gradient is tiny, past the first 8 observations
        return dLdX, np.sum(dLdY * X, axis=self.axes, keepdims=True)
