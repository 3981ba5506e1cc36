"""Correct: SiLU layer Y = X * sigmoid(X) with both predict and forward (same values).
forward returns (Y, memory), memory caching sigmoid(X), which backward uses.
Every check must pass (backward_is_repeatable included: nothing is cached on self)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


def _sigmoid(xp, X):
    # exp(-log(1 + exp(-X))), stable for large |X|; keeps the dtype of X.
    return xp.exp(-xp.logaddexp(0, -X))


class SiLU:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="silu"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return X * _sigmoid(xp, X)

    def forward(self, X):
        xp = get_array_module(X)
        s = _sigmoid(xp, X)
        return X * s, s

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        s = memory if memory is not None else _sigmoid(xp, X)
        return dLdY * (s + X * s * (1 - s))
