"""Correct: nearly constant output Y = 1e6 + 1e-6*X in the input precision (its variation is 1e-12 of its size);
backward returns 1e-6*dLdY.
Never says: float32
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class NearlyConstant:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        return 1e6 + 1e-6 * X

    def backward(self, X, Y, dLdY, memory):
        return 1e-6 * dLdY
