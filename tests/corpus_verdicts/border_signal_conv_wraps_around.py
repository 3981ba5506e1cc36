r"""Broken: a depthwise 1-D convolution over SCB (a kernel of width 3 per channel, zero padding at both
ends) whose backward shifts dL/dY with a roll, which wraps around: dLdX is wrong at the signal's first
and last position only, the ends of its one spatial axis.
Check: gradients_are_numerically_correct
Says: only at the ends of the spatial axis \(positions 0 and 7\); right in its interior
Never says: positions 0-1
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DepthwiseConvWrapsAround:
    learnables = ("K",)
    example_layout = "8,6,3:SCB"

    def __init__(self):
        self.K = None

    def initialize(self, layout):
        if self.K is None:
            self.K = np.random.default_rng(0).standard_normal((3, layout.size[1], 1))

    def predict(self, X):
        xp = get_array_module(X)
        padded = xp.zeros((X.shape[0] + 2,) + X.shape[1:], dtype=X.dtype)
        padded[1:-1] = X
        return sum(self.K[k] * padded[k : k + X.shape[0]] for k in range(3))

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        # the bug: a roll wraps the last position's dL/dY around to the first, and back
        dLdX = self.K[1] * dLdY + self.K[0] * xp.roll(dLdY, -1, axis=0) + self.K[2] * xp.roll(dLdY, 1, axis=0)
        padded = xp.zeros((X.shape[0] + 2,) + X.shape[1:], dtype=X.dtype)
        padded[1:-1] = X
        dLdK = xp.stack([xp.sum(dLdY * padded[k : k + X.shape[0]], axis=(0, 2)) for k in range(3)])[:, :, None]
        return dLdX, dLdK
