"""Broken gradient: a per-channel scale and bias whose backward returns the local derivatives
of every argument without multiplying by dLdY. Shapes and dtypes are right.
Must fail: gradients_are_numerically_correct (arguments X, w and b; diagnosis: backward
ignores dL/dY, said once for all three)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleBiasIgnoresDLdY:
    example_layout = "5,5,3,4:SSCB"
    learnables = ("w", "b")

    def __init__(self):
        self.w = np.array([0.5, 1.5, -2.0]).reshape(1, 1, 3, 1)
        self.b = np.array([0.1, -0.2, 0.3]).reshape(1, 1, 3, 1)

    def predict(self, X):
        return self.w * X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = xp.broadcast_to(self.w, X.shape).copy()  # BUG: dLdY never used, here or below
        dLdw = X.sum(axis=(0, 1, 3), keepdims=True)
        dLdb = xp.full(self.b.shape, X.shape[0] * X.shape[1] * X.shape[3], dtype=X.dtype)
        return dLdX, dLdw, dLdb
