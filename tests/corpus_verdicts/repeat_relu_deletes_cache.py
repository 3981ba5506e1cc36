"""Broken: a ReLU whose backward reads a mask cached by forward and deletes it, so a second
backward on the same object raises; its gradients are right, and the gradient check (which
backs out the kinks with more backward calls) must still check them, on fresh layers.
Check: backward_is_repeatable
Says: second training step on the same layer raised
Never says: backward_does_not_error
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ReluDeletesCache:
    example_layout = "5,5,3,4:SSCB"

    def predict(self, X):
        xp = get_array_module(X)
        return xp.maximum(X, 0)

    def forward(self, X):
        Y = self.predict(X)
        if not hasattr(self, "used"):
            self.mask = X > 0
        return Y, None

    def backward(self, X, Y, dLdY, memory):
        mask = self.mask
        del self.mask
        self.used = True
        return dLdY * mask
