"""Broken gradient: fully connected layer on CB data with a square W (out_features defaults
to the number of input channels), Y = W @ X + b, whose dLdW is returned transposed
(X @ dLdY.T instead of dLdY @ X.T). Shapes agree because W is square; dtypes are right.
Must fail: gradients_are_numerically_correct (argument W). dLdX and dLdb are correct."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class DenseTransposed:
    learnables = ("W", "b")
    example_layout = "6,10:CB"

    def __init__(self, name="dense", out_features=None):
        self.name = name
        self.out_features = out_features
        self.W = None
        self.b = None

    def initialize(self, layout):
        in_features = layout.size[layout.find("C")]
        out_features = in_features if self.out_features is None else self.out_features
        if self.W is None:
            self.W = np.random.randn(out_features, in_features) / np.sqrt(in_features)
        if self.b is None:
            self.b = np.random.rand(out_features, 1)

    def predict(self, X):
        return self.W @ X + self.b

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.W.T @ dLdY
        dLdW = (dLdY @ X.T).T  # BUG: transposed
        dLdb = xp.sum(dLdY, axis=1, keepdims=True)
        return dLdX, dLdW, dLdb
