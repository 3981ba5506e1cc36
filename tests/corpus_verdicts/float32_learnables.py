"""Broken: a per-channel scale whose predict rounds its float64 learnable to float32
(tanh(X * float32(w))), while backward is the right derivative of that rounded layer;
float64 inputs are not rounded. Only moving the learnables shows the float32 precision.
Check: predict_is_consistent_in_type
Says: learnables and state
Says: float32
Never says: constant factor|mixes observations
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class Float32Scale:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def initialize(self, layout):
        if getattr(self, "w", None) is None:
            shape = [1] * layout.ndim
            shape[layout.find("C")] = layout.size[layout.find("C")]
            self.w = np.random.rand(*shape) + 0.5

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X * self.w.astype(xp.float32))

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        w = self.w.astype(xp.float32).astype(X.dtype)
        d = dLdY * (1 - xp.tanh(X * w) ** 2)
        return d * w, (d * X).sum(axis=(0, 1, 3), keepdims=True)
