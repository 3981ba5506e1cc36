"""Broken: ReLU whose backward masks the incoming gradient in place (dLdY *= mask) and
returns it, changing the caller's dLdY. Must fail: backward_does_not_modify_inputs."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class BackwardModifiesDLdY:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="relu_inplace_backward"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        dLdY *= (X > 0).astype(dLdY.dtype)  # BUG: modifies the caller's array
        return dLdY
