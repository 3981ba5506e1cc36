"""Broken reset_state: the state starts at zero but reset_state sets it to one, so a reset
layer does not behave like a fresh one.
Must fail: reset_state_does_not_error"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DecayResetToOnes:
    state = ("h",)
    example_layout = "3,4,2:CBT"

    def __init__(self):
        self.h = None

    def initialize(self, layout):
        if self.h is None:
            self.h = np.zeros(layout.size[:2])

    def predict(self, X):
        h = self.h
        ys = []
        for t in range(X.shape[2]):
            h = 0.5 * h + X[:, :, t]
            ys.append(h)
        xp = get_array_module(X)
        return xp.stack(ys, axis=2), h

    def reset_state(self):
        self.h = np.ones_like(self.h)  # BUG: the initial state is zero
