"""Broken: two outputs, Y = 2 X exact in float64, and a gate per channel and observation (24
values beside Y's 6,144) computed in float32 and cast back. The round-off is judged output by
output: pooled with Y's elements, the gate's were under the 90th percentile.
Must fail: predict_is_consistent_in_type"""

import numpy as np


class ScaleWithChannelGate:
    num_outputs = 2
    example_layout = "16,16,3,8:SSCB"

    def predict(self, X):
        m = X.mean(axis=(0, 1), keepdims=True)
        gate = np.tanh(m.astype(np.float32) * np.float32(3)).astype(X.dtype)  # BUG: float32 inside
        return 2 * X, gate
