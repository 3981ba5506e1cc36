"""Correct: stateful layer with a per-channel running mean h (state), Y = X - h and
h_new = 0.9*h + 0.1*mean(X) (mean over every axis but the channel axis); predict returns
(Y, h_new) and backward returns (dLdX, dLdh_in) from (X, Y, dLdY, dLdh_out, memory).
initialize fills h only when it is None. Every check must pass."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class RunningMeanState:
    state = ("h",)
    example_layout = "4,3,5,6:SSCB"
    momentum = 0.9

    def __init__(self, name="running_mean"):
        self.name = name
        self.h = None
        self.channel_axis = None

    def initialize(self, layout):
        self.channel_axis = layout.find("C")
        shape = [1] * layout.ndim
        shape[self.channel_axis] = layout.size[self.channel_axis]
        if self.h is None:
            self.h = np.random.rand(*shape)

    def _axes(self, X):
        return tuple(i for i in range(X.ndim) if i != self.channel_axis)

    def predict(self, X):
        xp = get_array_module(X)
        mean = xp.mean(X, axis=self._axes(X), keepdims=True)
        h_new = self.momentum * self.h + (1 - self.momentum) * mean
        return X - self.h, h_new

    def backward(self, X, Y, dLdY, dLdh_out, memory):
        xp = get_array_module(X)
        axes = self._axes(X)
        count = X.size // X.shape[self.channel_axis]
        dLdX = dLdY + (1 - self.momentum) * dLdh_out / count
        dLdh_in = -xp.sum(dLdY, axis=axes, keepdims=True) + self.momentum * dLdh_out
        return dLdX.astype(X.dtype), dLdh_in.astype(X.dtype)
