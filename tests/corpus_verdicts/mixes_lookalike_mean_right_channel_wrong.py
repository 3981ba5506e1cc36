"""Broken: Y = w X + 0.01 * (mean of X over the batch), per channel, whose backward has the mean's term right and the
direct term 1.5 times too large in channel 1: wrong within each observation, right across them.
Check: gradients_are_numerically_correct
Says: channel 1
Never says: other observations' outputs
Never says: constant factor
"""

import numpy as np


class MeanRightChannelWrong:
    learnables = ("w",)
    example_layout = "4,4,3,6:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        self.batch_axis = layout.find("B")
        if self.w is None:
            self.w = np.linspace(0.5, 1.5, layout.size[layout.find("C")]).reshape(1, 1, -1, 1)

    def predict(self, X):
        return self.w * X + 0.01 * X.mean(axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        direct = self.w * dLdY
        direct[:, :, 1, :] *= 1.5  # BUG: channel 1's direct term
        dLdX = direct + 0.01 * dLdY.mean(axis=self.batch_axis, keepdims=True)
        return dLdX, (dLdY * X).sum(axis=(0, 1, 3), keepdims=True)
