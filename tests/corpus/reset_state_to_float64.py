"""Broken reset_state in float32 only: reset_state sets the state to np.zeros of its shape,
float64 whatever the layer's precision, so a float32 layer runs on in float64 after a reset
(right at float64, the default precision).
Must fail: reset_state_does_not_error"""

import numpy as np


class DecayResetToFloat64:
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
        return np.stack(ys, axis=2), h

    def reset_state(self):
        self.h = np.zeros(self.h.shape)  # BUG: np.zeros_like(self.h) keeps its dtype
