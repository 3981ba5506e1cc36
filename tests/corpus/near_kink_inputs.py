"""Correct: plain ReLU with a correct backward. The test-suite feeds it inputs placed near
the kink at 0 (within a few finite-difference steps); the checker must not report a false
failure there. Must pass every check (gradients_are_numerically_correct may be incomplete,
never failed)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class NearKinkReLU:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (X > 0).astype(dLdY.dtype)
