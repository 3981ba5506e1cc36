"""Complex dense layer Y = W @ X whose backward uses plain transposes where conjugate
transposes belong: dLdX = W.T @ dLdY and dLdW = dLdY @ X.T (a real X gets the real part,
as in good_complex_dense.py). Run it with a complex dtype: for real inputs X.T is X^H, so
only dLdX is wrong there.
Must fail: gradients_are_numerically_correct (arguments X and W)"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComplexDenseTransposed:
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
        dLdX = self.W.T @ dLdY  # BUG: should be conj(W).T @ dLdY
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)
        dLdW = dLdY @ X.T  # BUG: should be dLdY @ conj(X).T
        return dLdX, dLdW
