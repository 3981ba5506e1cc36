"""Broken: per-channel scale of the centred input Y = w*(X - mean of X over the batch), whose backward divides the
mean's gradient by a hard-coded 32 in channel 3 (right at batch 32, wrong on any other batch) and doubles dLdX in
channel 1 (the bug). On 8 observations channels 1 and 3 are both wrong; on the batch of 32 channel 1 alone.
Check: gradients_are_numerically_correct
Says: off by a factor 2 in channel 1 of X
Never says: channels 1, 3
"""

import numpy as np


class CentredHardCodedBatch:
    learnables = ("w",)
    example_layout = "6,6,4,32:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        self.batch_axis = layout.find("B")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5

    def predict(self, X):
        return self.w * (X - X.mean(axis=self.batch_axis, keepdims=True))

    def backward(self, X, Y, dLdY, memory):
        g = self.w * dLdY
        dLdX = g - g.mean(axis=self.batch_axis, keepdims=True)
        dLdX[:, :, 3] = (g - g.sum(axis=self.batch_axis, keepdims=True) / 32)[:, :, 3]  # right at batch 32 only
        dLdX[:, :, 1, :] *= 2  # BUG
        centred = X - X.mean(axis=self.batch_axis, keepdims=True)
        return dLdX, np.sum(dLdY * centred, axis=self.axes, keepdims=True)
