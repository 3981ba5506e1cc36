r"""Broken: a scale-shift after tanh, Y = s * tanh(X) + t with s, t of shape (1,1,C,1), whose channel 0 is
scaled by 1e-5 and whose dX is doubled in that channel alone. The channel's gradient is small against
the rest, and the ratio its probes measure carries their error: 1.99734 on seed 9, which the corrected
gradient passed as well, and that number was said. The exact factor near it, 2, is proven first.
Check: gradients_are_numerically_correct
Says: off by a factor 2 in channel 0 of X \(right in the 5 others checked\)
Never says: factor 1\.99
"""

import numpy as np


class TinyChannelScaleShift:
    learnables = ("s", "t")
    example_layout = "4,4,6,3:SSCB"

    def initialize(self, layout):
        C = layout.size[2]
        if getattr(self, "s", None) is None:
            self.s = 0.5 + np.random.rand(1, 1, C, 1)
            self.s[0, 0, 0, 0] = 1e-5
        if getattr(self, "t", None) is None:
            self.t = 0.3 * np.random.randn(1, 1, C, 1)

    def predict(self, X):
        return self.s * np.tanh(X) + self.t

    def backward(self, X, Y, dLdY, memory):
        th = np.tanh(X)
        dX = dLdY * self.s * (1 - th**2)
        dX[:, :, 0] *= 2  # BUG: channel 0 (the tiny one) only
        return dX, (dLdY * th).sum(axis=(0, 1, 3), keepdims=True), dLdY.sum(axis=(0, 1, 3), keepdims=True)
