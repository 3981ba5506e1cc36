"""Correct: Y = abs(X) with backward dLdX = sign(X) * dLdY (kink at 0). Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class Abs:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="abs"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.abs(X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        return dLdY * xp.sign(X)
