"""Correct: ReLU with a custom backward (kink at 0). Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ReLU:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0).astype(X.dtype)
