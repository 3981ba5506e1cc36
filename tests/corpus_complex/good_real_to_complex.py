"""Correct: a real input scaled by a complex weight per channel, Y = w .* X (complex output).
X is real, so its gradient is real: dLdX = real(conj(w) .* dLdY); dLdw = sum(X .* dLdY).
Meant to be run with real dtypes (float64, float32); complex inputs are handled too.
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class RealToComplex:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            C = layout.size[2]
            self.w = np.random.randn(1, 1, C, 1) + 1j * np.random.randn(1, 1, C, 1)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = xp.conj(self.w) * dLdY
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)  # X can only move along the real axis
        dLdw = xp.sum(xp.conj(X) * dLdY, axis=(0, 1, 3), keepdims=True)  # conj(X) = X for real X
        return dLdX, dLdw
