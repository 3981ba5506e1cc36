"""Correct: per-channel scale and bias, Y = w*X + b, learnables w and b, custom backward.
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleBias:
    learnables = ("w", "b")
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="scale_bias"):
        self.name = name
        self.w = None
        self.b = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.w is None:
            self.w = np.random.rand(*shape)
        if self.b is None:
            self.b = np.random.rand(*shape)

    def predict(self, X):
        return self.w * X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdX = self.w * dLdY
        dLdw = xp.sum(dLdY * X, axis=axes, keepdims=True)
        dLdb = xp.sum(dLdY, axis=axes, keepdims=True)
        return dLdX, dLdw, dLdb
