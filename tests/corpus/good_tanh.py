"""Correct: smooth tanh layer, no learnables, custom backward. Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class Tanh:
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="tanh"):
        self.name = name

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(X)

    def backward(self, X, Y, dLdY, memory):
        return dLdY * (1 - Y * Y)
