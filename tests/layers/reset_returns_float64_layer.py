"""Broken in float32 only: reset_state in MATLAB's style returns the reset layer, whose state
is np.zeros of its shape, float64 whatever the layer's precision.
Must fail: reset_state_does_not_error"""

import numpy as np


class DecayResetReturnsALayer:
    state = ("h",)
    example_layout = "3,4,2:CBT"

    def __init__(self, h=None):
        self.h = h

    def initialize(self, layout):
        if self.h is None:
            self.h = np.zeros(layout.size[:2])

    def predict(self, X):
        h = self.h
        ys = []
        for t in range(X.shape[2]):
            h = 0.5 * h + X[:, :, t]
            ys.append(h)
        return np.stack(ys, axis=2), h

    def reset_state(self):
        return DecayResetReturnsALayer(np.zeros(self.h.shape))  # BUG
