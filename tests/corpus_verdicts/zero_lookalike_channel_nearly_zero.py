r"""Broken: per-channel scale Y = w*X whose dLdX in channel 1 is 1e-9 dL/dY X, nearly zero but not zero (and no
constant factor of the right one): wrong only there, never said zero.
Check: gradients_are_numerically_correct
Says: the gradient of X is wrong only in channel 1 of X
Never says: zero
Never says: factor
"""

import numpy as np


class ScaleNearlyZeroInOneChannel:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        shape = [1] * layout.ndim
        shape[layout.find("C")] = layout.size[layout.find("C")]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        dLdX = self.w * dLdY
        dLdX[:, :, 1] = 1e-9 * dLdY[:, :, 1] * X[:, :, 1]  # BUG: self.w * dLdY there too
        return dLdX, np.sum(dLdY * X, axis=(0, 1, 3), keepdims=True)
