"""Y = w .* X (complex w per channel) whose backward returns the Wirtinger gradients
dL/dconj(z) = (dL/da + i*dL/db)/2 instead of the convention dL/da + i*dL/db: both gradients
are half the right ones (dLdX = conj(w).*dLdY/2, dLdw = sum(conj(X).*dLdY)/2).
Must fail: gradients_are_numerically_correct (arguments X and w)"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class WirtingerHalf:
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
        # BUG: dL/dconj(z) is half of dL/da + i*dL/db
        dLdX = xp.conj(self.w) * dLdY / 2
        if X.dtype.kind != "c":
            dLdX = xp.real(dLdX)
        dLdw = xp.sum(xp.conj(X) * dLdY, axis=(0, 1, 3), keepdims=True) / 2
        return dLdX, dLdw
