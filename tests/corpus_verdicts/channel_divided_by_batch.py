r"""Broken: per-channel scale Y = w*X whose dLdX in channel 1 is divided by the batch size (a mean over the batch
written where a sum of nothing belongs), right in every other channel.
Check: gradients_are_numerically_correct
Says: off by a factor 1/5 \(1/batch size\) in channel 1 of X
Never says: constant factor
"""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class ScaleChannelOneOverBatch:
    learnables = ("w",)
    example_layout = "6,6,4,5:SSCB"

    def __init__(self):
        self.w = None

    def initialize(self, layout):
        c = layout.find("C")
        self.channel_axis = c
        self.batch_axis = layout.find("B")
        self.axes = tuple(i for i in range(layout.ndim) if i != c)
        shape = [1] * layout.ndim
        shape[c] = layout.size[c]
        if self.w is None:
            self.w = np.random.rand(*shape) + 0.5

    def predict(self, X):
        return self.w * X

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        dLdX = self.w * dLdY
        index = [slice(None)] * X.ndim
        index[self.channel_axis] = 1
        dLdX[tuple(index)] /= X.shape[self.batch_axis]  # BUG: channel 1 divided by the batch size
        dLdw = xp.sum(dLdY * X, axis=self.axes, keepdims=True)
        return dLdX, dLdw
