r"""Broken: a depthwise 3x3 convolution whose backward returns the kernel's gradient rotated by 180 degrees and
doubled: neither the reversal nor the factor alone makes it right, and neither is said.
Check: gradients_are_numerically_correct
Says: the gradient of K is wrong
Never says: flipped
Never says: constant factor
"""

import numpy as np


class DepthwiseConv3x3:
    learnables = ("K",)
    example_layout = "5,4,3,2:SSCB"

    def __init__(self):
        self.K = None

    def initialize(self, layout):
        if self.K is None:
            self.K = np.random.default_rng(3).standard_normal((3, 3, layout.size[2]))

    def predict(self, X):
        H, W = X.shape[0], X.shape[1]
        padded = np.pad(X, ((1, 1), (1, 1), (0, 0), (0, 0)))
        Y = np.zeros_like(X)
        for p in range(3):
            for q in range(3):
                Y = Y + self.K[p, q][:, None] * padded[p : p + H, q : q + W]
        return Y

    def backward(self, X, Y, dLdY, memory):
        H, W = X.shape[0], X.shape[1]
        padded = np.pad(X, ((1, 1), (1, 1), (0, 0), (0, 0)))
        dpadded = np.zeros_like(padded)
        dLdK = np.zeros_like(self.K)
        for p in range(3):
            for q in range(3):
                dpadded[p : p + H, q : q + W] += self.K[p, q][:, None] * dLdY
                dLdK[p, q] = np.sum(dLdY * padded[p : p + H, q : q + W], axis=(0, 1, 3))
        return dpadded[1 : H + 1, 1 : W + 1], 2 * dLdK[::-1, ::-1]  # BUG: dLdK as computed
