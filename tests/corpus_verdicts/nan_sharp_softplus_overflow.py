"""Broken: sharp softplus Y = log(1 + exp(300*X))/300 (computed stably) whose backward computes exp(300*X)/(1 +
exp(300*X)), which overflows to inf/inf = NaN for the few inputs X > 2.37 where the true gradient is 1.
Check: gradients_are_numerically_correct
Says: NaN|infinite
Never says: zero everywhere
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


SHARPNESS = 300.0


class SharpSoftplusOverflow:
    example_layout = "6,6,4,5:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.logaddexp(0, SHARPNESS * X) / SHARPNESS

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        e = xp.exp(SHARPNESS * X)
        return dLdY * e / (1 + e)  # BUG: inf / inf = NaN where exp overflows
