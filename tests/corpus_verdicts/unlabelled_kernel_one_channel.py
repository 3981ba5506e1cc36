r"""Broken: a depthwise 3x3 convolution whose kernel K has shape (3, 3, C): no axis of it is labelled
(it does not broadcast against the input's SSCB), and its gradient is doubled in channel 5 alone.
The kernel is cut along each of its own axes, and the slice is found as a channel is. Before, it
read "wrong at 9 of the 180 elements of K measured" here, where each element was measured, and "the
gradient of K is wrong (relative error 0.22 ...)" at 24,24,20,128, where none could be.
Check: gradients_are_numerically_correct
Says: off by a factor 2 in axis-2 index 5 of K \(right in the 19 others checked\)
Never says: relative error [0-9.e-]+ along a random direction
"""

import numpy as np


class DepthwiseConv:
    learnables = ("K",)
    example_layout = "6,6,20,2:SSCB"

    def initialize(self, layout):
        if getattr(self, "K", None) is None:
            self.K = np.random.randn(3, 3, layout.size[2]) / 3

    def predict(self, X):
        H, W = X.shape[:2]
        Xp = np.pad(X, ((1, 1), (1, 1), (0, 0), (0, 0)))
        Y = np.zeros_like(X)
        for i in range(3):
            for j in range(3):
                Y += Xp[i : i + H, j : j + W] * self.K[i, j][:, None]
        return Y

    def backward(self, X, Y, dLdY, memory):
        H, W = X.shape[:2]
        Xp = np.pad(X, ((1, 1), (1, 1), (0, 0), (0, 0)))
        dXp = np.zeros_like(Xp)
        dK = np.zeros_like(self.K)
        for i in range(3):
            for j in range(3):
                dXp[i : i + H, j : j + W] += dLdY * self.K[i, j][:, None]
                dK[i, j] = np.sum(Xp[i : i + H, j : j + W] * dLdY, axis=(0, 1, 3))
        dK[:, :, 5] *= 2  # BUG: channel 5 of dK
        return dXp[1:-1, 1:-1], dK
