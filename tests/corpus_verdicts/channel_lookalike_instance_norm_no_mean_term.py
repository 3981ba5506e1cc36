"""Broken: instance normalization (per observation and channel, over the spatial axes) whose backward drops the
-mean(dLdXhat) term, so dLdX is wrong in every channel.
Check: gradients_are_numerically_correct
Never says: only in channel
Never says: zero everywhere
Never says: constant factor
Never says: other observations' outputs
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


EPSILON = 1e-5


class InstanceNormNoMeanTerm:
    example_layout = "6,6,4,5:SSCB"

    def initialize(self, layout):
        self.spatial = tuple(i for i, label in enumerate(layout.format) if label == "S")

    def predict(self, X):
        xp = get_array_module(X)
        centred = X - X.mean(axis=self.spatial, keepdims=True)
        var = (centred * centred).mean(axis=self.spatial, keepdims=True)
        return centred / xp.sqrt(var + EPSILON)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        var = (X - X.mean(axis=self.spatial, keepdims=True)) ** 2
        inv_std = 1 / xp.sqrt(var.mean(axis=self.spatial, keepdims=True) + EPSILON)
        # BUG: the term - dLdY.mean(axis=self.spatial, keepdims=True) is missing
        return inv_std * (dLdY - Y * (dLdY * Y).mean(axis=self.spatial, keepdims=True))
