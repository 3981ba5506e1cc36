"""Broken state: forward returns the updated running mean in float64 whatever the precision
(np.asarray with a dtype), while the state is float32 in a float32 run. predict is right.
Must fail: forward_returns_valid_states"""

import numpy as np


class RunningMeanFloat64:
    state = ("mean",)
    example_layout = "5,4:CB"

    def __init__(self):
        self.mean = None

    def initialize(self, layout):
        if self.mean is None:
            self.mean = np.zeros((layout.size[0], 1))

    def predict(self, X):
        return X - self.mean, self.mean

    def forward(self, X):
        updated = 0.9 * self.mean + 0.1 * X.mean(axis=1, keepdims=True)
        return X - self.mean, np.asarray(updated, dtype=np.float64)  # BUG: float64 in float32 runs
