r"""Broken: Y = w tanh(X) with a weight per channel, and no skip connection, whose backward adds dL/dY to the
gradient of X as a residual block's would (code copied from one): the gradient has dL/dY once too often.
Check: gradients_are_numerically_correct
Says: the gradient of X has a term equal to dL/dY too many
Says: likely cause: dL/dY added once too often
Never says: constant factor
"""

import numpy as np


class ScaledTanh:
    learnables = ("w",)
    example_layout = "6,3,5:CBT"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            self.w = np.linspace(0.5, 1.5, layout.size[0]).reshape(-1, 1, 1)

    def predict(self, X):
        return self.w * np.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        t = np.tanh(X)
        dLdw = np.sum(dLdY * t, axis=(1, 2), keepdims=True)
        return dLdY + dLdY * self.w * (1 - t * t), dLdw  # BUG: dLdY * self.w * (1 - t * t)
