"""Broken gradient: the 2x2 average pooling (stride 2) of pooling_good.py whose backward
divides dLdY by 2 instead of by the 4 elements of a window: dLdX is twice too large.
Shape and dtype are right.
Must fail: gradients_are_numerically_correct (argument X; diagnosis: off by a constant
factor)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class AveragePool2x2WrongCount:
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
        g = xp.reshape(dLdY / 2, (H // 2, 1, W // 2, 1, C, B))  # BUG: a window has 4 elements
        return xp.reshape(xp.broadcast_to(g, (H // 2, 2, W // 2, 2, C, B)), X.shape)
