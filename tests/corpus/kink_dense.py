"""Correct but awkward: a continuous piecewise-linear function with a kink every 0.001 of
input, Y = X + 0.5*abs((X mod 0.002) - 0.001) (slope 0.5 and 1.5 alternating), with the
exact backward dLdX = dLdY * (1 + 0.5*sign((X mod 0.002) - 0.001)). Finite differences
with steps larger than the kink spacing cross kinks; the checker must not report a false
failure. Must pass every check (gradients_are_numerically_correct may be incomplete,
never failed)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class KinkDense:
    example_layout = "4,3,5,6:SSCB"
    period = 0.002

    def __init__(self, name="kink_dense"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        r = X % self.period
        return X + 0.5 * xp.abs(r - 0.5 * self.period)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        r = X % self.period
        return dLdY * (1 + 0.5 * xp.sign(r - 0.5 * self.period))
