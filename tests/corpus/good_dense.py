"""Correct: fully connected layer on CB data, Y = W @ X + b, W (out, in) and b (out, 1)
learnable, custom backward (dLdX = W.T @ dLdY, dLdW = dLdY @ X.T, dLdb = row sums).
The number of channels changes (in -> out_features). Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class Dense:
    learnables = ("W", "b")
    example_layout = "6,10:CB"

    def __init__(self, name="dense", out_features=7):
        self.name = name
        self.out_features = out_features
        self.W = None
        self.b = None

    def initialize(self, layout):
        if layout.format != "CB":
            raise ValueError(f"Dense expects CB input, got {layout.format}")
        in_features = layout.size[layout.find("C")]
        if self.W is None:
            self.W = np.random.randn(self.out_features, in_features) / np.sqrt(in_features)
        if self.b is None:
            self.b = np.random.rand(self.out_features, 1)

    def predict(self, X):
        return self.W @ X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.W.T @ dLdY
        dLdW = dLdY @ X.T
        dLdb = xp.sum(dLdY, axis=1, keepdims=True)
        return dLdX, dLdW, dLdb
