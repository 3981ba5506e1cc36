"""Correct: instance normalization, per observation and channel over the spatial axes, with its full backward.
Never says: only in channel
Never says: mixes observations
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


EPSILON = 1e-5


class InstanceNorm:
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
        mean_dy = dLdY.mean(axis=self.spatial, keepdims=True)
        return inv_std * (dLdY - mean_dy - Y * (dLdY * Y).mean(axis=self.spatial, keepdims=True))
