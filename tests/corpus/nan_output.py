"""Broken: predict returns log(X) on ordinary (partly negative) data and does not declare
an input_domain, so outputs contain NaN. Must fail: outputs_are_finite."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class NaNOutput:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="log"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.log(X)  # BUG: NaN for X < 0 (no input_domain = (0, None) declared)
