"""Correct: Y = |X|.^2, a real output from a complex input. L depends on a^2 + b^2, so
dL/da + i*dL/db = 2(a + ib) .* dLdY = 2X .* dLdY (dLdY is real). Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class AbsSquared:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.real(X * xp.conj(X))

    def backward(self, X, Y, dLdY, memory):
        return 2 * X * dLdY
