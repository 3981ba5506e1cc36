"""Broken: predict multiplies by a constant array created without dtype (float64), so a
float32 input gives a float64 output. Must fail: predict_is_consistent_in_type."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class Float64Leak:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="float64_leak"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        half = xp.full((1,) * X.ndim, 0.5)  # BUG: no dtype=X.dtype -> float64
        return X * half
