"""Correct: 2x2 average pooling with stride 2 over the two spatial axes of SSCB data
(the spatial sizes must be even): (H, W, C, B) -> (H/2, W/2, C, B). The format stays SSCB.
Custom backward: each output gradient is spread as dLdY/4 over its 2x2 window.
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class AveragePool2x2:
    example_layout = "6,4,3,5:SSCB"

    def __init__(self, name="avgpool"):
        self.name = name

    def initialize(self, layout):
        if layout.format != "SSCB":
            raise ValueError(f"AveragePool2x2 expects SSCB input, got {layout.format}")
        if layout.size[0] % 2 or layout.size[1] % 2:
            raise ValueError(f"AveragePool2x2 needs even spatial sizes, got {layout.size[:2]}")

    def predict(self, X):
        xp = get_array_module(X)
        H, W, C, B = X.shape
        windows = xp.reshape(X, (H // 2, 2, W // 2, 2, C, B))
        return xp.mean(windows, axis=(1, 3))

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        H, W, C, B = X.shape
        g = xp.reshape(dLdY / 4, (H // 2, 1, W // 2, 1, C, B))
        return xp.reshape(xp.broadcast_to(g, (H // 2, 2, W // 2, 2, C, B)), X.shape)
