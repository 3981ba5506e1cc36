"""Broken: PReLU whose dLdalpha is summed over the spatial axes only, not over the batch
axis, so it has shape (1,1,C,B) instead of alpha's (1,1,C,1).
Must fail: backward_is_consistent_in_size."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class BackwardWrongShape:
    learnables = ("alpha",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="prelu_wrong_shape"):
        self.name = name
        self.alpha = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.alpha is None:
            self.alpha = np.random.rand(*shape)

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0) + self.alpha * xp.minimum(0, X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = xp.where(X > 0, dLdY, self.alpha * dLdY)
        dLdalpha = xp.sum(xp.minimum(0, X) * dLdY, axis=(0, 1), keepdims=True)
        # BUG: missing xp.sum(dLdalpha, axis=3, keepdims=True) over the observations
        return dLdX, dLdalpha
