"""Broken: forward clamps its input in place (X[X < 0] = 0) and returns it; predict is
correct. Must fail: forward_does_not_modify_inputs."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ForwardModifiesInput:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu_inplace"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def forward(self, X):
        X[X < 0] = 0  # BUG: modifies the caller's array
        return X
