"""Correct: fully connected layer with a tanh activation on CB data, Y = tanh(W @ X + b),
W (out, in) and b (out, 1) learnable, custom backward. Smooth everywhere; no batch
normalization. The number of channels changes (in -> out_features). Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DenseTanh:
    learnables = ("W", "b")
    example_layout = "6,10:CB"

    def __init__(self, name="dense_tanh", out_features=4):
        self.name = name
        self.out_features = out_features
        self.W = None
        self.b = None

    def initialize(self, layout):
        in_features = layout.size[layout.find("C")]
        if self.W is None:
            self.W = np.random.randn(self.out_features, in_features) / np.sqrt(in_features)
        if self.b is None:
            self.b = 0.1 * np.random.randn(self.out_features, 1)

    def predict(self, X):
        xp = get_array_module(X)
        return xp.tanh(self.W @ X + self.b)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdZ = dLdY * (1 - Y * Y)
        dLdX = self.W.T @ dLdZ
        dLdW = dLdZ @ X.T
        dLdb = xp.sum(dLdZ, axis=1, keepdims=True)
        return dLdX, dLdW, dLdb
