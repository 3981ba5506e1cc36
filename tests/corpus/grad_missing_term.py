"""Broken gradient: per-channel normalization over the spatial axes,
Y = (X - mean) / sqrt(var + eps), mean and var taken over the S axes separately for each
(channel, observation). The backward omits the mean term: the correct gradient is
    dLdX = (g - mean(g) - Xhat * mean(g * Xhat)) / std
(g = dLdY, means over the S axes), the layer returns (g - Xhat * mean(g * Xhat)) / std.
Shapes and dtypes are right. Must fail: gradients_are_numerically_correct (argument X)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SpatialNormMissingTerm:
    example_layout = "4,3,5,6:SSCB"
    eps = 1e-5

    def __init__(self, name="spatial_norm"):
        self.name = name
        self.spatial_axes = None

    def initialize(self, layout):
        self.spatial_axes = tuple(i for i, label in enumerate(layout.format) if label == "S")

    def _normalize(self, X):
        xp = get_array_module(X)
        mean = xp.mean(X, axis=self.spatial_axes, keepdims=True)
        centered = X - mean
        var = xp.mean(centered * centered, axis=self.spatial_axes, keepdims=True)
        std = xp.sqrt(var + self.eps)
        return centered / std, std

    def predict(self, X):
        Xhat, _ = self._normalize(X)
        return Xhat

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        Xhat, std = self._normalize(X)
        proj = xp.mean(dLdY * Xhat, axis=self.spatial_axes, keepdims=True)
        # BUG: "- xp.mean(dLdY, axis=self.spatial_axes, keepdims=True)" is missing
        return (dLdY - Xhat * proj) / std
