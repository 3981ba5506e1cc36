"""Correct: Y = X.^2, holomorphic, so dLdX = conj(f'(X)) .* dLdY = conj(2X) .* dLdY
(gradient convention dL/da + i*dL/db). Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ComplexSquare:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return X * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return xp.conj(2 * X) * dLdY
