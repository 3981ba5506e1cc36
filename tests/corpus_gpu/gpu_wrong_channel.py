"""PReLU whose GPU path reads the slope of the next channel (an indexing bug of a hand-made
GPU path). Must fail: predict_is_consistent_on_gpu"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ShiftedSlopePReLU:
    learnables = ("alpha",)
    example_layout = "5,5,4,3:SSCB"

    def __init__(self):
        self.alpha = None

    def initialize(self, layout):
        if self.alpha is None:
            self.alpha = np.random.rand(1, 1, layout.size[2], 1)

    def predict(self, X):
        xp = get_array_module(X)
        alpha = xp.roll(self.alpha, 1, axis=2) if xp is not np else self.alpha
        return xp.maximum(X, 0) + alpha * xp.minimum(X, 0)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = dLdY * xp.where(X > 0, 1.0, self.alpha).astype(X.dtype)
        dLdalpha = (dLdY * xp.minimum(X, 0)).sum(axis=(0, 1, 3), keepdims=True)
        return dLdX, dLdalpha
