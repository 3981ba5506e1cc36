"""Broken gradient: per-channel Y = a*X + b*tanh(X) with learnables a and b of the same shape
(1,1,C,1); backward returns their gradients in the order (dLdX, dLdb, dLda) instead of the
order of `learnables`. Shapes and dtypes are right.
Must fail: gradients_are_numerically_correct (arguments a and b; diagnosis: returned in each
other's place). dLdX is correct."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SwappedLearnables:
    learnables = ("a", "b")
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="swapped"):
        self.name = name
        self.a = None
        self.b = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.a is None:
            self.a = 0.5 + np.random.rand(*shape)
        if self.b is None:
            self.b = 0.5 + np.random.rand(*shape)

    def predict(self, X):
        xp = get_array_module(X)
        return self.a * X + self.b * xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        t = xp.tanh(X)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdX = dLdY * (self.a + self.b * (1 - t * t))
        dLda = xp.sum(dLdY * X, axis=axes, keepdims=True)
        dLdb = xp.sum(dLdY * t, axis=axes, keepdims=True)
        return dLdX, dLdb, dLda  # BUG: learnables are (a, b)
