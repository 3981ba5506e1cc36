r"""Broken: a sequence run backwards, Y(t) = w X(T-1-t) with a weight per channel, whose backward returns w dL/dY
without reversing it back: the right gradient of X reversed along the time axis.
Check: gradients_are_numerically_correct
Says: the gradient of X is flipped: the right one reversed along axis 2 \(T\)
Says: likely cause: reversed along axis 2 \(T\)
Never says: constant factor
Never says: leaves out how each observation
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
        return self.w * dLdY, dLdw  # BUG: self.w * dLdY[:, :, ::-1]
