"""Broken: two outputs, Y = w X exact in float64, and a gate per observation (4 values) whose
mean is taken in float32 and cast back: under a move of the inputs by a relative 1e-8 the
gate does not move at all (float32 rounds the move away) while Y follows it smoothly. A
hundred times the move shows the gate's float32 round-off.
Must fail: predict_is_consistent_in_type"""

import numpy as np


class ScaleWithObservationGate:
    num_outputs = 2
    example_layout = "8,8,3,4:SSCB"

    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 3).reshape(1, 1, 3, 1)  # a constant, not learned

    def predict(self, X):
        m = X.astype(np.float32).mean(axis=(0, 1, 2), keepdims=True)  # BUG: float32 inside
        gate = (1 / (1 + np.exp(-m))).astype(X.dtype)
        return self.w.astype(X.dtype) * X, gate
