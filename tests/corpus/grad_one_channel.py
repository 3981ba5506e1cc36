"""Broken gradient: per-channel scale and bias, Y = w*X + b, whose dLdX is multiplied by
1.5 in channel 2 (zero-based) only; every other channel and dLdw, dLdb are correct.
Shapes and dtypes are right. Must fail: gradients_are_numerically_correct (argument X;
the localization should name channel 2)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleBiasOneChannel:
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
        shape = [1] * X.ndim
        shape[self.channel_axis] = X.shape[self.channel_axis]
        factor = xp.ones(tuple(shape), dtype=X.dtype)
        index = [0] * X.ndim
        index[self.channel_axis] = 2
        factor[tuple(index)] = 1.5  # BUG: channel 2 scaled by 1.5
        dLdX = self.w * dLdY * factor
        dLdw = xp.sum(dLdY * X, axis=axes, keepdims=True)
        dLdb = xp.sum(dLdY, axis=axes, keepdims=True)
        return dLdX, dLdw, dLdb
