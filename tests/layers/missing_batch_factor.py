"""Broken gradient: batch-mean shift with a learnable per-channel weight w,
Y = X + w * mean_B(X) (mean over the batch axis, broadcast back to every observation).
dLdX is correct, but dLdw uses the batch SUM of X instead of its mean: the factor 1/B is
missing, so dLdw is B = 6 times too big for the example layout. Shapes and dtypes are right.
Must fail: gradients_are_numerically_correct (argument w; diagnosis: off by a constant
factor 6, the batch size)."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class MissingBatchFactor:
    learnables = ("w",)
    example_layout = "4,3,5,6:SSCB"

    def __init__(self, name="batch_shift"):
        self.name = name
        self.w = None
        self.channel_axis = None
        self.batch_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        self.batch_axis = layout.find("B")
        shape = [1] * layout.ndim
        shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.w is None:
            self.w = np.random.rand(*shape)

    def predict(self, X):
        xp = get_array_module(X)
        return X + self.w * xp.mean(X, axis=self.batch_axis, keepdims=True)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        n = X.shape[self.batch_axis]
        axes = tuple(i for i in range(X.ndim) if i != self.channel_axis)
        dLdX = dLdY + xp.sum(self.w * dLdY, axis=self.batch_axis, keepdims=True) / n
        batch_sum = xp.sum(X, axis=self.batch_axis, keepdims=True)  # BUG: should be the mean
        dLdw = xp.sum(dLdY * batch_sum, axis=axes, keepdims=True)
        return dLdX, dLdw
