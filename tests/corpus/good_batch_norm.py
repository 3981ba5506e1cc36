"""Correct batch normalization: forward normalizes with the statistics of the batch and
updates the running statistics (state); predict normalizes with the running statistics and
leaves them as they are. forward legitimately mixes the observations of a batch; predict
must not. backward differentiates forward, through the running-statistics update too."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


MOMENTUM = 0.1
EPSILON = 1e-5


class BatchNorm:
    learnables = ("offset", "scale")
    state = ("running_mean", "running_var")
    example_layout = "4,3,5,6:SSCB"

    def __init__(self):
        self.offset = self.scale = self.running_mean = self.running_var = None
        self.axes = None

    def initialize(self, layout):
        channel = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != channel)
        shape = [1] * layout.ndim
        shape[channel] = layout.size[channel]
        if self.offset is None:
            self.offset = np.random.randn(*shape) * 0.1
        if self.scale is None:
            self.scale = 1 + np.random.randn(*shape) * 0.1
        if self.running_mean is None:
            self.running_mean = np.random.randn(*shape) * 0.1
        if self.running_var is None:
            self.running_var = np.random.uniform(0.5, 2.0, shape)

    def predict(self, X):
        xp = get_array_module(X)
        Y = self.scale * (X - self.running_mean) / xp.sqrt(self.running_var + EPSILON) + self.offset
        return Y, self.running_mean, self.running_var

    def forward(self, X):
        xp = get_array_module(X)
        mean = X.mean(axis=self.axes, keepdims=True)
        centred = X - mean
        var = (centred * centred).mean(axis=self.axes, keepdims=True)
        inv_std = 1 / xp.sqrt(var + EPSILON)
        normalized = centred * inv_std
        Y = self.scale * normalized + self.offset
        new_mean = (1 - MOMENTUM) * self.running_mean + MOMENTUM * mean
        new_var = (1 - MOMENTUM) * self.running_var + MOMENTUM * var
        return Y, new_mean, new_var, (normalized, inv_std, centred)

    def backward(self, X, Y, dLdY, dLdmean_out, dLdvar_out, memory):
        normalized, inv_std, centred = memory
        n = X.size // self.scale.size
        dnorm = dLdY * self.scale
        dLdX = (
            inv_std
            / n
            * (
                n * dnorm
                - dnorm.sum(axis=self.axes, keepdims=True)
                - normalized * (dnorm * normalized).sum(axis=self.axes, keepdims=True)
            )
        )
        # The running statistics depend on the batch mean and variance as well.
        dLdX = dLdX + MOMENTUM * dLdmean_out / n + MOMENTUM * dLdvar_out * 2 * centred / n
        dLdoffset = dLdY.sum(axis=self.axes, keepdims=True)
        dLdscale = (dLdY * normalized).sum(axis=self.axes, keepdims=True)
        return dLdX, dLdoffset, dLdscale, (1 - MOMENTUM) * dLdmean_out, (1 - MOMENTUM) * dLdvar_out
