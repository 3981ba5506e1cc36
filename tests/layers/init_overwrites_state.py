"""Broken: stateful running-mean layer (state h) whose initialize always resets h to zeros,
even when h already holds a value (a restored network would lose its statistics).
Must fail: initialize_does_not_change_nonempty_states."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class InitOverwritesState:
    state = ("h",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="init_overwrites_state"):
        self.name = name
        self.h = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        shape[self.channel_axis] = layout.size[self.channel_axis]
        self.h = np.zeros(shape)  # BUG: no "if self.h is None"

    def predict(self, X):
        xp = get_array_module(X)
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        h_new = 0.9 * self.h + 0.1 * xp.mean(X, axis=axes, keepdims=True)
        return X - self.h, h_new
