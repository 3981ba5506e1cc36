"""Broken: leaky ReLU whose forward multiplies by a slope array built with
xp.where(X > 0, 1.0, 0.01), which is float64, so forward returns float64 for float32
input; predict keeps the dtype. Must fail: forward_is_consistent_in_type."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ForwardTypeLeak:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="leaky_relu"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.where(X > 0, X, 0.01 * X)

    def forward(self, X):
        xp = get_array_module(X)
        slope = xp.where(X > 0, 1.0, 0.01)  # BUG: float64 whatever the dtype of X
        return X * slope
