"""Broken: PReLU Y = max(X,0) + alpha*min(X,0) with a 4-channel slope alpha whose gradient dLdalpha is twice the true
one in channel 2 only.
Check: gradients_are_numerically_correct
Says: channel
Never says: constant factor
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class PReLUOneSlopeTwice:
    learnables = ("alpha",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.alpha = None

    def initialize(self, layout):
        c = layout.find("C")
        self.channel_axis = c
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.alpha is None:
            self.alpha = np.random.rand(*shape) * 0.5

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0) + self.alpha * xp.minimum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = dLdY * ((X > 0) + self.alpha * (X <= 0))
        dLdalpha = xp.sum(dLdY * xp.minimum(X, 0), axis=self.axes, keepdims=True)
        factor = xp.ones(dLdalpha.shape, dtype=X.dtype)
        index = [0] * X.ndim
        index[self.channel_axis] = 2
        factor[tuple(index)] = 2  # BUG: channel 2 of the slope gradient doubled
        return dLdX, dLdalpha * factor
