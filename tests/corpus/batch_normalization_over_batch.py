"""Broken prediction: batch normalization that, in predict, normalizes each channel by the
mean and standard deviation over the spatial axes AND the batch axis of the mini-batch it
is given, Y = (X - mean(X)) / sqrt(var(X) + eps), statistics per channel. At prediction
time a layer must treat the observations independently (a trained batch norm uses its
stored running statistics); here the output for one observation changes when the other
observations of the mini-batch change, and a mini-batch of one observation gives a
different answer than the same observation inside a larger one.
Must fail: predict_is_consistent_across_observations.
The backward is the exact gradient of this predict (it differentiates through the batch
statistics), so the gradient check passes."""

import numpy as np

try:  # CuPy is optional: without it every array is a NumPy array
    from cupy import get_array_module
except ImportError:

    def get_array_module(*arrays):
        return np


class BatchNormOverBatch:
    example_layout = "4,3,5,6:SSCB"
    epsilon = 1e-5

    def __init__(self, name="batchnorm"):
        self.name = name
        self.axes = None

    def initialize(self, layout):
        channel_axis = layout.find("C")
        self.axes = tuple(i for i in range(layout.ndim) if i != channel_axis)

    def predict(self, X):
        xp = get_array_module(X)
        mu = xp.mean(X, axis=self.axes, keepdims=True)  # BUG: statistics of the mini-batch
        centered = X - mu
        var = xp.mean(centered * centered, axis=self.axes, keepdims=True)
        return centered / xp.sqrt(var + self.epsilon)

    def backward(self, X, Y, dLdY, memory):
        xp = get_array_module(X)
        mu = xp.mean(X, axis=self.axes, keepdims=True)
        centered = X - mu
        var = xp.mean(centered * centered, axis=self.axes, keepdims=True)
        sigma = xp.sqrt(var + self.epsilon)
        mean_g = xp.mean(dLdY, axis=self.axes, keepdims=True)
        mean_gc = xp.mean(dLdY * centered, axis=self.axes, keepdims=True)
        return (dLdY - mean_g - centered * mean_gc / (var + self.epsilon)) / sigma
