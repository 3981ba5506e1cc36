r"""Broken: a two-layer perceptron over CB, Y = V softplus(W X), with 300 channels, whose dX has the wrong
sign in channel 5 alone. A partition along the channels has 16 blocks of 18 or 19 channels: the one
found wrong is cut again, and again, until it is one channel (a bisection). Before, it read "wrong only
in channels 0-17" (as if 18 channels were wrong) where only channel 5 is.
Check: gradients_are_numerically_correct
Says: the wrong sign in channel 5 of X \(right in the 299 others checked\)
Never says: channels \d+-\d+
"""

import numpy as np


class WidePerceptron:
    learnables = ("W", "V")
    example_layout = "300,6:CB"

    def initialize(self, layout):
        C = layout.size[0]
        if getattr(self, "W", None) is None:
            self.W = np.random.randn(64, C) / np.sqrt(C)
        if getattr(self, "V", None) is None:
            self.V = np.random.randn(C, 64) / 8

    def predict(self, X):
        return self.V @ np.logaddexp(0, self.W @ X)

    def backward(self, X, Y, dLdY, memory):
        a = self.W @ X
        h = np.logaddexp(0, a)
        dh = self.V.T @ dLdY
        da = dh / (1 + np.exp(-a))
        dX = self.W.T @ da
        dX[5] = -dX[5]  # BUG: the wrong sign in channel 5 only
        return dX, da @ X.T, dLdY @ h.T
