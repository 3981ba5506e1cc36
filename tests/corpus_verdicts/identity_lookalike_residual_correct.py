r"""Correct: a residual block Y = X + w tanh(X) with a weight per channel, whose backward has the skip connection's
gradient: nothing is wrong, and no identity path is said left out.
Never says: identity path
"""

import numpy as np


class TanhResidual:
    learnables = ("w",)
    example_layout = "4,4,6,3:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        if self.w is None:
            self.w = np.random.default_rng(5).standard_normal(shape)

    def predict(self, X):
        return X + self.w * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        dLdw = np.sum(dLdY * t, axis=(0, 1, 3), keepdims=True)
        return dLdY + dLdY * self.w * (1 - t * t), dLdw
