"""Broken across calls: backward accumulates the weight gradient into a buffer it keeps and
returns that buffer itself, so the first call's gradient changes when backward runs again
(compared as returned, the two calls would look alike). The first call is right.
Must fail: backward_is_repeatable"""

import numpy as np


class AccumulatesIntoReturnedBuffer:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.w = None
        self.buffer = None

    def initialize(self, layout):
        if self.w is None:
            self.w = np.random.rand(1, 1, layout.size[2], 1)

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        if self.buffer is None:
            self.buffer = np.zeros_like(self.w)
        self.buffer += (dLdY * X).sum(axis=(0, 1, 3), keepdims=True)  # BUG: never zeroed
        return self.w * dLdY, self.buffer
