"""Broken across calls: initialize caches the transposed weights, and backward deletes that
cache after use to save memory, so the second backward on the same layer raises
AttributeError. One training step works.
Must fail: backward_is_repeatable"""

import numpy as np


class DenseFreesTranspose:
    learnables = ("W",)
    example_layout = "5,4:CB"

    def __init__(self, outputs=3):
        self.outputs = outputs
        self.W = None

    def initialize(self, layout):
        if self.W is None:
            self.W = np.random.randn(self.outputs, layout.size[0])

    def predict(self, X):
        return self.W @ X

    def backward(self, X, Y, dLdY, memory):
        W_T = getattr(self, "W_T", None)
        if W_T is None and not hasattr(self, "freed"):
            W_T = self.W.T
        dLdX = W_T @ dLdY
        del W_T
        self.freed = True  # BUG: the next call finds no transposed weights
        return dLdX, dLdY @ X.T
