"""Correct: Y = exp(w .* X) with a complex w per channel, holomorphic in X and w:
dLdX = conj(w .* Y) .* dLdY and dLdw = sum(conj(X .* Y) .* dLdY). A real X gets the real
part of its gradient. Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComplexExp:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            C = layout.size[2]
            self.w = 0.5 * (np.random.randn(1, 1, C, 1) + 1j * np.random.randn(1, 1, C, 1))

    def predict(self, X):
        xp = get_array_module(X)
        return xp.exp(self.w * X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = xp.conj(self.w * Y) * dLdY
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)
        dLdw = xp.sum(xp.conj(X * Y) * dLdY, axis=(0, 1, 3), keepdims=True)
        return dLdX, dLdw
