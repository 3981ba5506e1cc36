"""Broken gradient: PReLU whose dLdalpha is a mean over the batch axis instead of a sum
(summed over the spatial axes, then averaged over the B observations): off by a factor
1/B (1/6 for the example layout). Shape (1,1,C,1) and dtype are right.
Must fail: gradients_are_numerically_correct (argument alpha; diagnosis: off by a
constant factor). dLdX is correct."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class PReLUMeanNotSum:
    learnables = ("alpha",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="prelu"):
        self.name = name
        self.alpha = None
        self.channel_axis = None
        self.batch_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        self.batch_axis = layout.find("B")
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
        other = tuple(i for i in range(X.ndim) if i not in (self.channel_axis, self.batch_axis))
        dLdalpha = xp.sum(xp.minimum(0, X) * dLdY, axis=other, keepdims=True)
        dLdalpha = xp.mean(dLdalpha, axis=self.batch_axis, keepdims=True)  # BUG: mean, not sum
        return dLdX, dLdalpha
