"""Correct: dense layer Y = W @ X with a complex 4x6 weight on CB data; the gradients use
conjugate transposes: dLdX = W^H @ dLdY and dLdW = dLdY @ X^H. A real X gets the real part
of W^H @ dLdY. Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComplexDense:
    learnables = ("W",)
    example_layout = "6,5:CB"

    def __init__(self):
        self.W = None

    def initialize(self, layout):
        if self.W is None:
            self.W = np.random.randn(4, layout.size[0]) + 1j * np.random.randn(4, layout.size[0])

    def predict(self, X):
        return self.W @ X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = xp.conj(self.W).T @ dLdY
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)
        dLdW = dLdY @ xp.conj(X).T
        return dLdX, dLdW
