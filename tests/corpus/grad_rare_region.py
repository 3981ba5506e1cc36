"""Broken gradient: softplus, Y = log(1 + exp(X)), whose backward "saturates" the
derivative to 1 where X > 2.5 instead of sigmoid(X) (an error of up to 0.076 there, about
0.6% of standard-normal inputs); it is exact everywhere else. Shapes and dtypes are right.
Must fail: gradients_are_numerically_correct (argument X)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class SoftplusRareRegion:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="softplus"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.logaddexp(0, X)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        s = xp.exp(-xp.logaddexp(0, -X))  # sigmoid(X)
        s = xp.where(X > 2.5, xp.ones_like(s), s)  # BUG: "saturated" too early
        return dLdY * s
