r"""Correct: a sequence run backwards, Y(t) = w X(T-1-t) with a weight per channel, whose backward reverses dL/dY
back: nothing is wrong, and nothing is said reversed.
Never says: flipped
"""

import numpy as np


class Reversed:
    learnables = ("w",)
    example_layout = "3,4,6:CBT"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        if self.w is None:
            self.w = np.linspace(0.5, 1.5, layout.size[0]).reshape(-1, 1, 1)

    def predict(self, X):
        return self.w * X[:, :, ::-1]

    def backward(self, X, Y, dLdY, memory):
        dLdw = (dLdY * X[:, :, ::-1]).sum(axis=(1, 2), keepdims=True)
        return self.w * dLdY[:, :, ::-1], dLdw
