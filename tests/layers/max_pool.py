"""Correct: 2x2 max pooling with stride 2 over the two spatial axes of SSCB data (the output
has half the height and width), with a backward that routes each dLdY to the position of its
window's maximum. Kinks where two window values tie; with random inputs ties are unlikely.
Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class MaxPool2x2:
    example_layout = "4,6,3,5:SSCB"

    def __init__(self, name="max_pool"):
        self.name = name

    @staticmethod
    def _windows(X):
        h, w, c, b = X.shape
        # (h/2, 2, w/2, 2, c, b) -> (h/2, w/2, c, b, 4): the 4 values of each window last
        blocks = X.reshape(h // 2, 2, w // 2, 2, c, b).transpose(0, 2, 4, 5, 1, 3)
        return blocks.reshape(h // 2, w // 2, c, b, 4)

    def predict(self, X):
        xp = get_array_module(X)
        return xp.max(self._windows(X), axis=-1)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        h, w, c, b = X.shape
        windows = self._windows(X)
        winner = xp.argmax(windows, axis=-1)
        onehot = (xp.arange(4) == winner[..., None]).astype(X.dtype)
        grad = onehot * dLdY[..., None]  # (h/2, w/2, c, b, 4)
        grad = grad.reshape(h // 2, w // 2, c, b, 2, 2).transpose(0, 4, 1, 5, 2, 3)
        return grad.reshape(h, w, c, b)
