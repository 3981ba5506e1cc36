"""Broken: initialize always sets the learnable w, even when it already holds a value.
Must fail: initialize_does_not_change_nonempty_learnables."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class InitOverwrites:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="init_overwrites"):
        self.name = name
        self.w = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        if self.channel_axis is not None:
            shape[self.channel_axis] = layout.size[self.channel_axis]
        self.w = np.random.rand(*shape)  # BUG: no "if self.w is None"

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        return self.w * dLdY, xp.sum(dLdY * X, axis=axes, keepdims=True)
