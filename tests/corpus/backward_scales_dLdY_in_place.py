"""Broken: tanh whose backward scales the incoming gradient in place (dLdY *= 1 - Y**2) and
returns it. Unlike a ReLU mask, applying it twice changes the values again, so a check that
handed the overwritten dLdY to a second backward would see another gradient and blame a value
cached between calls. Must fail: backward_does_not_modify_inputs."""

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:
    import numpy as np

    def get_array_module(*arrays):
        return np


class BackwardScalesDLdYInPlace:
    example_layout = "4,3,5,6:SSCB"

    def predict(self, X):
        return get_array_module(X).tanh(X)

    def backward(self, X, Y, dLdY, memory):
        dLdY *= 1 - Y * Y  # BUG: modifies the caller's array
        return dLdY
