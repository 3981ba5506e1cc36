"""Broken: Y = w*tanh(X) + b computed in float32 inside predict (inputs and learnables cast to float32, the result cast
back to the input dtype), so float64 inputs get float64 outputs of float32 accuracy.
Check: predict_is_consistent_in_type
Says: float32
Never says: mixes observations
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComputesInFloat32:
    learnables = ("w", "b")
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = self.b = None

    def initialize(self, layout):
        c = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5
        if self.b is None:
            self.b = np.random.randn(*shape)

    def predict(self, X):
        xp = get_array_module(X)
        f32 = xp.float32
        w, b, x = self.w.astype(f32), self.b.astype(f32), X.astype(f32)  # BUG: float32 inside
        return (w * xp.tanh(x) + b).astype(X.dtype)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        t = xp.tanh(X)
        dLdX = self.w * (1 - t * t) * dLdY
        dLdw = xp.sum(dLdY * t, axis=self.axes, keepdims=True)
        dLdb = xp.sum(dLdY, axis=self.axes, keepdims=True)
        return dLdX, dLdw, dLdb
