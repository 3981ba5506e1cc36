"""Broken gradient: per-channel scale, Y = w*X, whose dLdw is returned as zeros (a
placeholder never filled in). Shapes and dtypes are right.
Must fail: gradients_are_numerically_correct (argument w; diagnosis: gradient is zero or
missing). dLdX is correct."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleZeroGrad:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="scale"):
        self.name = name
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        shape = [1] * layout.ndim
        if c is not None:
            shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.w * dLdY
        dLdw = xp.zeros_like(self.w)  # BUG: placeholder
        return dLdX, dLdw
